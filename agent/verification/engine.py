"""Verify a draft answer against its evidence: every amount, percentage, date, time, quantity, contact and
brand, values given to the wrong subject, other vendors' names and completed-action claims. Code decides; an
optional judge may only clear a violation with a quote that literally occurs in the evidence and in which the
engine's own parser reads the value.
"""

import json
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, lru_cache

from agent.verification.brands import (
    EvidenceText,
    NameIndex,
    cached_name_index,
    find_misspellings,
    has_whole_word,
    name_patterns,
)
from agent.verification.claims import ACTION_LABELS, find_action_claims
from agent.verification.kinds import JUDGEABLE_KINDS, ViolationKind, kind_label
from agent.verification.mismatch import Attached, attach, find_swaps
from agent.verification.numbers import (
    Quantity,
    format_quantity,
    parse_quantities,
    quantity_values_among,
)
from agent.verification.other_vendors import (
    PRODUCT_MASK,
    OtherVendors,
    find_other_vendor_violations,
    masked_values_among,
)
from agent.verification.sentences import Sentence, split_sentences, text_without
from agent.verification.unknown_brands import find_unknown_brands
from agent.verification.values import (
    DATE,
    QUANTITY,
    TIME,
    Value,
    display,
    is_supported,
    parse_values,
    supported_in,
    value_keys_among,
)

OTHER_VENDOR_PLACEHOLDER = "[다른 벤더]"
SUPPORTED = "supported"


@dataclass(frozen=True)
class VerificationSettings:
    # Brands (and draft words) shorter than this get exact checks only, no one-character misspelling.
    min_fuzzy_brand_length: int = 3
    # Each judge call gets this long, all calls of one draft together too (they run in parallel).
    judge_timeout_seconds: float = 10.0
    # Violations past this many are not judged and stand.
    max_judge_calls: int = 10


DEFAULT_SETTINGS = VerificationSettings()


@dataclass(frozen=True, slots=True)
class Violation:
    kind: str
    value: int | float | str | None  # the number, the word as written (no particle), or None (claims)
    text: str  # the draft's text at ``span``
    span: tuple[int, int]
    reason: str  # short, for the rewrite prompt and the audit view
    suggestion: str | None = None

    def as_dict(self) -> dict:
        return {
            "kind": str(self.kind),
            "value": self.value,
            "text": self.text,
            "span": list(self.span),
            "reason": self.reason,
            "suggestion": self.suggestion,
        }


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """A judge's answer: ``verdict == "supported"`` with a ``quote`` from the evidence clears."""

    verdict: str
    quote: str = ""


@dataclass(frozen=True, slots=True)
class JudgeRuling:
    """What became of one violation put to the judge (for the audit trail)."""

    violation: Violation
    cleared: bool
    detail: str
    quote: str | None = None


Judge = Callable[[Violation, tuple[str, ...]], "JudgeVerdict | Mapping | str"]


