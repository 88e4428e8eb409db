"""Other vendors in a vendor room's answer: their names in every spelling, near misses of them, their brands,
sentences about a masked vendor, and figures the evidence states only about a masked vendor.

Pure, like the rest of the engine. `NameSpotter` is also what masks evidence and prompts
(`agent.knowledge.masking`), so what masking hides and what the final-text check catches are one definition.

Names are matched in folded text (`vendors.name_folding`): `가온 상사`, `가온\\u200b상사`, `ㄱㅏ온상사`,
`GAON  SANGSA` and `gaon-sangsa` are all the name. A match written without a separator inside is accepted anywhere,
inside compound words too (`가온상사측`); one that needs a separator dropped must start a word, and when the name
is two characters, end one too (particles may follow) — `대한 빛깔` is not the vendor `한빛`.
"""

import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import ahocorasick
from rapidfuzz.distance import Levenshtein

from agent.verification.brands import EvidenceText
from agent.verification.edits import Alphabet
from agent.verification.korean import (
    MAX_PARTICLE_LENGTH,
    fold,
    is_hangul_syllable,
    is_latin_or_digit,
    is_particle,
    strip_particle_variants,
)
from agent.verification.numbers import Quantity, quantity_values_among
from agent.verification.sentences import split_sentences
from agent.verification.values import Value, display, supported_in
from vendors.name_folding import FoldedText, fold_name, folded_text

OTHER_VENDOR = "other_vendor"
OTHER_VENDOR_VALUE = "other_vendor_value"
VENDOR_MASK = "[다른 벤더]"
PRODUCT_MASK = "[다른 벤더 상품]"
MIN_NAME_LENGTH = 2
# Names (and draft words) shorter than this get exact checks only, no one-syllable near miss.
MIN_NEAR_MISS_LENGTH = 3
# Legal-form marks, folded: a name counts with and without them.
_CORPORATE_MARKS = ("(주)", "(유)", "주식회사", "유한회사")

COUNTERPART = "counterpart"  # owner tag of the counterpart's own names in a spotter
KNOWN_BRAND = "known_brand"  # owner tag of a brand that may be named


def name_forms(name: str) -> set[str]:
    """The folded forms a name is matched by: as written and without corporate marks; shorter ones dropped."""
    folded = fold_name(name)
    core = folded
    for mark in _CORPORATE_MARKS:
        core = core.replace(mark, "")
    return {form for form in (folded, core) if len(form) >= MIN_NAME_LENGTH}


@dataclass(frozen=True, slots=True)
class Spot:
    start: int  # span in the original text
    end: int
    length: int  # of the matched name, folded
    owners: frozenset


def _char_class(char: str) -> int:
    if is_hangul_syllable(char):
        return 1
    if is_latin_or_digit(char):
        return 2
    return 0


def _starts_word(folded: FoldedText, start: int) -> bool:
    text = folded.folded
    return start == 0 or start in folded.gaps or _char_class(text[start - 1]) != _char_class(text[start])


def _ends_word(folded: FoldedText, end: int) -> bool:
    text = folded.folded
    if end == len(text) or end in folded.gaps or _char_class(text[end]) != _char_class(text[end - 1]):
        return True
    if not is_hangul_syllable(text[end]):
        return False
    run_end = end
    while run_end < len(text) and is_hangul_syllable(text[run_end]) and (run_end == end or run_end not in folded.gaps):
        run_end += 1
    return is_particle(text[end:run_end])


