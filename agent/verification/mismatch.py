"""Swapped values: a draft that uses only true numbers and still attaches one to the wrong subject.

In a text a value belongs to the subject written with it: the words of the nearest stretch before it in the same
clause that holds words ("솔빛 고등어캔 400g 4,800원": both values belong to 솔빛 고등어캔). Clauses end at
``, · / ; ( )``, at sentence ends and at line ends, never inside a value (a number, a date, a URL); a table row
is one line, so its cells belong to the subject in its first cells. A draft value is a swap when its subject is
one the evidence gives exactly one value of that kind and dimension, the draft's value differs, and the evidence
gives the draft's value to another subject. Precision comes first: a subject is a product-like word (three or
more syllables, or letters with digits: an SKU or a model) or two words written together as the evidence writes
them, and every such subject of the draft's stretch must agree.
"""

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import ahocorasick

from agent.verification.korean import strip_particle_variants
from agent.verification.numbers import Quantity, format_quantity, parse_quantities, value_signature
from agent.verification.values import QUANTITY, Value, clause_bounds, display, parse_values

# Clause breaks (a table row is one line: its cells are one clause); . ! ? only before a space or the end.
_BREAK_RE = re.compile(r"[,·/;()\n.!?]")
_WORD_RE = re.compile(r"[A-Za-z0-9가-힣][A-Za-z0-9가-힣\-_+&.]*")
_HAS_HANGUL = re.compile(r"[가-힣]")
_HAS_LATIN = re.compile(r"[A-Za-z]")
_HAS_DIGIT = re.compile(r"[0-9]")
# Words that name what a value is, not whose it is: they never make a subject on their own.
_ATTRIBUTE_WORDS = frozenset(
    (
        "단가",
        "가격",
        "공급가",
        "판매가",
        "납품가",
        "소비자가",
        "정상가",
        "행사가",
        "할인가",
        "할인",
        "할인율",
        "금액",
        "비용",
        "요금",
        "배송비",
        "수수료",
        "최소",
        "최대",
        "주문",
        "수량",
        "기준",
        "행사",
        "적용",
        "이상",
        "이하",
        "미만",
        "초과",
        "약",
        "총",
        "각",
        "개당",
        "박스당",
        "기간",
        "조건",
        "현재",
        "기존",
        "변경",
        "경우",
        "이번",
        "다음",
        "지난",
        "올해",
        "매월",
        "매주",
        "문의",
        "안내",
        "참고",
        "상품",
        "제품",
        "가능",
        "모두",
        "각각",
        "전체",
        "일반",
        "신규",
        "특별",
    )
)
_WINDOW_CHARS = 200
# A subject written more often than this in the evidence is a brand or a vendor, not one product or record.
_MAX_SUBJECT_OCCURRENCES = 3
# A subject's values are looked for in its sentence, with the rows of a table around it (rows are short lines).
_SENTENCE_ENDS = ("\n\n", ". ", ".\n")
_WORD_CHAR_RE = re.compile(r"[A-Za-z0-9가-힣]")
_NOT_SIGNIFICANT_RE = re.compile(r"[^1-9]+")
_MEMO_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Attached:
    """A value with the subject words it belongs to."""

    group: tuple  # kind and dimension: ("amount",), ("percent",), ("quantity", "weight") ...
    key: object  # the normalised value within the group
    shown: str  # as a reason or suggestion shows it: 4,800원, 15%, 400g
    subject: tuple[str, ...]  # the subject's words, particles removed, in order
    span: tuple[int, int]
    value: object  # the interface value (a number, or {"value", "unit"})
    raw: str


@dataclass(frozen=True, slots=True)
class Swap:
    attached: Attached  # the draft's value
    subject: str  # the subject that the evidence gives another value
    expected: Attached  # the evidence's value for that subject


def _stems(words: Iterable[str]) -> tuple[str, ...]:
    """Each word without its particle, keeping two characters at least ("가을" is not 가 + 을)."""
    return tuple(next((v for v in reversed(strip_particle_variants(word)) if len(v) >= 2), word) for word in words)