@dataclass(frozen=True)
class VerificationResult:
    violations: tuple[Violation, ...]
    clean_text: str  # the draft without the sentences that hold a violation; "" when nothing is left
    quantities: tuple[Quantity, ...]  # every amount and percentage found in the draft
    judge_rulings: tuple[JudgeRuling, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict:
        return {
            "violations": [violation.as_dict() for violation in self.violations],
            "clean_text": self.clean_text,
            "quantities": [quantity.as_dict() for quantity in self.quantities],
        }


def verify_draft(
    draft: str,
    *,
    evidence: Iterable[str],
    known_brands: NameIndex | Iterable[str],
    counterpart_names: NameIndex | Iterable[str],
    other_vendor_names: OtherVendors | NameIndex | Iterable[str],
    confirmed_actions: Iterable[str],
    judge: Judge | None = None,
    settings: VerificationSettings = DEFAULT_SETTINGS,
    question: str = "",
    counterpart_brands: Iterable[str] = (),
    record_evidence: Iterable[str] = (),
) -> VerificationResult:
    """Check ``draft`` against ``evidence`` and return its violations and the text that is safe to send.

    Dates, times, quantities and contacts that ``question`` states count as support for the same values in
    the draft (a vendor asking about 100박스 may be answered about 100박스); amounts and percentages never do.

    ``counterpart_brands`` are the brands the counterpart's products carry (among ``known_brands``): a word one
    syllable off one of them is a misspelling anywhere in the draft, the evidence holding the brand or not.

    ``record_evidence``: the passages of ``evidence`` that are the counterpart's own records. A draft sentence
    that is one of their sentences word for word states what the record says ("… 2026-11-10에 계좌 이체로 지급
    완료했습니다"), so its completed-action words are the record's fact, not a claim of something the agent did.

    Name sets may be passed as ``NameIndex`` objects (built once by the caller) or as iterables, which
    are indexed once and cached by their contents.
    """
    evidence = tuple(evidence)
    brand_index = cached_name_index(known_brands)
    counterpart_index = cached_name_index(counterpart_names)
    confirmed = {str(action).strip().lower() for action in confirmed_actions}
    others = OtherVendors.of(other_vendor_names)

    quantities = tuple(parse_quantities(draft))
    values = tuple(parse_values(draft))
    counterpart_spans = [(match.start, match.end) for match in counterpart_index.find(draft)]
    # --- other vendors hook (agent/verification/other_vendors.py): names in every spelling, near misses, their
    # brands, sentences about a masked vendor, figures stated only about one. Kinds other_vendor, other_vendor_value.
    other_vendors = find_other_vendor_violations(
        draft,
        evidence=evidence,
        quantities=quantities,
        other_vendors=others,
        counterpart_names=counterpart_index.names,
        known_brands=brand_index.names,
        quantity_label=format_quantity,
    )
    brand_matches = [
        match
        for match in brand_index.find(draft)
        if not _overlaps_any(match.start, match.end, counterpart_spans + other_vendors.name_spans)
    ]
    # --- end of the other vendors hook
    evidence_text = EvidenceText.of(evidence)
    supported_pairs = quantity_values_among(evidence, quantities)
    value_support, by_question = _supported_values(values, evidence_text, question)

    violations = [
        *_unsupported_violations(
            quantities,
            [(quantity.kind, quantity.value) in supported_pairs for quantity in quantities],
            format_quantity,
        ),
        *_unsupported_violations(values, value_support, display),
        *_swap_violations(draft, quantities, values, value_support, evidence_text, supported_pairs),
        *(
            Violation(
                kind=ViolationKind.BRAND_UNSUPPORTED,
                value=match.text,
                text=match.text,
                span=(match.start, match.end),
                reason=f"근거에 없는 브랜드: {match.text}",
            )
            for match in brand_matches
            if not brand_index.occurs_in(match.name, evidence_text)
        ),
    ]
    names_taken = [(match.start, match.end) for match in brand_matches] + other_vendors.name_spans + counterpart_spans
    misspellings = _misspelling_violations(
        draft, evidence_text, brand_index, settings, _brand_names(tuple(counterpart_brands)), others, names_taken
    )
    other_vendor_violations = [Violation(**finding) for finding in other_vendors.violations]
    violations += [
        *misspellings,
        *other_vendor_violations,
        *_unknown_brand_violations(
            draft,
            evidence_text,
            question,
            brand_index,
            others,
            taken=names_taken + [violation.span for violation in (*misspellings, *other_vendor_violations)],
        ),
        *(
            Violation(**finding)
            for finding in masked_values_among(
                values,
                (stated and not asked for stated, asked in zip(value_support, by_question, strict=True)),
                other_vendors.judge_evidence,
            )
        ),
        *(
            Violation(
                kind=ViolationKind.ACTION_CLAIM,
                value=None,
                text=claim.text,
                span=(claim.start, claim.end),
                reason=f"확인되지 않은 {ACTION_LABELS[claim.kind]} 완료 표현: {claim.text}",
            )
            for claim in find_action_claims(draft)
            if claim.kind not in confirmed
        ),
    ]
    sentences = split_sentences(draft)
    violations = _without_quoted_record_claims(violations, sentences, record_evidence)
    rulings: tuple[JudgeRuling, ...] = ()
    if judge is not None:
        # The judge sees, and may quote, the evidence less what it states only about a masked vendor (hook).
        rulings = _judge_violations(judge, violations, other_vendors.judge_evidence or evidence, settings)
        cleared = {id(ruling.violation) for ruling in rulings if ruling.cleared}
        violations = [violation for violation in violations if id(violation) not in cleared]
    violations.sort(key=lambda violation: (violation.span, violation.kind))

    return VerificationResult(
        violations=tuple(violations),
        clean_text=text_without(draft, sentences, _sentences_holding(violations, sentences)),
        quantities=quantities,
        judge_rulings=rulings,
    )


# How a record's values line joins its `label: value` facts: `vendors.records.VALUE_SEPARATOR`, written out here
# because this package reads only text and imports no app.
_RECORD_VALUE_SEPARATOR = " · "


def _without_quoted_record_claims(
    violations: list[Violation], sentences: list[Sentence], record_evidence: Iterable[str]
) -> list[Violation]:
    """``violations`` less the action claims whose whole draft sentence is a sentence of a record passage, or one
    `label: value` fact of its values line (`상태: 지급 완료` of "정산액: … · 상태: 지급 완료")."""
    claims = [violation for violation in violations if violation.kind == ViolationKind.ACTION_CLAIM]
    if not claims:
        return violations
    record_sentences = {
        _compact(piece)
        for passage in record_evidence
        for sentence in split_sentences(passage)
        for piece in (sentence.text, *sentence.text.split(_RECORD_VALUE_SEPARATOR))
    }
    if not record_sentences:
        return violations
    quoted = set()
    for claim in claims:
        start, end = claim.span
        holding = [sentence for sentence in sentences if sentence.start <= start and end <= sentence.end]
        if holding and _compact(holding[0].text) in record_sentences:
            quoted.add(id(claim))
    return [violation for violation in violations if id(violation) not in quoted]


def _compact(text: str) -> str:
    return "".join(text.split())


def _sentences_holding(violations: list[Violation], sentences: list[Sentence]) -> set[int]:
    """Indexes of the sentences that overlap a violation (sentences are in order and do not overlap)."""
    ends = [sentence.end for sentence in sentences]
    holding = set()
    for violation in violations:
        start, end = violation.span
        index = bisect_right(ends, start)  # the first sentence that ends after the violation starts
        while index < len(sentences) and sentences[index].start < end:
            holding.add(index)
            index += 1
    return holding


def _supported_values(
    values: tuple[Value, ...], evidence: EvidenceText, question: str
) -> tuple[list[bool], list[bool]]:
    """For each date, time, quantity and contact of the draft, whether the question or an evidence passage
    states it, and whether the question does."""
    if not values:
        return [], []
    question_keys = value_keys_among((question,)) if question else frozenset()
    by_question = [is_supported(value, question_keys) for value in values]
    answers = list(by_question)
    unanswered = [index for index, answer in enumerate(answers) if not answer]
    if not (unanswered and evidence.passages):
        return answers, by_question
    found = supported_in([values[index] for index in unanswered], evidence.raw, lambda: evidence.folded)
    for index, answer in zip(unanswered, found, strict=True):
        answers[index] = answer
    return answers, by_question


def _unsupported_violations(
    found: Iterable[Quantity | Value], supported: Iterable[bool], shown: Callable[[Quantity | Value], str]
) -> list[Violation]:
    """The draft's amounts and percentages, or its dates, times, quantities and contacts, that no evidence passage
    (nor, for the latter, the question) states: ``supported`` says so per value, ``shown`` writes it for the
    reason."""
    return [
        Violation(
            kind=value.kind,
            value=value.value,
            text=value.raw,
            span=value.span,
            reason=f"근거에 없는 {kind_label(value.kind)}: {shown(value)}",
        )
        for value, is_stated in zip(found, supported, strict=True)
        if not is_stated
    ]


def _swap_violations(
    draft: str,
    quantities: tuple[Quantity, ...],
    values: tuple[Value, ...],
    value_support: list[bool],
    evidence: EvidenceText,
    supported_pairs: set,
) -> list[Violation]:
    """Values the evidence states, attached in the draft to a subject the evidence gives another value. The draft's
    values get their subjects, and the subjects are looked for in the evidence, only once the evidence is known
    to state some of the values."""
    # Quantities, dates and times by span and value (the weekdays of a list share a span).
    stated_values = {
        (value.span, value.raw, str(value.value))
        for value, stated in zip(values, value_support, strict=True)
        if stated and value.kind in (QUANTITY, DATE, TIME)
    }
    if not evidence.passages or not (supported_pairs or stated_values):
        return []

    def supported(attached: Attached) -> bool:
        if attached.group[0] in (QUANTITY, DATE, TIME):
            return (attached.span, attached.raw, str(attached.value)) in stated_values
        return (attached.group[0], attached.key) in supported_pairs

    return [
        Violation(
            kind=ViolationKind.VALUE_MISMATCH,
            value=swap.attached.value,
            text=swap.attached.raw,
            span=swap.attached.span,
            reason=f"다른 대상의 값: {swap.subject} {swap.attached.shown} (근거: {swap.expected.shown})",
            suggestion=swap.expected.shown,
        )
        for swap in find_swaps(attach(draft, quantities, values), evidence.raw, supported)
    ]


def _misspelling_violations(
    draft: str,
    evidence: EvidenceText,
    brand_index: NameIndex,
    settings: VerificationSettings,
    counterpart_brands: frozenset[str],
    other_vendors: OtherVendors,
    taken: list[tuple[int, int]],
) -> list[Violation]:
    """Words one character off a known brand (``find_misspellings``). Off a brand only other vendors carry, the
    word names that vendor's product: an `other_vendor` violation whose suggestion is the mask, never the brand."""
    others_only = _brand_names(other_vendors.brands) if other_vendors.checked else frozenset()
    misspellings = find_misspellings(
        draft,
        known_brands=brand_index,
        evidence=evidence,
        min_length=settings.min_fuzzy_brand_length,
        anywhere=counterpart_brands,
        last_resort=others_only,
    )
    found = []
    for misspelling in misspellings:
        if _overlaps_any(misspelling.start, misspelling.end, taken) or _is_vendor_name(misspelling.word, other_vendors):
            continue
        span = (misspelling.start, misspelling.end)
        if misspelling.brand in others_only:
            found.append(
                Violation(
                    kind=ViolationKind.OTHER_VENDOR,
                    value=misspelling.word,
                    text=misspelling.word,
                    span=span,
                    reason=f"다른 벤더 상품과 한 글자 다른 표기: {misspelling.word}",
                    suggestion=PRODUCT_MASK,
                )
            )
            continue
        found.append(
            Violation(
                kind=ViolationKind.BRAND_MISSPELT,
                value=misspelling.word,
                text=misspelling.word,
                span=span,
                reason=f"브랜드 표기 오류: {misspelling.word} → {misspelling.brand}",
                suggestion=misspelling.brand,
            )
        )
    return found


def _unknown_brand_violations(
    draft: str,
    evidence: EvidenceText,
    question: str,
    brand_index: NameIndex,
    other_vendors: OtherVendors,
    taken: list[tuple[int, int]],
) -> list[Violation]:
    return [
        Violation(
            kind=ViolationKind.BRAND_UNKNOWN,
            value=name.word,
            text=name.word,
            span=(name.start, name.end),
            reason=f"근거와 브랜드 목록 어디에도 없는 이름: {name.word}",
        )
        for name in find_unknown_brands(
            draft, evidence=evidence, question=question, known_brands=brand_index, taken=taken
        )
        if not _is_vendor_name(name.word, other_vendors)
    ]


@lru_cache(maxsize=256)
def _brand_names(brands: tuple[str, ...]) -> frozenset[str]:
    return frozenset(brands)


def _is_vendor_name(word: str, other_vendors: OtherVendors) -> bool:
    """Whether the word is a vendor's name. In a vendor room every vendor name in the draft is a span of its own
    already (the counterpart's kept, the others flagged); a staff room passes the names unchecked, for this."""
    if other_vendors.checked or not other_vendors.names:
        return False
    return bool(name_patterns(word) & _vendor_name_patterns(other_vendors.names))


@lru_cache(maxsize=4)
def _vendor_name_patterns(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(pattern for name in names for pattern in name_patterns(name))


def _overlaps(left: tuple[int, int], right: tuple[int, int]) -> bool:
    return left[0] < right[1] and right[0] < left[1]


def _overlaps_any(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(_overlaps((start, end), span) for span in spans)


@cache
def _judge_executor() -> ThreadPoolExecutor:
    # Shared by all drafts; a judge that hangs past its timeout keeps a worker busy, never the caller.
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="draft-judge")


def _judge_violations(
    judge: Judge,
    violations: list[Violation],
    evidence: tuple[str, ...],
    settings: VerificationSettings,
) -> tuple[JudgeRuling, ...]:
    judgeable = [violation for violation in violations if violation.kind in JUDGEABLE_KINDS]
    submitted = judgeable[: settings.max_judge_calls]
    rulings = [
        JudgeRuling(violation, False, "not judged: judge call limit reached")
        for violation in judgeable[len(submitted) :]
    ]
    futures = [(violation, _judge_executor().submit(judge, violation, evidence)) for violation in submitted]
    deadline = time.monotonic() + settings.judge_timeout_seconds
    for violation, future in futures:
        try:
            answer = future.result(timeout=max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            future.cancel()
            rulings.append(JudgeRuling(violation, False, "judge timed out"))
            continue
        except Exception as error:  # any failure of the judge counts as no evidence
            rulings.append(JudgeRuling(violation, False, f"judge failed: {type(error).__name__}: {error}"))
            continue
        rulings.append(rule_on_answer(violation, answer, evidence))
    return tuple(rulings)


def rule_on_answer(violation: Violation, answer: object, evidence: tuple[str, ...]) -> JudgeRuling:
    """Whether a judge's answer clears ``violation``: only "supported" with a valid quote does."""
    verdict, quote = _read_answer(answer)
    if verdict is None:
        return JudgeRuling(violation, False, "judge answer unparseable")
    if verdict.strip().lower() != SUPPORTED:
        return JudgeRuling(violation, False, f"judge verdict {verdict!r}", quote)
    if not quote or not quote.strip():
        return JudgeRuling(violation, False, "supported without a quote", quote)
    if not any(quote in passage for passage in evidence):
        return JudgeRuling(violation, False, "quote not found in the evidence", quote)
    if not _quote_contains_value(quote, violation, evidence):
        return JudgeRuling(violation, False, "quote does not contain the value", quote)
    return JudgeRuling(violation, True, "cleared by a quote from the evidence", quote)


def _read_answer(answer: object) -> tuple[str | None, str | None]:
    if isinstance(answer, JudgeVerdict):
        answer = {"verdict": answer.verdict, "quote": answer.quote}
    elif isinstance(answer, str | bytes):
        try:
            answer = json.loads(answer)
        except ValueError:
            return None, None
    if not isinstance(answer, Mapping):
        return None, None
    verdict, quote = answer.get("verdict"), answer.get("quote")
    if not isinstance(verdict, str) or not (quote is None or isinstance(quote, str)):
        return None, None
    return verdict, quote


def _quote_contains_value(quote: str, violation: Violation, evidence: tuple[str, ...]) -> bool:
    """Whether some occurrence of the quote in an evidence passage states the violation's value.

    Values are read by the engine's own parser in the passage (so a quote cannot cut "3,400원" out of
    "12만 3,400원"), and only those lying wholly inside the quote count: the same kind and the same
    normalised value ("6박스" is no percentage, 8원 is not 8%). A brand counts only as a whole word of
    the quote, a particle allowed after it, never joined across spaces or out of a longer word."""
    for passage in evidence:
        start = passage.find(quote)
        while start != -1:
            end = start + len(quote)
            if _states_value(passage, start, end, violation):
                return True
            start = passage.find(quote, start + 1)
    return False


def _states_value(passage: str, start: int, end: int, violation: Violation) -> bool:
    if violation.kind in (ViolationKind.BRAND_UNSUPPORTED, ViolationKind.BRAND_MISSPELT):
        return has_whole_word(passage, str(violation.value), start, end)
    found = [*parse_quantities(passage), *parse_values(passage)]
    return any(
        value.kind == violation.kind
        and value.value == violation.value
        and start <= value.span[0]
        and value.span[1] <= end
        for value in found
    )
