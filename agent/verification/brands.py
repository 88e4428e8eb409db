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

from agent.verification.korean import (
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
# Words are split at whitespace and at these; "." "+" "&" "-" "'" stay inside (Dr.Jart+, P&G).
_WORD_RE = re.compile(r"[^\s,/·|()\[\]{}<>\"“”‘’「」『』:;!?~]+")
_WORD_EDGE_PUNCTUATION = ".'-"


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
        self._folded_names: set[str] = set()
        for name in self.names:
            for pattern in name_patterns(name):
                self._folded_names.add(pattern)
                if pattern not in self._automaton:  # the first name given keeps a shared pattern
                    self._automaton.add_word(pattern, (len(pattern), name))
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()

    @classmethod
    def build(cls, names: Iterable[str]) -> "NameIndex":
        return cls(names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, word: str) -> bool:
        """Whether ``word`` is one of the names, compared in folded form."""
        return fold(word) in self._folded_names

    def names_in(self, text: str) -> set[str]:
        """Names occurring anywhere in ``text``, even inside longer words (evidence "contains" them)."""
        if self._empty:
            return set()
        return {name for _, (_, name) in self._automaton.iter(fold(text))}

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


def _is_word_occurrence(text: str, start: int, end: int) -> bool:
    first, last = text[start], text[end - 1]
    if start > 0:
        before = text[start - 1]
        if (is_hangul_syllable(first) and is_hangul_syllable(before)) or (
            is_latin_or_digit(first) and is_latin_or_digit(before)
        ):
            return False
    if end < len(text):
        after = text[end]
        if is_latin_or_digit(last) and is_latin_or_digit(after):
            return False
        if is_hangul_syllable(last) and is_hangul_syllable(after):
            rest = text[end : hangul_run_end(text, end)]
            return is_particle(rest) or _hangul_length(text, start, end) >= _COMPOUND_PREFIX_MIN_LENGTH
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
    brand: str  # the evidence brand it is one character away from
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    start: int
    end: int


def _words(text: str) -> list[_Word]:
    words = []
    for match in _WORD_RE.finditer(text):
        start, end = match.span()
        while start < end and text[start] in _WORD_EDGE_PUNCTUATION:
            start += 1
        while end > start and text[end - 1] in _WORD_EDGE_PUNCTUATION:
            end -= 1
        if start < end:
            words.append(_Word(text[start:end], start, end))
    return words


class EvidenceWords:
    """The words of the evidence (folded, with and without particles), computed only when asked."""

    def __init__(self, passages: Iterable[str]):
        self._passages = passages

    @cached_property
    def words(self) -> frozenset[str]:
        words = set()
        for passage in self._passages:
            for word in _words(fold(passage)):
                words.update(strip_particle_variants(word.text))
        return frozenset(words)

    def __contains__(self, word: str) -> bool:
        return fold(word) in self.words


def find_misspellings(
    text: str,
    *,
    evidence_brands: Iterable[str],
    known_brands: NameIndex,
    evidence_words: EvidenceWords,
    min_length: int,
) -> list[Misspelling]:
    """Words of ``text`` at edit distance exactly 1 from a brand the evidence contains.

    Distance is counted in characters (a Hangul syllable or a Latin letter substituted, inserted or
    deleted) on folded text. A word is left alone when it, with or without its particle, is a known
    brand or a word of the evidence; words and brands shorter than ``min_length`` are not compared.
    """
    brands_by_key: dict[str, set[str]] = {}
    folded_brand: dict[str, str] = {}
    word_counts = set()
    for brand in evidence_brands:
        for pattern in name_patterns(brand):
            if len(pattern) < min_length:
                continue
            folded_brand[pattern] = brand
            word_counts.add(pattern.count(" ") + 1)
            for key in _deletion_keys(pattern):
                brands_by_key.setdefault(key, set()).add(pattern)
    if not brands_by_key:
        return []
    words = _words(text)
    found = []
    taken_until = 0
    for index in range(len(words)):
        if words[index].start < taken_until:
            continue
        for count in sorted(word_counts, reverse=True):
            window = words[index : index + count]
            if len(window) < count or not _adjacent(text, window):
                continue
            start, end = window[0].start, window[-1].end
            misspelling = _misspelling_in(
                text[start:end], start, brands_by_key, folded_brand, known_brands, evidence_words, min_length
            )
            if misspelling is not None:
                found.append(misspelling)
                taken_until = misspelling.end
                break
    return found


def _misspelling_in(
    written: str,
    start: int,
    brands_by_key: dict[str, set[str]],
    folded_brand: dict[str, str],
    known_brands: NameIndex,
    evidence_words: EvidenceWords,
    min_length: int,
) -> Misspelling | None:
    variants = strip_particle_variants(fold(written))
    if any(variant in folded_brand or variant in known_brands for variant in variants):
        return None
    for variant in variants:
        if len(variant) < min_length:
            continue
        candidates = set()
        for key in _deletion_keys(variant):
            candidates.update(brands_by_key.get(key, ()))
        for pattern in sorted(candidates):
            if Levenshtein.distance(variant, pattern, score_cutoff=1) == 1:
                if any(other in evidence_words for other in variants):
                    return None
                return Misspelling(
                    word=written[: len(variant)],
                    brand=folded_brand[pattern],
                    start=start,
                    end=start + len(variant),
                )
    return None


def _deletion_keys(word: str) -> set[str]:
    """The word and every string one deletion away: two words within edit distance 1 share a key."""
    return {word, *(word[:index] + word[index + 1 :] for index in range(len(word)))}


def _adjacent(text: str, window: list[_Word]) -> bool:
    """Consecutive words separated only by spaces (a multi-word brand cannot span punctuation)."""
    return all(text[left.end : right.start].isspace() for left, right in pairwise(window))
