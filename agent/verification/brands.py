"""Brand and vendor names in Korean text: multi-pattern search and one-character misspellings.

Names are searched with an Aho-Corasick automaton over case- and width-folded text, built once per
name set (``NameIndex``) and reused, so a draft is scanned once for thousands of names.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import pairwise

import ahocorasick
from rapidfuzz.distance import Levenshtein

from agent.verification.edits import Alphabet
from agent.verification.korean import (
    MAX_PARTICLE_LENGTH,
    fold,
    hangul_run_end,
    is_hangul_syllable,
    is_latin_or_digit,
    is_particle,
    strip_particle_variants,
)

# Legal-form markers are not part of a name: "(주)대한물산" and "대한물산" are one vendor.
_LEGAL_FORM_RE = re.compile(r"\(주\)|㈜|주식회사|\(유\)|유한회사|\(사\)|\(재\)")
_WHITESPACE_RE = re.compile(r"\s+")
# A Hangul name of this many syllables or more also matches at the start of a longer word
# ("대한물산측"); shorter names need a word end or a particle ("무지" is not in "무지개").
_COMPOUND_PREFIX_MIN_LENGTH = 3
_MIN_PATTERN_LENGTH = 2
_CANDIDATE_MEMO_SIZE = 100_000
# Only words with a letter can misspell a brand ("35,000원에" is checked, "2026-11-30" is not).
_HAS_LETTER_RE = re.compile(r"[A-Za-z가-힣]")
# Words are split at whitespace and at these; "." "+" "&" "-" "'" stay inside (Dr.Jart+, P&G).
_WORD_RE = re.compile(r"[^\s,/·|()\[\]{}<>\"“”‘’「」『』:;!?~]+")
_WORD_EDGE_PUNCTUATION = ".'-"
_ASCII_RE = re.compile(r"[\x00-\x7f]")
_LATIN_WORD_START_RE = re.compile("(?<![A-Za-z])[a-z]")


def name_patterns(name: str) -> set[str]:
    """The folded forms a name is searched by: without legal-form markers, spaced and unspaced."""
    core = _WHITESPACE_RE.sub(" ", _LEGAL_FORM_RE.sub(" ", fold(name))).strip()
    patterns = {core, core.replace(" ", "")}
    return {pattern for pattern in patterns if len(pattern) >= _MIN_PATTERN_LENGTH}


@dataclass(frozen=True, slots=True)
class NameMatch:
    name: str  # the name as given to the index
    start: int
    end: int
    text: str  # as written in the searched text


class NameIndex:
    """An immutable, reusable index over a set of names (known brands, or vendor names and aliases).

    Build it once per name set with ``NameIndex.build`` (or ``cached_name_index``) and pass it to
    ``verify_draft``; building 10,000 names takes tens of milliseconds, searching takes microseconds.
    """

    def __init__(self, names: Iterable[str]):
        self.names = tuple(dict.fromkeys(name for name in names if isinstance(name, str)))
        self._automaton = ahocorasick.Automaton()
        self._patterns_by_name: dict[str, tuple[str, ...]] = {}
        self._name_by_pattern: dict[str, str] = {}
        for name in self.names:
            patterns = tuple(sorted(name_patterns(name)))
            self._patterns_by_name[name] = patterns
            for pattern in patterns:
                if pattern not in self._name_by_pattern:  # the first name given keeps a shared pattern
                    self._name_by_pattern[pattern] = name
                    self._automaton.add_word(pattern, (len(pattern), name))
        self._candidate_memo: dict[tuple[str, int], tuple[tuple[int, str], ...]] = {}
        self._quiet_words: dict[int, set[str]] = {}  # per minimum length: words with no candidates
        self._empty = not self._name_by_pattern
        if not self._empty:
            self._automaton.make_automaton()

    @classmethod
    def build(cls, names: Iterable[str]) -> "NameIndex":
        return cls(names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, word: str) -> bool:
        """Whether ``word`` is one of the names, compared in folded form."""
        return fold(word) in self._name_by_pattern

    def has_pattern(self, folded_word: str) -> bool:
        return folded_word in self._name_by_pattern

    @cached_property
    def longest_pattern(self) -> int:
        return max(map(len, self._name_by_pattern), default=0)

    def occurs_in(self, name: str, evidence: "EvidenceText") -> bool:
        """Whether the evidence contains ``name`` anywhere, even inside a longer word."""
        return any(evidence.contains(pattern) for pattern in self._patterns_by_name.get(name, ()))

    def name_of(self, pattern: str) -> str:
        return self._name_by_pattern[pattern]

    @cached_property
    def word_counts(self) -> tuple[int, ...]:
        """How many space-separated words the patterns have (1 for most names), most first."""
        return tuple(sorted({pattern.count(" ") + 1 for pattern in self._name_by_pattern}, reverse=True))

    @cached_property
    def _patterns_by_deletion_key(self) -> dict[str, tuple[str, ...]]:
        # Built on first use only: vendor indexes never need it.
        keys: dict[str, list[str]] = {}
        for pattern in self._name_by_pattern:
            for key in _deletion_keys(pattern):
                keys.setdefault(key, []).append(pattern)
        return {key: tuple(patterns) for key, patterns in keys.items()}

    @cached_property
    def _alphabet(self) -> Alphabet:
        return Alphabet(self._name_by_pattern)

    def patterns_one_edit_from(self, word: str) -> list[str]:
        """Patterns at edit distance exactly 1 from the folded ``word`` (symmetric-deletion lookup, for a word that
        holds at most one character no pattern holds)."""
        if self._alphabet.is_beyond_one_edit(word):
            return []
        candidates = set()
        for key in _deletion_keys(word):
            candidates.update(self._patterns_by_deletion_key.get(key, ()))
        return sorted(pattern for pattern in candidates if Levenshtein.distance(word, pattern, score_cutoff=1) == 1)

    def misspelling_candidates(self, folded_word: str, min_length: int) -> tuple[tuple[int, str], ...]:
        """``(stem length, pattern)`` pairs: the folded word, less a particle, one edit from a pattern.

        Empty when the word (with or without its particle) is itself a name, is shorter than
        ``min_length``, is too long to be one edit from any pattern, or has no letter ("35,000원에" may
        misspell a brand, "2026-11-30" may not). This part does not depend on the evidence, so it is
        remembered per word (drafts share most of their vocabulary; bounded).
        """
        key = (folded_word, min_length)
        if (known := self._candidate_memo.get(key)) is not None:
            return known
        candidates: tuple[tuple[int, str], ...] = ()
        variants = strip_particle_variants(folded_word)
        if (
            min_length <= len(folded_word) <= self.longest_pattern + MAX_PARTICLE_LENGTH + 1
            and _HAS_LETTER_RE.search(folded_word)
            and not any(variant in self._name_by_pattern for variant in variants)
        ):
            candidates = tuple(
                (len(variant), pattern)
                for variant in variants
                if len(variant) >= min_length
                for pattern in self.patterns_one_edit_from(variant)
                if len(pattern) >= min_length
            )
        if len(self._candidate_memo) >= _CANDIDATE_MEMO_SIZE:
            self._candidate_memo.clear()
        self._candidate_memo[key] = candidates
        return candidates

    def words_with_candidates(self, folded_words: Iterable[str], min_length: int) -> set[str]:
        """Those of the folded words (as split, edge punctuation on) that have ``misspelling_candidates``.

        Words found to have none are remembered in a set, so a draft in familiar words costs one set
        difference rather than a look-up per word (bounded).
        """
        quiet = self._quiet_words.setdefault(min_length, set())
        suspects = set()
        for word in set(folded_words).difference(quiet):
            if self.misspelling_candidates(word.strip(_WORD_EDGE_PUNCTUATION), min_length):
                suspects.add(word)
                continue
            if len(quiet) >= _CANDIDATE_MEMO_SIZE:
                quiet.clear()
            quiet.add(word)
        return suspects

    def find(self, text: str) -> list[NameMatch]:
        """Occurrences of names as words in ``text``: leftmost-longest, non-overlapping.

        A match must not continue a Latin word or a Hangul word on its left, and on its right may be
        followed by a particle ("삼성전자는"), a non-Hangul character, or — for names of three or more
        syllables — the rest of a compound ("대한물산측").
        """
        if self._empty:
            return []
        candidates = []
        for last, (length, name) in self._automaton.iter(fold(text)):
            start, end = last - length + 1, last + 1
            if _is_word_occurrence(text, start, end):
                candidates.append((start, -length, name))
        matches = []
        taken_until = 0
        for start, negative_length, name in sorted(candidates):
            if start >= taken_until:
                end = start - negative_length
                matches.append(NameMatch(name=name, start=start, end=end, text=text[start:end]))
                taken_until = end
        return matches


def _continues_a_word(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is glued to the word before it, or to Latin letters or digits after it."""
    if start > 0:
        first, before = text[start], text[start - 1]
        if (is_hangul_syllable(first) and is_hangul_syllable(before)) or (
            is_latin_or_digit(first) and is_latin_or_digit(before)
        ):
            return True
    return end < len(text) and is_latin_or_digit(text[end - 1]) and is_latin_or_digit(text[end])