class NameSpotter:
    """One Aho-Corasick automaton over folded names, each with the set of its owners (any hashable tags). Build it
    once per name set and share it (read-only)."""

    def __init__(self, entries: Iterable[tuple[str, Hashable]]):
        owners: dict[str, set] = {}
        for name, owner in entries:
            if isinstance(name, str):
                for form in name_forms(name):
                    owners.setdefault(form, set()).add(owner)
        self.pattern_count = len(owners)
        self._owners = {pattern: frozenset(tags) for pattern, tags in owners.items()}
        self._patterns_by_owner: dict[Hashable, frozenset[str]] = {}
        self._automaton = ahocorasick.Automaton()
        for pattern, tags in owners.items():
            self._automaton.add_word(pattern, (len(pattern), frozenset(tags)))
        if owners:
            self._automaton.make_automaton()

    def patterns_of(self, owner: Hashable) -> frozenset[str]:
        """The folded patterns `owner` is among the owners of (worked out once per owner)."""
        if owner not in self._patterns_by_owner:
            self._patterns_by_owner[owner] = frozenset(p for p, tags in self._owners.items() if owner in tags)
        return self._patterns_by_owner[owner]

    def spots(self, folded: FoldedText, *, short_names_as_words: bool = False) -> list[Spot]:
        """Every occurrence of every name (overlapping ones too), by original span. With `short_names_as_words`,
        two-character names match only as words (particles may follow), written with a separator or not: the
        final-text check does not flag the alias `한빛` inside `한빛나래`; masking, on the safe side, does."""
        if not self.pattern_count or not folded.folded:
            return []
        found = []
        for last, (length, tags) in self._automaton.iter(folded.folded):
            start, end = last - length + 1, last + 1
            short = length <= MIN_NAME_LENGTH
            if (folded.has_gap(start, end) or (short and short_names_as_words)) and not (
                _starts_word(folded, start) and (not short or _ends_word(folded, end))
            ):
                continue
            found.append(Spot(*folded.span(start, end), length, tags))
        return found


def select_spots(spots: Iterable[Spot], is_kept) -> list[tuple[Spot, bool]]:
    """Accepted (spot, kept) pairs in text order: longest first, then leftmost, never overlapping. Spots of one span
    are one spot with their owners together; on a tie in length a spot that is not kept wins over a kept one (the
    counterpart's name, a brand), so a leak is never the tie-break. A kept spot still blocks shorter ones inside
    it: the counterpart `가온상사유통` does not hide another vendor's `가온상사` in it."""
    merged: dict[tuple[int, int], Spot] = {}
    for spot in spots:
        key = (spot.start, spot.end)
        if key in merged:
            known = merged[key]
            spot = Spot(spot.start, spot.end, max(spot.length, known.length), known.owners | spot.owners)
        merged[key] = spot
    ranked = sorted(((spot, is_kept(spot)) for spot in merged.values()), key=lambda s: (-s[0].length, s[1], s[0].start))
    taken: list[tuple[int, int]] = []
    accepted = []
    for spot, kept in ranked:
        if any(spot.start < end and start < spot.end for start, end in taken):
            continue
        taken.append((spot.start, spot.end))
        accepted.append((spot, kept))
    accepted.sort(key=lambda pair: pair[0].start)
    return accepted


@dataclass(frozen=True)
class OtherVendors:
    """What a vendor room's answer must not show of other vendors: their names and aliases (the counterpart's own
    may be among them: those are kept) and the brands only other vendors carry. `checked=False` (a staff room)
    switches every other-vendor check off."""

    names: tuple[str, ...] = ()
    brands: tuple[str, ...] = ()
    checked: bool = True

    @classmethod
    def of(cls, value) -> "OtherVendors":
        """From what `verify_draft` accepts: an OtherVendors, a NameIndex (its names) or an iterable of names."""
        if isinstance(value, OtherVendors):
            return value
        names = getattr(value, "names", value)
        return cls(names=tuple(names))


@lru_cache(maxsize=16)
def _spotter(names: tuple[str, ...], known_brands: tuple[str, ...]) -> NameSpotter:
    """Every vendor's names, and every known brand, kept (and blocking shorter names inside it) unless it is also
    flagged: the brand `한빛식품` is not the vendor alias `한빛`. The same for every counterpart (built once)."""
    return NameSpotter([*((name, "vendor") for name in names), *((brand, KNOWN_BRAND) for brand in known_brands)])


