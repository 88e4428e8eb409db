"""Korean sentence boundaries with spans, and the text that remains when some sentences are removed."""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from agent.verification.korean import is_hangul_syllable

_TERMINATORS = ".!?。！？…"
_CLOSERS = "\"'”’)]」』"
_SENTENCE_ENDINGS = "다요죠니까음함임네군"
_BREAK_CANDIDATE_RE = re.compile("[\n" + re.escape(_TERMINATORS) + "~]")
_LIST_MARKER_RE = re.compile(r"[0-9]{1,3}|[A-Za-z]")
_SPACES_RE = re.compile(r"[ \t\u00a0\u3000]+")
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")
_SEPARATOR_STRENGTH = [" ", "\n", "\n\n"]


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    start: int
    end: int


def split_sentences(text: str) -> list[Sentence]:
    """Sentences of ``text`` in order, without surrounding whitespace.

    A sentence ends at a newline, at ``?`` or ``!``, at ``.`` (or ``…``, ``。``) followed by a space or
    closing the Korean word before it ("다.", "요."), and at ``~`` after a sentence ending followed by a
    space ("감사합니다~ "). Decimal points, list numbers ("1. "), abbreviations inside words and ranges
    ("3~5만원") do not end a sentence.
    """
    sentences = []
    start = 0
    index = 0
    length = len(text)
    while match := _BREAK_CANDIDATE_RE.search(text, index):  # every other character just moves on
        index = match.start()
        if text[index] == "\n":
            _append(sentences, text, start, index)
            start = index = index + 1
            continue
        run_end = index
        while run_end < length and (text[run_end] in _TERMINATORS or text[run_end] == "~"):
            run_end += 1
        while run_end < length and text[run_end] in _CLOSERS:
            run_end += 1
        if _ends_sentence(text, start, index, run_end):
            _append(sentences, text, start, run_end)
            start = run_end
        index = run_end
    _append(sentences, text, start, length)
    return sentences


def _ends_sentence(text: str, start: int, run_start: int, run_end: int) -> bool:
    run = text[run_start:run_end]
    before = text[run_start - 1] if run_start > 0 else ""
    after = text[run_end] if run_end < len(text) else ""
    at_break = after == "" or after.isspace()
    if "?" in run or "!" in run or "？" in run or "！" in run:
        return True
    if set(run.rstrip(_CLOSERS)) <= {"~"}:
        return at_break and before in _SENTENCE_ENDINGS
    if _LIST_MARKER_RE.fullmatch(text[start:run_start].strip()):  # "1. 제품명", "A. 조건"
        return False
    return at_break or (is_hangul_syllable(before) and not after.isdigit())


def _append(sentences: list[Sentence], text: str, start: int, end: int) -> None:
    segment = text[start:end]
    if sentence := segment.strip():
        start += len(segment) - len(segment.lstrip())
        sentences.append(Sentence(text=sentence, start=start, end=start + len(sentence)))


def text_without(text: str, sentences: list[Sentence], removed: Iterable[int]) -> str:
    """``text`` without the sentences at the ``removed`` indexes, whitespace tidied.

    Kept sentences keep their line structure: a line break between two kept sentences stays a line
    break (a blank line stays one blank line), anything else becomes one space; runs of spaces inside a
    sentence become one.
    """
    removed = set(removed)
    parts = []
    pending = None  # the strongest break between the last kept sentence and the next one
    for index, sentence in enumerate(sentences):
        if index:
            gap = text[sentences[index - 1].end : sentence.start]
            separator = " " if "\n" not in gap else "\n\n" if _BLANK_LINE_RE.search(gap) else "\n"
            pending = separator if pending is None else max(pending, separator, key=_SEPARATOR_STRENGTH.index)
        if index in removed:
            continue
        if parts:
            parts.append(pending)
        parts.append(_single_spaced(sentence.text))
        pending = None
    return "".join(parts)


def _single_spaced(text: str) -> str:
    # The substitution changes only two spaces in a row or a space other than " ", which most sentences lack: four
    # searches of a short text are cheaper than the regex's pass.
    if "  " in text or "\t" in text or "\u00a0" in text or "\u3000" in text:
        return _SPACES_RE.sub(" ", text)
    return text
