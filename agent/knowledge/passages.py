"""Evidence passages: whole sentences and list items, each with the section path it stands under.

A hub chunk is `heading path` + paragraphs (see `hub_extract.document_chunks`). What reaches a model is never a
heading alone and never half a sentence: a paragraph's soft line breaks are joined before it is split into
sentences, a list item is one unit, and each unit is written as one line `[정산 일정 > 정산 주기] 문장`, so the
line says where it stands and nothing else has to be read with it. Entity and relation descriptions are made of
the same lines, so the same sentence reached through a chunk, an entity and a relation is one unit.
"""

import re
import unicodedata
from dataclasses import dataclass

from agent.verification.sentences import split_sentences

PATH_SEPARATOR = " > "
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*•·]|\d{1,2}[.)])\s+")
_UNIT_LINE_RE = re.compile(r"^\[(?P<path>[^\]\n]{1,200})\]\s+(?P<text>\S.*)$")
# A line that ends a sentence; any other line break inside a paragraph is a soft break (the sentence goes on).
_SENTENCE_END_RE = re.compile(r"(?:[.!?。…]|[다요죠음함임니])[\"'”’)\]」』]*\s*$")
_NON_WORD_RE = re.compile(r"[\W_]+")
_MIN_UNIT_CHARS = 4


@dataclass(frozen=True)
class Unit:
    path: str  # "문서 제목 > 절 제목", "" when the text has no headings
    text: str  # one whole sentence or list item

    def line(self) -> str:
        return f"[{self.path}] {self.text}" if self.path else self.text

    @property
    def key(self) -> str:
        """The unit's identity for de-duplication: its text alone, normalised (the path is only context)."""
        return unit_key(self.text)


def unit_key(text: str) -> str:
    return _NON_WORD_RE.sub("", unicodedata.normalize("NFKC", text).lower())


def _is_heading_path(paragraph: str) -> bool:
    return "\n" not in paragraph and not _SENTENCE_END_RE.search(paragraph) and not _LIST_ITEM_RE.match(paragraph)


def chunk_units(chunk: str, *, path: str | None = None) -> list[Unit]:
    """The units of one chunk. Its first paragraph is the heading path when it is one line that is not a
    sentence (the local chunker writes it there); `path` overrides that."""
    paragraphs = [part.strip() for part in re.split(r"\n\s*\n", chunk.strip()) if part.strip()]
    if path is None:
        path = paragraphs.pop(0) if len(paragraphs) > 1 and _is_heading_path(paragraphs[0]) else ""
    units: list[Unit] = []
    for paragraph in paragraphs:
        for text in paragraph_units(paragraph):
            if len(text) >= _MIN_UNIT_CHARS:
                units.append(Unit(path, text))
    return units


def paragraph_units(paragraph: str) -> list[str]:
    """Sentences and list items of one paragraph: list items stand alone, other lines are joined where a
    sentence runs on over a line break, then split at sentence ends."""
    pieces: list[tuple[str, bool]] = []  # (text, is a list item)
    running = ""
    for raw in paragraph.splitlines():
        line = raw.strip()
        if not line:
            continue
        if _LIST_ITEM_RE.match(line):
            if running:
                pieces.append((running, False))
                running = ""
            pieces.append((_LIST_ITEM_RE.sub("", line, count=1), True))
            continue
        running = f"{running} {line}".strip() if running else line
        if _SENTENCE_END_RE.search(line):
            pieces.append((running, False))
            running = ""
    if running:
        pieces.append((running, False))
    units = []
    for piece, is_item in pieces:
        units.extend([piece] if is_item else [sentence.text for sentence in split_sentences(piece)])
    return units


def unit_from_line(line: str) -> Unit:
    """A `[path] text` line back into its unit (a line without a path is a unit without one)."""
    match = _UNIT_LINE_RE.match(line.strip())
    if match:
        return Unit(match["path"].strip(), match["text"].strip())
    return Unit("", line.strip())


def heading_only(text: str) -> bool:
    """Whether a line is a heading or a heading path rather than a statement (`정산 일정 > 정산 주기`)."""
    stripped = text.strip()
    if not stripped or not _is_heading_path(stripped):
        return False
    return PATH_SEPARATOR in stripped or (len(stripped) <= 30 and not re.search(r"[\d:：]", stripped))