# The last spotters handed out, with the very name tuples they were asked for: a worker passes the same tuples
# draft after draft, and this finds them by identity, where the cache above hashes every name of both on each call.
# Replaced whole, never changed in place, so threads read it safely; holding the tuples keeps their ids unique.
_RECENT_SPOTTERS_SIZE = 4
_recent_spotters: tuple[tuple[tuple[str, ...], tuple[str, ...], NameSpotter], ...] = ()


def _shared_spotter(names: tuple[str, ...], known_brands: tuple[str, ...]) -> NameSpotter:
    global _recent_spotters
    for recent_names, recent_brands, spotter in _recent_spotters:
        if recent_names is names and recent_brands is known_brands:
            return spotter
    spotter = _spotter(names, known_brands)
    _recent_spotters = ((names, known_brands, spotter), *_recent_spotters[: _RECENT_SPOTTERS_SIZE - 1])
    return spotter


def other_vendor_check_prepare(other_vendors, known_brands: Iterable[str]) -> None:
    """Build the shared automaton of a name set ahead of the first draft (a worker's start-up)."""
    _spotter(OtherVendors.of(other_vendors).names, tuple(known_brands))


@lru_cache(maxsize=256)
def _brand_spotter(brands: tuple[str, ...]) -> NameSpotter:
    """The brands only other vendors carry: a few per counterpart."""
    return NameSpotter((brand, "brand") for brand in brands)


@lru_cache(maxsize=256)
def _counterpart_spotter(names: tuple[str, ...]) -> NameSpotter:
    return NameSpotter((name, COUNTERPART) for name in names)


# Words whose near misses one name set remembers before it starts afresh.
_NEAR_MISS_MEMO_SIZE = 50_000


class _NearMisses:
    """The vendor names of a name set long enough for near misses, by symmetric-deletion key (two words one edit
    apart share a key), and per draft word its suspects, remembered: drafts share most of their words. The answers
    depend on the word and the name set alone (another set is another object); shared between threads, a race
    costs a repeated look-up, never a wrong answer."""

    def __init__(self, vendor_patterns: frozenset[str], brand_forms: frozenset[str]):
        keys: dict[str, list[str]] = {}
        for pattern in vendor_patterns:
            if len(pattern) >= MIN_NEAR_MISS_LENGTH:
                for key in _deletion_keys(pattern):
                    keys.setdefault(key, []).append(pattern)
        self.keys = {key: tuple(found) for key, found in keys.items()}
        # A word one edit from a name is at most one character longer or shorter than it.
        self._lengths = frozenset(
            length
            for pattern in vendor_patterns
            if len(pattern) >= MIN_NEAR_MISS_LENGTH
            for length in (len(pattern) - 1, len(pattern), len(pattern) + 1)
        )
        # A word longer than this has no form, with or without a particle, one edit from a name.
        self._longest_word = max(self._lengths, default=0) + MAX_PARTICLE_LENGTH
        self._vendor_patterns = vendor_patterns
        self._brand_forms = brand_forms
        self._alphabet = Alphabet(pattern for pattern in vendor_patterns if len(pattern) >= MIN_NEAR_MISS_LENGTH)
        self._suspects: dict[str, tuple[str, ...]] = {}  # words that have suspects
        self._quiet: set[str] = set()  # words that have none: most of every draft

    def suspects(self, word: str) -> tuple[str, ...]:
        """The forms of the folded `word`, with and without each particle, long enough for a near miss, not a
        vendor's name nor a known brand, and one edit from a vendor's name."""
        if (known := self._suspects.get(word)) is not None:
            return known
        if word in self._quiet:
            return ()
        found = self._find_suspects(word) if len(word) <= self._longest_word else ()
        if found:
            if len(self._suspects) >= _NEAR_MISS_MEMO_SIZE:
                self._suspects.clear()
            self._suspects[word] = found
        else:
            if len(self._quiet) >= _NEAR_MISS_MEMO_SIZE:
                self._quiet.clear()
            self._quiet.add(word)
        return found

    def _find_suspects(self, word: str) -> tuple[str, ...]:
        # Every form of the word, with or without a particle, begins with this: two characters in it that no name
        # holds put all of them beyond one edit (most new words: numbers, other syllables, words joined to them).
        if self._alphabet.is_beyond_one_edit(word[: max(1, len(word) - MAX_PARTICLE_LENGTH)]):
            return ()
        return tuple(
            variant
            for variant in strip_particle_variants(word)
            if len(variant) >= MIN_NEAR_MISS_LENGTH
            and variant not in self._vendor_patterns
            and variant not in self._brand_forms
            and self._one_edit_from_a_name(variant)
        )

    def with_suspects(self, words: list[str]) -> list[tuple[int, tuple[str, ...]]]:
        """``(index, suspects)`` of the words that have suspects, in order. Words known to have none are taken out
        by one set difference (a draft is mostly words seen before), the rest looked up once each."""
        new = set(words).difference(self._quiet)
        if not new:
            return []
        found = {word: suspects for word in new if (suspects := self.suspects(word))}
        if not found:
            return []
        return [(index, found[word]) for index, word in enumerate(words) if word in found]

    def _one_edit_from_a_name(self, word: str) -> bool:
        if len(word) not in self._lengths or self._alphabet.is_beyond_one_edit(word):
            return False
        candidates = {pattern for key in _deletion_keys(word) for pattern in self.keys.get(key, ())}
        return any(Levenshtein.distance(word, pattern, score_cutoff=1) == 1 for pattern in candidates)


