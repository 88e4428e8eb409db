"""The matching form of names and of the texts names are searched in: every spelling of a name folds to one form.

Pure: no database, no settings. Used by counterpart resolution (its normal form), by the masking of other vendors
in evidence and prompts, and by the final-text check of other vendors' names.

Folding, character by character with positions kept:
- NFKC (full-width forms, `㈜` → `(주)`) and case folding (`GAON` → `gaon`);
- characters that show nothing are dropped: format characters (Unicode category Cf: zero-width space and
  joiners, the soft hyphen, BOM), combining marks and the Hangul fillers;
- Hangul jamo are composed into syllables: `ㄱㅏ온상사` → `가온상사`, `가오ㄴ` → `가온` (compatibility, half-width
  and conjoining jamo alike);
- spaces and hyphens are separators: they are left out of the folded text and remembered as gaps, so `가온 상사`,
  `gaon-sangsa` and `GAON  SANGSA` fold to `가온상사` / `gaonsangsa`.

`FoldedText` maps every folded character back to the original characters it came from, so a match in the folded
text names an exact span of the original (what masking replaces, what a violation points at).
"""

import contextlib
import re
import unicodedata
from bisect import bisect_right
from functools import lru_cache
from itertools import accumulate

_HYPHENS = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
# Runs the fast path copies as they are (lower-cased): printable ASCII except the hyphen, and Hangul syllables.
_PLAIN_RUN_RE = re.compile(r"[\x21-\x2c\x2e-\x7e\uac00-\ud7a3]+")
_HANGUL_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")
# Texts with nothing but plain runs and spaces or hyphens take the fast path (most evidence).
_NON_SEPARATOR_RUN_RE = re.compile(r"[^\s" + re.escape(_HYPHENS) + r"]+")
_NOT_PLAIN_RE = re.compile(r"[^\x21-\x2c\x2e-\x7e\uac00-\ud7a3\s" + re.escape(_HYPHENS) + r"]")

_SYLLABLE_BASE = 0xAC00
_LEADS = 19
_VOWELS = 21
_TAILS = 28
_LEAD_BASE, _VOWEL_BASE, _TAIL_BASE = 0x1100, 0x1161, 0x11A7


def _tail_of_lead() -> dict[str, str]:
    """Conjoining leading consonant → the trailing consonant of the same letter (ㄱ as an initial and as a final).
    NFKC turns a compatibility consonant into the leading form, which is what composition then sees."""
    tails = {}
    for index in range(_LEADS):
        lead = chr(_LEAD_BASE + index)
        letter = unicodedata.name(lead).removeprefix("HANGUL CHOSEONG ")
        with contextlib.suppress(KeyError):  # ㄸ ㅃ ㅉ are never finals
            tails[lead] = unicodedata.lookup(f"HANGUL JONGSEONG {letter}")
    return tails


_TAIL_OF_LEAD = _tail_of_lead()


def _is_lead(char: str) -> bool:
    return _LEAD_BASE <= ord(char) < _LEAD_BASE + _LEADS


def _is_vowel(char: str) -> bool:
    return _VOWEL_BASE <= ord(char) < _VOWEL_BASE + _VOWELS


def _tail_index(char: str) -> int:
    """1–27 for a trailing consonant (or a leading one that can be a final), else 0."""
    char = _TAIL_OF_LEAD.get(char, char)
    index = ord(char) - _TAIL_BASE
    return index if 0 < index < _TAILS else 0


def _is_open_syllable(char: str) -> bool:
    """A precomposed syllable without a final consonant (가, 오), which a trailing jamo may close."""
    offset = ord(char) - _SYLLABLE_BASE
    return 0 <= offset < _LEADS * _VOWELS * _TAILS and offset % _TAILS == 0


@lru_cache(maxsize=8192)
def _folded_char(char: str) -> str:
    """One original character in folded form: '' when it shows nothing, else NFKC and case-folded."""
    if unicodedata.category(char) in ("Cf", "Mn", "Me") or char in _HANGUL_FILLERS:
        return ""
    folded = unicodedata.normalize("NFKC", char).casefold()
    return "".join(c for c in folded if unicodedata.category(c) not in ("Cf", "Mn", "Me") and c not in _HANGUL_FILLERS)


def is_separator(char: str) -> bool:
    return char.isspace() or char in _HYPHENS