def _group_and_key(item: Quantity | Value) -> tuple[tuple, object, str]:
    if isinstance(item, Quantity):
        return (str(item.kind),), item.value, format_quantity(item)
    return (QUANTITY, item.dimension), (item.number, item.unit), display(item)


@lru_cache(maxsize=_MEMO_SIZE)
def attachments(text: str) -> tuple[Attached, ...]:
    """Every exact amount, percentage and quantity of ``text`` with the subject it belongs to (remembered per
    text: evidence stretches recur across drafts and rounds)."""
    return attach(text, parse_quantities(text), parse_values(text))


def attach(text: str, quantities: Iterable[Quantity], values: Iterable[Value]) -> tuple[Attached, ...]:
    """``attachments`` of a text already parsed into its amounts and percentages and its other values."""
    quantities = [quantity for quantity in quantities if not quantity.approx]
    values = list(values)
    items = sorted([*quantities, *(value for value in values if value.kind == QUANTITY)], key=lambda item: item.span)
    if not items:
        return ()
    # Values are blanked out: their digits, commas and dots are neither words nor clause breaks.
    blanked = _blanked(text, sorted([*(quantity.span for quantity in quantities), *(value.span for value in values)]))
    breaks = [
        match.end()
        for match in _BREAK_RE.finditer(blanked)
        if match.group() not in ".!?" or match.end() == len(text) or text[match.end()].isspace()
    ]
    found = []
    subject: tuple[str, ...] = ()
    cursor = 0
    for item in items:
        start, end = item.span
        segment_start = cursor
        last_break = bisect_right(breaks, start) - 1
        if last_break >= 0 and breaks[last_break] > cursor:  # a new clause: the subject before it is not this one's
            subject, segment_start = (), breaks[last_break]
        words = _WORD_RE.findall(blanked, segment_start, start)
        stems = tuple(stem for stem in _stems(words) if _HAS_HANGUL.search(stem) or _HAS_LATIN.search(stem))
        if stems and (not subject or _subjects_of(stems)):
            subject = stems
        elif stems:  # attribute words only ("고등어캔 400g 단가 4,800원"): still the same subject
            subject = (*subject, *stems)
        # else the value follows another one ("400g 4,800원") and shares its subject
        group, key, shown = _group_and_key(item)
        found.append(Attached(group, key, shown, subject, (start, end), item.value, item.raw))
        cursor = end
    return tuple(found)


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the given spans (sorted) replaced by spaces."""
    parts = []
    position = 0
    for start, end in spans:
        start = max(start, position)
        if end > start:
            parts.append(text[position:start])
            parts.append(" " * (end - start))
            position = end
    parts.append(text[position:])
    return "".join(parts)


def _subjects_of(words: tuple[str, ...]) -> list[str]:
    """The product-like subjects among a stretch's words: single words of three or more syllables or with
    letters and digits (SKUs, models), and pairs of adjacent words (a brand and a product noun, a two-word
    title such as 가을 행사) — never a word or a pair that only names attributes (단가, 할인율, 최소 주문 ...)."""
    subjects = []
    for word in words:
        if word in _ATTRIBUTE_WORDS:
            continue
        hangul = len(_HAS_HANGUL.findall(word))
        if hangul >= 3 or (_HAS_DIGIT.search(word) and _HAS_LATIN.search(word)) or (hangul == 0 and len(word) >= 3):
            subjects.append(word)
    for left, right in pairwise(words):
        if (left not in _ATTRIBUTE_WORDS or right not in _ATTRIBUTE_WORDS) and len(left) >= 2 and len(right) >= 2:
            subjects.append(f"{left} {right}")
    return subjects


def _has_subject(attached: Attached, subject: str) -> bool:
    words = subject.split(" ")
    if len(words) == 1:
        return subject in attached.subject
    return any(attached.subject[index : index + len(words)] == tuple(words) for index in range(len(attached.subject)))


def _occurrences(text: str, subjects: Iterable[str]) -> dict[str, list[int]]:
    """Where each subject starts in ``text``, as a word ("고등어캔" not inside "참고등어캔"), from one pass."""
    automaton = ahocorasick.Automaton()
    for subject in subjects:
        automaton.add_word(subject, subject)
    automaton.make_automaton()
    found: dict[str, list[int]] = {}
    for last, subject in automaton.iter(text):
        start = last - len(subject) + 1
        if start == 0 or not _WORD_CHAR_RE.match(text[start - 1]):
            found.setdefault(subject, []).append(start)
    return found


def _signatures(attached: Attached) -> set[str]:
    """The non-zero digits, in order, that every written form of the value holds (3,900원 and 3천9백원: "39";
    1.5L and 1,500ml: "15"); a number of months also as years (12개월: "12" and 1년: "1")."""
    number = attached.key[0] if attached.group[0] == QUANTITY else attached.key
    signatures = {value_signature(number)}
    if attached.group == (QUANTITY, "months") and number % 12 == 0:
        signatures.add(value_signature(number // 12))
    return signatures


def _sentences_around(text: str, start: int, end: int) -> str:
    """The sentence holding ``text[start:end]`` with the sentence before and the one after it."""
    left, right = clause_bounds(text, start, end, _WINDOW_CHARS, _SENTENCE_ENDS)
    if left > 2:
        left = clause_bounds(text, left - 3, left - 2, _WINDOW_CHARS, _SENTENCE_ENDS)[0]
    if right + 2 < len(text):
        right = clause_bounds(text, right + 1, right + 2, _WINDOW_CHARS, _SENTENCE_ENDS)[1]
    return text[left:right]


def find_swaps(drafted: Iterable[Attached], evidence: str, supported: Callable[[Attached], bool]) -> list[Swap]:
    """Those of the draft's values (``attach``-ed) that are attached to a subject that ``evidence`` (the passages
    joined by line breaks) gives exactly one other value, while it gives the draft's value to another subject
    (see the module)."""
    candidates = []
    for attached in drafted:
        if attached.subject and supported(attached) and (subjects := _subjects_of(attached.subject)):
            candidates.append((attached, subjects))
    if not candidates:
        return []
    occurrences = _occurrences(evidence, {subject for _, subjects in candidates for subject in subjects})
    swaps = []
    for attached, subjects in candidates:
        resolved: dict[str, Attached] = {}
        partner_found = False
        for subject in subjects:
            starts = occurrences.get(subject, ())
            if not starts or len(starts) > _MAX_SUBJECT_OCCURRENCES:
                continue  # absent, or a name the evidence writes everywhere (a brand, a vendor): not one subject
            own, partner = _evidence_values(evidence, subject, starts, attached)
            if own is not None:
                resolved[subject] = own
                partner_found = partner_found or partner
        if len({item.key for item in resolved.values()}) != 1:
            continue  # no subject the evidence pins down, or subjects that disagree
        expected = next(iter(resolved.values()))
        if expected.key != attached.key and partner_found:
            swaps.append(Swap(attached, max(resolved, key=len), expected))
    return swaps


def _evidence_values(
    evidence: str, subject: str, starts: list[int], attached: Attached
) -> tuple[Attached | None, bool]:
    """The one value of the draft value's kind and dimension that the evidence attaches to ``subject`` (None when
    it attaches none or several: the search stops at the second), and whether a sentence around the subject
    attaches the draft's value to another product-like subject."""
    windows = list(dict.fromkeys(_sentences_around(evidence, start, start + len(subject)) for start in starts))
    signatures = _signatures(attached)
    if not any(signature in _NOT_SIGNIFICANT_RE.sub("", window) for window in windows for signature in signatures):
        return None, False  # the draft's value is written nowhere near the subject: no other subject has it there
    own: Attached | None = None
    partner = False
    for window in windows:
        for item in attachments(window):
            if item.group != attached.group:
                continue
            if _has_subject(item, subject):
                if own is not None and own.key != item.key:
                    return None, False
                own = own or item
            elif item.key == attached.key and _subjects_of(item.subject):
                partner = True
    return own, partner