@lru_cache(maxsize=16)
def _near_misses_of(vendor_patterns: frozenset[str], brand_forms: frozenset[str]) -> _NearMisses:
    return _NearMisses(vendor_patterns, brand_forms)


def _deletion_keys(word: str) -> set[str]:
    return {word, *(word[:index] + word[index + 1 :] for index in range(len(word)))}


@dataclass
class OtherVendorFindings:
    violations: list[dict] = field(default_factory=list)  # Violation fields
    name_spans: list[tuple[int, int]] = field(default_factory=list)  # other vendors' and the counterpart's names
    # The evidence with its clauses about a masked vendor blanked, when it has any: what a judge may quote.
    judge_evidence: tuple[str, ...] = ()


# A mask the evidence or a draft may hold. A model may respell it.
_MASK_RE = re.compile(r"\[\s*다른\s*벤더(?:\s*상품)?\s*\]")
# Words for "that / another supplier" a draft may use for a masked vendor.
_REFERENCE_RE = re.compile(
    r"(?<![가-힣])(?:(?:해당|다른|타|기타|특정|일부|모|경쟁|동종|여타)\s*"
    r"(?:협력\s*업체|협력사|거래처|업체|벤더|회사|공급\s*업체|공급사|납품\s*업체|납품사|파트너사|매입처)|타사)"
)
# After a reference: it is the subject or topic of a claim (`해당 협력사는 …`, `다른 거래처보다 …`).
_CLAIM_PARTICLE_RE = re.compile(
    r"(?:은|는|이|가|도|에서는|에서|측은|측에서는|측|쪽은|보다|처럼|만큼|대비|와|과)(?![가-힣])"
)
_DIGIT_RE = re.compile(r"[0-9]")
# A mask the clause is about: the subject, topic or owner of what follows (`[다른 벤더]는/가/의 …`).
_ABOUT_FOLLOWS = r"(?=(?:은|는|이|가|의|도|에서는|에서|측은|측의|측)(?![가-힣]))"
_ABOUT_VENDOR_RE = re.compile(re.escape(VENDOR_MASK) + _ABOUT_FOLLOWS)
# Where a clause about a masked vendor or product may start: a product mask, or a vendor mask the clause is about.
# One literal-led pattern (both masks start alike), which the regex engine scans for faster than str.find goes
# from mask to mask (a passage may hold many a `[다른 벤더]` that no clause is about).
_MASKED_CLAUSE_START_RE = re.compile(
    f"{re.escape(VENDOR_MASK[:-1])}(?:{re.escape(PRODUCT_MASK.removeprefix(VENDOR_MASK[:-1]))}|\\]{_ABOUT_FOLLOWS})"
)
_PRODUCT_MASK_RE = re.compile(re.escape(PRODUCT_MASK))
# A product mask heads its clause unless it is one of a list of examples (`[다른 벤더 상품], … 같은`).
_PRODUCT_EXAMPLE_RE = re.compile(r"\s*(?:,|、|및|와|과|등|같은|처럼|이나|나|또는)")


