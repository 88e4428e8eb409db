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
    def word_counts(self) -> frozenset[int]:
        """How many space-separated words the patterns have (1 for most names)."""
        return frozenset(pattern.count(" ") + 1 for pattern in self._name_by_pattern)

    @cached_property
    def _patterns_by_deletion_key(self) -> dict[str, tuple[str, ...]]:
        # Built on first use only: vendor indexes never need it.
        keys: dict[str, list[str]] = {}
        for pattern in self._name_by_pattern:
            for key in _deletion_keys(pattern):
                keys.setdefault(key, []).append(pattern)
        return {key: tuple(patterns) for key, patterns in keys.items()}

    def patterns_one_edit_from(self, word: str) -> list[str]:
        """Patterns at edit distance exactly 1 from the folded ``word`` (symmetric-deletion lookup)."""
        candidates = set()
        for key in _deletion_keys(word):
            candidates.update(self._patterns_by_deletion_key.get(key, ()))
        return sorted(pattern for pattern in candidates if Levenshtein.distance(word, pattern, score_cutoff=1) == 1)

    def misspelling_candidates(self, folded_word: str, min_length: int) -> tuple[tuple[int, str], ...]:
        """``(stem length, pattern)`` pairs: the folded word, less a particle, one edit from a pattern.

        Empty when the word (with or without its particle) is itself a name. This part does not depend
        on the evidence, so it is remembered per word (drafts share most of their vocabulary; bounded).
        """
        key = (folded_word, min_length)
        if (known := self._candidate_memo.get(key)) is not None:
            return known
        variants = strip_particle_variants(folded_word)
        candidates: tuple[tuple[int, str], ...] = ()
        if not any(variant in self._name_by_pattern for variant in variants):
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
        word = match.group().strip(_WORD_EDGE_PUNCTUATION)
        if word:
            start = match.start() + match.group().index(word)
            words.append(_Word(word, start, start + len(word)))
    return words


class EvidenceText:
    """The evidence passages as one text, folded only if a Latin name needs it."""

    def __init__(self, passages: Iterable[str]):
        self.raw = "\n".join(passages)

    @cached_property
    def folded(self) -> str:
        return fold(self.raw)

    def contains(self, pattern: str) -> bool:
        # Folding matters only to patterns with ASCII characters; Hangul is searched as it is.
        return pattern in (self.folded if any(char.isascii() for char in pattern) else self.raw)

    def has_word(self, word: str) -> bool:
        """Whether the folded ``word`` occurs in the evidence as a word (particles allowed after it)."""
        text = self.folded
        start = text.find(word)
        while start != -1:
            if _is_word_occurrence(text, start, start + len(word)):
                return True
            start = text.find(word, start + 1)
        return False


def find_misspellings(
    text: str,
    *,
    known_brands: NameIndex,
    evidence: EvidenceText,
    min_length: int,
) -> list[Misspelling]:
    """Words of ``text`` at edit distance exactly 1 from a known brand that the evidence contains.

    Distance is counted in characters (a Hangul syllable or a Latin letter substituted, inserted or
    deleted) on folded text. A word is left alone when it, with or without its particle, is a known
    brand or a word of the evidence; words and brands shorter than ``min_length`` are not compared.
    """
    folded_text = fold(text)  # same offsets as text
    words = _words(text)
    verdicts: dict[str, tuple[int, str] | None] = {}  # drafts repeat words
    word_counts = sorted(known_brands.word_counts, reverse=True)
    found = []
    taken_until = 0
    for index, word in enumerate(words):
        if word.start < taken_until:
            continue
        for count in word_counts:
            window = words[index : index + count]
            if len(window) < count or (count > 1 and not _adjacent(text, window)):
                continue
            start, end = word.start, window[-1].end
            folded = folded_text[start:end]
            if folded not in verdicts:
                verdicts[folded] = _misspelt_brand(folded, known_brands, evidence, min_length)
            if verdict := verdicts[folded]:
                length, brand = verdict
                found.append(
                    Misspelling(word=text[start : start + length], brand=brand, start=start, end=start + length)
                )
                taken_until = start + length
                break
    return found


def _misspelt_brand(
    folded: str, known_brands: NameIndex, evidence: EvidenceText, min_length: int
) -> tuple[int, str] | None:
    """(length of the misspelt stem, brand) when the folded word, less any particle, misspells a brand
    that the evidence contains and is not itself a word of the evidence."""
    if (
        len(folded) < min_length
        or len(folded) > known_brands.longest_pattern + MAX_PARTICLE_LENGTH + 1
        or not _HAS_LETTER_RE.search(folded)
    ):
        return None
    for length, pattern in known_brands.misspelling_candidates(folded, min_length):
        brand = known_brands.name_of(pattern)
        if not known_brands.occurs_in(brand, evidence):
            continue
        if any(evidence.has_word(variant) for variant in strip_particle_variants(folded)):
            return None
        return length, brand
    return None


def _deletion_keys(word: str) -> set[str]:
    """The word and every string one deletion away: two words within edit distance 1 share a key."""
    return {word, *(word[:index] + word[index + 1 :] for index in range(len(word)))}


def _adjacent(text: str, window: list[_Word]) -> bool:
    """Consecutive words separated only by spaces (a multi-word brand cannot span punctuation)."""
    return all(text[left.end : right.start].isspace() for left, right in pairwise(window))