class FoldedText:
    """`text` folded for name matching, with `span` mapping folded positions back to the original; `gaps` holds
    the folded indexes that a separator (space, hyphen) preceded in the original.

    The mapping is kept per segment, not per character: a plain run (ASCII, Hangul syllables) maps one to one from
    its start; any other character is a segment of its own, all of whose folded characters (`㈜` → `(주)`, a
    syllable composed of three jamo) map to its whole original span. Evidence is long and almost all plain.
    """

    __slots__ = ("_segment_starts", "_segments", "folded", "gaps", "original")

    def __init__(self, original: str):
        self.original = original
        chunks: list[str] = []
        self.gaps: set[int] = set()
        # Parallel lists: folded start of each segment; (original start, original end or -1 for a one-to-one run).
        self._segment_starts: list[int] = []
        self._segments: list[tuple[int, int]] = []
        if _NOT_PLAIN_RE.search(original) is None:
            self._fold_plain(original)
            return
        length = 0  # of the folded text so far
        index, size = 0, len(original)
        pending_gap = False
        while index < size:
            plain = _PLAIN_RUN_RE.match(original, index)
            if plain is not None:
                run = plain.group()
                if pending_gap and length:
                    self.gaps.add(length)
                pending_gap = False
                chunks.append(run.lower())
                self._segment_starts.append(length)
                self._segments.append((index, -1))
                length += len(run)
                index += len(run)
                continue
            char = original[index]
            if is_separator(char):
                pending_gap = True
                index += 1
                continue
            folded = _folded_char(char)
            if not folded:
                index += 1
                continue
            # Jamo: compose with what came before (no separator in between).
            if len(folded) == 1 and length and not pending_gap:
                previous = chunks[-1][-1]
                composed = None
                if _is_lead(previous) and _is_vowel(folded):
                    composed = chr(
                        _SYLLABLE_BASE + ((ord(previous) - _LEAD_BASE) * _VOWELS + ord(folded) - _VOWEL_BASE) * _TAILS
                    )
                elif _is_open_syllable(previous) and _tail_index(folded) and not self._vowel_follows(index + 1):
                    composed = chr(ord(previous) + _tail_index(folded))
                if composed is not None:
                    chunks[-1] = chunks[-1][:-1] + composed
                    # The composed syllable becomes a segment of its own, ending after this jamo.
                    previous_start = self.span(length - 1, length)[0]
                    if self._segment_starts[-1] == length - 1:
                        self._segments[-1] = (previous_start, index + 1)
                    else:
                        self._segment_starts.append(length - 1)
                        self._segments.append((previous_start, index + 1))
                    index += 1
                    continue
            if pending_gap and length:
                self.gaps.add(length)
            pending_gap = False
            chunks.append(folded)
            self._segment_starts.append(length)
            self._segments.append((index, index + 1))
            length += len(folded)
            index += 1
        self.folded = "".join(chunks)

    def _fold_plain(self, original: str) -> None:
        """Only plain runs between separators: each run is one segment; a separator after folded text is a gap
        where the next run starts (or at the end)."""
        runs = _hyphens_as_spaces(original).split()
        if len(original) == sum(map(len, runs)) + len(runs) - 1:
            # One separator between each two runs and none around them (most drafts and passages): run i starts
            # i characters after its folded start, and no regex pass over the text is needed.
            starts = list(accumulate(map(len, runs[:-1]), initial=0))
            self._segment_starts = starts
            self._segments = [(start + index, -1) for index, start in enumerate(starts)]
            self.gaps = set(starts[1:])
            self.folded = "".join(runs).lower()
            return
        spans = [match.span() for match in _NON_SEPARATOR_RUN_RE.finditer(original)]
        starts = list(accumulate((end - start for start, end in spans[:-1]), initial=0))
        self._segment_starts = starts if spans else []
        self._segments = [(start, -1) for start, _ in spans]
        self.gaps = set(starts[1:])
        if spans and spans[-1][1] < len(original):  # a trailing separator
            self.gaps.add(starts[-1] + spans[-1][1] - spans[-1][0])
        self.folded = "".join(runs).lower()

    def _vowel_follows(self, index: int) -> bool:
        """Whether the next character that shows something is a vowel jamo (then a consonant starts a syllable)."""
        while index < len(self.original):
            folded = _folded_char(self.original[index])
            if folded:
                return _is_vowel(folded[0])
            if is_separator(self.original[index]):
                return False
            index += 1
        return False

    def _original(self, position: int) -> tuple[int, int]:
        """The original span of the folded character at `position`."""
        segment = bisect_right(self._segment_starts, position) - 1
        start, end = self._segments[segment]
        if end == -1:  # one to one
            start += position - self._segment_starts[segment]
            return start, start + 1
        return start, end

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of folded characters `start`..`end` (end exclusive)."""
        return self._original(start)[0], self._original(end - 1)[1]

    def has_gap(self, start: int, end: int) -> bool:
        """Whether a separator stood between two of the folded characters `start`..`end`."""
        return not self.gaps.isdisjoint(range(start + 1, end))


def _hyphens_as_spaces(text: str) -> str:
    for hyphen in _HYPHENS:
        if hyphen in text:  # rare: one search each is cheaper than a translate of the whole text
            text = text.replace(hyphen, " ")
    return text


def _plain_folded(text: str) -> str:
    """Text of plain runs and separators, folded: the separators dropped (``str.split`` splits at the white space
    ``\\s`` matches), lower-cased."""
    return "".join(_hyphens_as_spaces(text).split()).lower()


def folded_text(text: str) -> str:
    """``FoldedText(text).folded`` without the map back to the original, for a search in a long text (evidence):
    most text is plain and takes one pass."""
    return _plain_folded(text) if _NOT_PLAIN_RE.search(text) is None else FoldedText(text).folded


@lru_cache(maxsize=65536)
def fold_name(name: str) -> str:
    """A name in folded form: `가온 상사` → `가온상사`, `ＧＡＯＮ-Sangsa` → `gaonsangsa`."""
    return FoldedText(name).folded