# A vendor's question about another vendor: the mask is its topic or subject (`[다른 벤더]는 … 얼마에 넣어요?`,
# `[다른 벤더] 쪽이 … 넣는 단가`), not where its own goods went (`[다른 벤더] 통해서 들어가던 물량`). Narrower than
# `_ABOUT_FOLLOWS` for evidence clauses: in a question, `[다른 벤더]에서 받던 물량` is the asker's own route.
_ASKS_ABOUT_VENDOR_RE = re.compile(re.escape(VENDOR_MASK) + r"\s*(?:쪽|측)?(?:은|는|이|가|의|도)(?![가-힣])")


def asks_about_masked_vendor(masked_question: str) -> bool:
    """Whether a masked question asks about another vendor: neither that vendor's facts (never shown) nor the
    asking vendor's own (which would read as the other's) answer it."""
    return _ASKS_ABOUT_VENDOR_RE.search(masked_question) is not None


@lru_cache(maxsize=4096)  # a question's rounds check their drafts against the same passages
def about_masked_clauses(passage: str) -> tuple[tuple[int, int], ...]:
    """Spans of the clauses of `passage` about a masked vendor or product: from the mask to its sentence's end."""
    if VENDOR_MASK[:-1] not in passage:  # both masks start like this
        return ()
    starts = [match.start() for match in _ABOUT_VENDOR_RE.finditer(passage)]
    for match in _PRODUCT_MASK_RE.finditer(passage):
        if not _PRODUCT_EXAMPLE_RE.match(passage, match.end()):
            starts.append(match.start())
    if not starts:
        return ()
    sentences = split_sentences(passage)
    spans = []
    for start in sorted(starts):
        end = next((sentence.end for sentence in sentences if sentence.start <= start < sentence.end), len(passage))
        spans.append((start, end))
    return tuple(spans)


def _may_hold_masked_clauses(evidence: tuple[str, ...]) -> bool:
    """Whether some passage may hold a clause about a masked vendor or product: one search of the passages joined
    (the text the engine checks its values in), not one per passage; a mask and its particle never span lines."""
    return _MASKED_CLAUSE_START_RE.search(EvidenceText.of(evidence).raw) is not None


def _blanked(passage: str, spans: tuple[tuple[int, int], ...]) -> str:
    parts, cursor = [], 0
    for start, end in spans:
        if start < cursor:
            start = cursor
        parts.append(passage[cursor:start])
        parts.append(" " * max(0, end - start))
        cursor = max(cursor, end)
    parts.append(passage[cursor:])
    return "".join(parts)