def _is_word_occurrence(text: str, start: int, end: int) -> bool:
    if _continues_a_word(text, start, end):
        return False
    if end < len(text):
        last, after = text[end - 1], text[end]
        if is_hangul_syllable(last) and is_hangul_syllable(after):
            rest = text[end : hangul_run_end(text, end)]
            return is_particle(rest) or _hangul_length(text, start, end) >= _COMPOUND_PREFIX_MIN_LENGTH
    return True


def has_whole_word(text: str, word: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``word`` stands in ``text[start:end]`` as a whole word of ``text`` (case and width aside): not
    continuing a word on either side, a particle allowed after it ("다온팜은"), never joined across spaces
    ("다온 팜" is not "다온팜") and never the start of a compound."""
    folded_word = fold(word).strip()
    if not folded_word:
        return False
    end = len(text) if end is None else end
    folded_text = fold(text)
    position = folded_text.find(folded_word, start, end)
    while position != -1:
        word_end = position + len(folded_word)
        if _stands_alone(text, position, word_end):
            return True
        position = folded_text.find(folded_word, position + 1, end)
    return False


def _stands_alone(text: str, start: int, end: int) -> bool:
    """As a word occurrence, but never the start of a compound: Hangul after it must be a particle."""
    if _continues_a_word(text, start, end):
        return False
    if end < len(text) and is_hangul_syllable(text[end]):
        return is_particle(text[end : hangul_run_end(text, end)])
    return True


def _hangul_length(text: str, start: int, end: int) -> int:
    return sum(1 for char in text[start:end] if is_hangul_syllable(char))


@lru_cache(maxsize=64)
def _cached_name_index(names: tuple[str, ...]) -> NameIndex:
    return NameIndex(names)


def cached_name_index(names: "NameIndex | Iterable[str]") -> NameIndex:
    """An index for ``names``, reused across calls with the same names (an index passes through)."""
    if isinstance(names, NameIndex):
        return names
    return _cached_name_index(tuple(names))


@dataclass(frozen=True, slots=True)
class Misspelling:
    word: str  # as written in the draft, without its particle
    brand: str  # the known brand it is one character away from
    start: int
    end: int


def _word_spans(text: str) -> list[tuple[int, int]]:
    """Where the words of ``text`` are, less the "." "'" "-" at their edges (inside they stay: "Dr.Jart+")."""
    spans = []
    for match in _WORD_RE.finditer(text):
        if span := _without_edge_punctuation(text, *match.span()):
            spans.append(span)
    return spans


def _spans_of_words(text: str, words: Iterable[str]) -> list[tuple[int, int]]:
    """Where the given words (as ``_WORD_RE`` splits them) stand in ``text``, in order, less the punctuation
    at their edges: a few ``str.find`` calls instead of a Python step per word of the text."""
    spans = []
    for word in words:
        start = text.find(word)
        while start != -1:
            end = start + len(word)
            whole = (start == 0 or _WORD_RE.match(text[start - 1]) is None) and (
                end == len(text) or _WORD_RE.match(text[end]) is None
            )
            if whole and (span := _without_edge_punctuation(text, start, end)):
                spans.append(span)
            start = text.find(word, start + 1)
    return sorted(spans)


def _without_edge_punctuation(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start] in _WORD_EDGE_PUNCTUATION:
        start += 1
    while end > start and text[end - 1] in _WORD_EDGE_PUNCTUATION:
        end -= 1
    return (start, end) if start < end else None


class EvidenceText:
    """The evidence passages as one text; folded only if a Latin name needs it, in one pass over the joined
    text (folding maps each character on its own: the same as the passages folded and joined).
    ``EvidenceText.of`` reuses the object, with its answers, for the same passages (a rewrite round checks its
    new draft against the same evidence)."""

    def __init__(self, passages: Iterable[str]):
        self.passages = tuple(passages)
        self.raw = "\n".join(self.passages)
        self._contains: dict[str, bool] = {}
        self._has_word: dict[str, bool] = {}

    @classmethod
    def of(cls, passages: Iterable[str]) -> "EvidenceText":
        return _evidence_text(tuple(passages))

    @cached_property
    def folded(self) -> str:
        return fold(self.raw)

    @cached_property
    def compact(self) -> str:
        """The folded evidence without white space: a name is found however the evidence spaces it."""
        return "".join(self.folded.split())

    def contains(self, pattern: str) -> bool:
        """Whether the evidence contains the folded ``pattern`` (case and width aside)."""
        if (known := self._contains.get(pattern)) is None:
            known = self._contains[pattern] = self._search(pattern)
        return known

    def _search(self, pattern: str) -> bool:
        if pattern in self.raw:  # written as folded: no need to fold the evidence
            return True
        if not _has_ascii(pattern):
            return False
        # Latin names are mostly written Capitalised or in capitals; either form found is a match.
        return any(variant in self.raw for variant in _case_variants(pattern)) or pattern in self.folded

    def has_word(self, word: str) -> bool:
        """Whether the folded ``word`` occurs in the evidence as a word (particles allowed after it)."""
        if (known := self._has_word.get(word)) is None:
            known = self._has_word[word] = self._find_word(word)
        return known

    def _find_word(self, word: str) -> bool:
        # The word checks around a match look at Hangul and ASCII only, which folding keeps apart.
        text = self.folded if _has_ascii(word) else self.raw
        start = text.find(word)
        while start != -1:
            if _is_word_occurrence(text, start, start + len(word)):
                return True
            start = text.find(word, start + 1)
        return False


# Evidence lists whose text and answers are remembered: a question's rounds and repeats reuse them.
_EVIDENCE_TEXT_MEMO_SIZE = 128


@lru_cache(maxsize=_EVIDENCE_TEXT_MEMO_SIZE)
def _evidence_text(passages: tuple[str, ...]) -> EvidenceText:
    return EvidenceText(passages)


@lru_cache(maxsize=4096)
def _case_variants(pattern: str) -> tuple[str, ...]:
    """The folded pattern with its Latin words Capitalised and all in capitals ("Dr.Jart+", "DR.JART+"):
    only ASCII letters change, so each folds back to the pattern."""
    capitalised = _LATIN_WORD_START_RE.sub(lambda letter: letter.group().upper(), pattern)
    capitals = pattern.encode("utf-8", "surrogatepass").upper().decode("utf-8", "surrogatepass")
    return tuple(variant for variant in dict.fromkeys((capitalised, capitals)) if variant != pattern)


def _has_ascii(folded: str) -> bool:
    """Whether folded text holds an ASCII character: folding turns what it changes into ASCII, so text
    without any matches folded and unfolded text at the same places."""
    return _ASCII_RE.search(folded) is not None


def find_misspellings(
    text: str,
    *,
    known_brands: NameIndex,
    evidence: EvidenceText,
    min_length: int,
    anywhere: frozenset[str] = frozenset(),
    last_resort: frozenset[str] = frozenset(),
) -> list[Misspelling]:
    """Words of ``text`` at edit distance exactly 1 from a known brand the evidence contains, from a brand in
    ``anywhere`` (the counterpart's own brands), or — in brand position only — from any other known brand.

    A model that writes a brand one syllable off misspells it whether or not this turn's search found the brand.
    The counterpart's catalogue is small, so a word one syllable from one of its brands is rarely an everyday
    word; among thousands of known brands many everyday words are (`참고로`, `다시금`), so there only a word in
    brand position counts: quoted, or followed by `제품`, `상품`, `브랜드` (`햇살천 제품도`). When a word is one
    edit from several brands the suggestion is, in this order, an evidence brand, one of ``anywhere``, a brand
    not in ``last_resort`` (the brands only other vendors carry, named only when nothing else is near), that one.

    Distance is counted in characters (a Hangul syllable or a Latin letter substituted, inserted or
    deleted) on folded text. A word is left alone when it, with or without its particle, is a known
    brand or a word of the evidence (two real brands one syllable apart never flag each other); words and
    brands shorter than ``min_length`` are not compared.
    Most words have no brand one edit away, which the index remembers, so a draft without such a word is
    done after one set difference, and only the few words that have one are looked up in the evidence.
    """
    # Words are split in the folded text (same offsets), so full-width punctuation separates them too.
    folded_text = fold(text)
    word_counts = known_brands.word_counts
    if word_counts == (1,):  # one-word brands (the usual case): only words with candidates matter
        suspects = known_brands.words_with_candidates(_WORD_RE.findall(folded_text), min_length)
        if not suspects:
            return []
        words = _spans_of_words(folded_text, suspects)
    else:  # windows of several words need every word
        words = _word_spans(folded_text)
    verdicts: dict[tuple[str, bool], tuple[int, str] | None] = {}  # drafts repeat words
    found = []
    taken_until = 0
    for index, (start, first_end) in enumerate(words):
        if start < taken_until:
            continue
        for count in word_counts:
            if count == 1:
                end = first_end
            else:
                window = words[index : index + count]
                if len(window) < count or not _adjacent(text, window):
                    continue
                end = window[-1][1]
            folded = folded_text[start:end]
            candidates = known_brands.misspelling_candidates(folded, min_length)
            if not candidates:
                continue
            key = (folded, in_brand_position(text, start, end))
            if key not in verdicts:
                verdicts[key] = _misspelt_brand(
                    folded, candidates, known_brands, evidence, key[1], anywhere=anywhere, last_resort=last_resort
                )
            if verdict := verdicts[key]:
                length, brand = verdict
                found.append(
                    Misspelling(word=text[start : start + length], brand=brand, start=start, end=start + length)
                )
                taken_until = start + length
                break
    return found


# After a word in brand position: a word for a product or a brand (`햇살천 제품도`, `햇살천 브랜드`).
_PRODUCT_WORD_RE = re.compile(r"\s?(?:신제품|신상품|제품|상품|브랜드)")
_QUOTES = {"‘": "’", "'": "'", '"': '"', "“": "”", "「": "」", "『": "』"}


def in_brand_position(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands where a brand name stands: quoted, or followed by a product word."""
    if start > 0 and (closing := _QUOTES.get(text[start - 1])) and text.startswith(closing, end):
        return True
    return _PRODUCT_WORD_RE.match(text, end) is not None


def _misspelt_brand(
    folded: str,
    candidates: tuple[tuple[int, str], ...],
    known_brands: NameIndex,
    evidence: EvidenceText,
    brand_position: bool,
    *,
    anywhere: frozenset[str],
    last_resort: frozenset[str],
) -> tuple[int, str] | None:
    """(length of the misspelt stem, brand) for a word with ``candidates`` that is not itself a word of the
    evidence, by the order of ``find_misspellings``; None when no candidate counts."""
    best, best_rank = None, 4
    for length, pattern in candidates:
        brand = known_brands.name_of(pattern)
        if known_brands.occurs_in(brand, evidence):
            best = length, brand
            break
        if brand in anywhere:
            rank = 1
        elif not brand_position:
            continue
        else:
            rank = 3 if brand in last_resort else 2
        if rank < best_rank:
            best, best_rank = (length, brand), rank
    # The evidence is searched for the word only when a brand counts (most suspects have none that does).
    if best is None or any(evidence.has_word(variant) for variant in strip_particle_variants(folded)):
        return None
    return best


def _deletion_keys(word: str) -> set[str]:
    """The word and every string one deletion away: two words within edit distance 1 share a key."""
    return {word, *(word[:index] + word[index + 1 :] for index in range(len(word)))}


def _adjacent(text: str, window: list[tuple[int, int]]) -> bool:
    """Consecutive words separated only by spaces (a multi-word brand cannot span punctuation)."""
    return all(text[left[1] : right[0]].isspace() for left, right in pairwise(window))