def find_other_vendor_violations(
    draft: str,
    *,
    evidence: tuple[str, ...],
    quantities: Iterable[Quantity],
    other_vendors,
    counterpart_names: Iterable[str],
    known_brands: Iterable[str],
    quantity_label,
) -> OtherVendorFindings:
    """Everything a vendor room's draft shows of other vendors, as Violation fields (kinds `other_vendor`, and
    `other_vendor_value` of amounts and percentages: `masked_values_among` gives it for the other kinds, whose
    support the engine finds later). `quantity_label(quantity)` formats a value for a reason."""
    other_vendors = OtherVendors.of(other_vendors)
    findings = OtherVendorFindings()
    if not other_vendors.checked:
        return findings
    folded = FoldedText(draft)
    counterpart = tuple(counterpart_names)
    spotter = _shared_spotter(other_vendors.names, tuple(known_brands))
    spots = [
        *spotter.spots(folded, short_names_as_words=True),
        *_brand_spotter(other_vendors.brands).spots(folded, short_names_as_words=True),
        *_counterpart_spotter(counterpart).spots(folded, short_names_as_words=True),
    ]
    for spot, kept in select_spots(spots, lambda spot: COUNTERPART in spot.owners or spot.owners == {KNOWN_BRAND}):
        if spot.owners == {KNOWN_BRAND}:
            continue  # a brand that may be named: the brand checks' business
        findings.name_spans.append((spot.start, spot.end))
        if kept:
            continue
        text = draft[spot.start : spot.end]
        is_brand = "vendor" not in spot.owners
        findings.violations.append(
            {
                "kind": OTHER_VENDOR,
                "value": text,
                "text": text,
                "span": (spot.start, spot.end),
                "reason": f"다른 벤더 상품: {text}" if is_brand else f"다른 벤더 이름: {text}",
                "suggestion": PRODUCT_MASK if is_brand else VENDOR_MASK,
            }
        )
    findings.violations.extend(_near_misses(draft, folded, spotter, counterpart, evidence, taken=findings.name_spans))
    findings.violations.extend(_references(draft, taken=findings.name_spans))
    clauses = [about_masked_clauses(passage) for passage in evidence] if _may_hold_masked_clauses(evidence) else []
    if any(clauses):
        outside = tuple(_blanked(passage, spans) for passage, spans in zip(evidence, clauses, strict=True))
        findings.violations.extend(_masked_values(evidence, outside, tuple(quantities), quantity_label))
        findings.judge_evidence = outside
    return findings


# A run of one class of letters (see _char_class): Hangul syllables, or ASCII letters and digits.
_LETTER_RUN_RE = re.compile("[가-힣]+|[A-Za-z0-9]+")


def _words(folded: FoldedText) -> list[tuple[int, int]]:
    """Folded spans of the words (runs of one class of letters, no separator inside), and of each two adjacent
    words joined (a name one syllable off and spaced: `가온 상샤`). Two words touch only where a separator was
    folded away inside one run (runs of one class never touch), so the pairs are those of each run's pieces."""
    text = folded.folded
    gaps = sorted(folded.gaps)
    gap_count = len(gaps)
    words: list[tuple[int, int]] = []
    pairs: list[tuple[int, int]] = []
    next_gap = 0  # runs and gaps both ascend: one walk along the gaps, no search per run
    for match in _LETTER_RUN_RE.finditer(text):
        start, end = match.span()
        while next_gap < gap_count and gaps[next_gap] <= start:
            next_gap += 1
        piece_start, previous_start = start, -1
        while next_gap < gap_count and (cut := gaps[next_gap]) < end:  # a separator folded away ends a word
            words.append((piece_start, cut))
            if previous_start != -1:
                pairs.append((previous_start, cut))
            previous_start, piece_start = piece_start, cut
            next_gap += 1
        words.append((piece_start, end))
        if previous_start != -1:
            pairs.append((previous_start, end))
    return words + pairs


def _near_misses(draft, folded, spotter, counterpart, evidence, *, taken) -> list[dict]:
    """Words one syllable (or letter) off another vendor's name, closer to it than to any of the counterpart's
    names, and neither a known brand nor a word of the evidence."""
    near_misses = _near_misses_of(spotter.patterns_of("vendor"), spotter.patterns_of(KNOWN_BRAND))
    if not near_misses.keys:
        return []
    counterpart_forms = {form for name in counterpart for form in name_forms(name)}
    evidence_folded = None
    found, flagged = [], []
    text = folded.folded
    spans = _words(folded)
    for index, suspects in near_misses.with_suspects([text[s:e] for s, e in spans]):
        start, end = spans[index]
        span = folded.span(start, end)
        if any(span[0] < t_end and t_start < span[1] for t_start, t_end in (*taken, *flagged)):
            continue
        for variant in suspects:
            if variant in counterpart_forms:
                continue
            if any(Levenshtein.distance(variant, form, score_cutoff=1) <= 1 for form in counterpart_forms):
                continue  # as close to the counterpart's own name: never flag the counterpart
            if evidence_folded is None:
                evidence_folded = folded_text("\n".join(evidence))
            if variant in evidence_folded:
                continue
            original = folded.span(start, start + len(variant))
            word = draft[original[0] : original[1]]
            found.append(
                {
                    "kind": OTHER_VENDOR,
                    "value": word,
                    "text": word,
                    "span": original,
                    "reason": f"다른 벤더 이름과 한 글자 다른 표기: {word}",
                    "suggestion": VENDOR_MASK,
                }
            )
            flagged.append(original)
            break
    return found


def _references(draft: str, *, taken) -> list[dict]:
    """A mask copied into the draft, or words for another supplier, followed in its sentence by a value, or
    the subject of a claim (`해당 협력사는 결품률 4.2%…`, `[다른 벤더]가 더 쌉니다`). `다른 거래처 정보는 안내해 드릴
    수 없습니다` refers to no one in particular and stays."""
    sentences = None  # split only for a draft that holds a mask or a reference (few do)
    found = []
    for pattern, label in ((_MASK_RE, "다른 벤더를 가린 표시"), (_REFERENCE_RE, "다른 벤더를 가리키는 표현")):
        for match in pattern.finditer(draft):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            if sentences is None:
                sentences = split_sentences(draft)
            sentence_end = next((s.end for s in sentences if s.start <= match.start() < s.end), len(draft))
            rest = draft[match.end() : sentence_end]
            if _DIGIT_RE.search(rest) or _CLAIM_PARTICLE_RE.match(rest):
                found.append(_reference(match, label))
    return found


def _reference(match: re.Match, label: str) -> dict:
    return {
        "kind": OTHER_VENDOR,
        "value": match.group(),
        "text": match.group(),
        "span": match.span(),
        "reason": f"{label}: {match.group()}",
        "suggestion": None,
    }


def _masked_values(
    evidence: tuple[str, ...], outside: tuple[str, ...], quantities: tuple[Quantity, ...], quantity_label
) -> list[dict]:
    """Draft values the evidence states, but not `outside` its clauses about a masked vendor or product."""
    if not quantities:
        return []
    stated = quantity_values_among(evidence, quantities)
    supported = quantity_values_among(outside, quantities)
    return [
        {
            "kind": OTHER_VENDOR_VALUE,
            "value": quantity.value,
            "text": quantity.raw,
            "span": quantity.span,
            "reason": f"다른 벤더에 대한 근거에만 있는 값: {quantity_label(quantity)}",
            "suggestion": None,
        }
        for quantity in quantities
        if (quantity.kind, quantity.value) in stated and (quantity.kind, quantity.value) not in supported
    ]


def masked_values_among(values: Iterable[Value], stated: Iterable[bool], outside: tuple[str, ...]) -> list[dict]:
    """`other_vendor_value` for dates, times, quantities and contacts: of the draft's values that the evidence
    states (`stated`, per value, not counting the question: the vendor's own words are no other vendor's data),
    those that `outside` — the evidence without its clauses about a masked vendor or product, empty when it has
    none — does not state. Only the values the evidence states are looked for again, in one pass over `outside`."""
    if not outside:
        return []
    candidates = [value for value, is_stated in zip(values, stated, strict=True) if is_stated]
    if not candidates:
        return []
    text = "\n".join(outside)
    supported = supported_in(candidates, text, lambda: fold(text))
    return [
        {
            "kind": OTHER_VENDOR_VALUE,
            "value": value.value,
            "text": value.raw,
            "span": value.span,
            "reason": f"다른 벤더에 대한 근거에만 있는 값: {display(value)}",
            "suggestion": None,
        }
        for value, is_supported in zip(candidates, supported, strict=True)
        if not is_supported
    ]
