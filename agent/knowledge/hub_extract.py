"""The local extractor: a document's chunks and a knowledge graph draft, without an LLM.

Chunks follow the document's own structure: a Markdown heading starts a new chunk and is repeated at the top of
each chunk of its section, paragraphs are packed up to a size, and an oversized paragraph is cut at sentence
ends. Entities are the terms of `korean_terms`: proper nouns always, then the chunk's most frequent domain nouns
(nouns found in at least two documents or in the product catalogue — a word of one document is rarely a thing).
Each entity's description is the statements it appears in, each written `[section path] sentence` (see
`passages`); two entities in one statement are related, and that statement describes the relation. Headings
are context, never statements.
"""

import re
from dataclasses import dataclass, field

from agent.knowledge.korean_terms import (
    PROPER_NOUN_KINDS,
    ProperNounLexicon,
    sentences_split,
    terms_extract,
    text_normalise,
)
from agent.knowledge.passages import chunk_units

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*$")
_BLANK_LINES = re.compile(r"\n\s*\n")
DESCRIPTION_MAX_CHARS = 600


@dataclass
class EntityDraft:
    name: str
    kind: str
    sentences: list[str] = field(default_factory=list)
    chunk_aliases: list[str] = field(default_factory=list)


@dataclass
class RelationDraft:
    source: str
    target: str
    sentences: list[str] = field(default_factory=list)
    chunk_aliases: list[str] = field(default_factory=list)
    occurrences: dict[str, int] = field(default_factory=dict)  # chunk alias → sentences with both entities


@dataclass
class GraphDraft:
    """What one document adds to a workspace's graph; chunk aliases are `<doc id>-<n>`."""

    doc_id: str
    file_path: str
    chunks: dict[str, str]  # alias → content
    entities: dict[str, EntityDraft]
    relations: dict[tuple[str, str], RelationDraft]


def document_chunks(content: str, *, max_chars: int) -> list[str]:
    """Split a text or Markdown document into self-contained chunks of about `max_chars` characters."""
    chunks: list[str] = []
    headings: list[tuple[int, str]] = []
    paragraphs: list[str] = []

    def flush():
        if paragraphs:
            prefix = " > ".join(title for _, title in headings)
            chunks.append("\n\n".join([prefix, *paragraphs] if prefix else paragraphs))
            paragraphs.clear()

    for block in _BLANK_LINES.split(text_normalise(content).replace("\r\n", "\n").strip()):
        lines = []
        for line in block.strip().split("\n"):
            heading = _HEADING.match(line.strip())
            if heading:
                if lines:
                    paragraphs.append("\n".join(lines))
                    lines = []
                flush()
                level = len(heading.group(1))
                headings[:] = [(lvl, title) for lvl, title in headings if lvl < level] + [(level, heading.group(2))]
            else:
                lines.append(line.rstrip())
        if not lines:
            continue
        for piece in _paragraph_pieces("\n".join(lines), max_chars):
            if paragraphs and sum(len(p) for p in paragraphs) + len(piece) > max_chars:
                flush()
            paragraphs.append(piece)
    flush()
    return list(dict.fromkeys(chunk for chunk in chunks if chunk.strip()))


def _paragraph_pieces(paragraph: str, max_chars: int) -> list[str]:
    if len(paragraph) <= max_chars:
        return [paragraph]
    pieces, current = [], ""
    for _, sentence in sentences_split(paragraph):
        for part in (sentence[i : i + max_chars] for i in range(0, len(sentence), max_chars)):
            if current and len(current) + 1 + len(part) > max_chars:
                pieces.append(current)
                current = ""
            current = f"{current} {part}".strip()
    if current:
        pieces.append(current)
    return pieces


def graph_draft_build(
    *,
    doc_id: str,
    file_path: str,
    chunks: list[str],
    lexicon: ProperNounLexicon | None,
    entities_per_chunk: int,
    relations_per_chunk: int,
    domain_terms: frozenset[str] | None = None,
) -> GraphDraft:
    """The graph one document adds. `domain_terms` are the common nouns that may become entities (those found
    in at least two documents or in the product catalogue); None lets every noun qualify."""
    draft = GraphDraft(doc_id=doc_id, file_path=file_path, chunks={}, entities={}, relations={})
    for index, chunk in enumerate(chunks):
        alias = f"{doc_id}-{index}"
        draft.chunks[alias] = chunk
        _chunk_graph_add(draft, alias, chunk, lexicon, entities_per_chunk, relations_per_chunk, domain_terms)
    return draft


def _chunk_graph_add(draft, alias, chunk, lexicon, entities_per_chunk, relations_per_chunk, domain_terms):
    # The statements of the chunk, each with its section path: a heading is never a statement, so it neither
    # names a relation nor describes an entity.
    units = chunk_units(text_normalise(chunk))
    unit_terms = [
        [
            term
            for term in terms_extract(unit.text, lexicon)
            if term.kind in PROPER_NOUN_KINDS or domain_terms is None or term.name in domain_terms
        ]
        for unit in units
    ]
    selected = _entities_select([term for terms in unit_terms for term in terms], entities_per_chunk)

    sentence_entities: list[list[str]] = [[] for _ in units]
    for index, (unit, terms) in enumerate(zip(units, unit_terms, strict=True)):
        for term in terms:
            if term.name not in selected:
                continue
            entity = draft.entities.get(term.name)
            if entity is None:
                entity = draft.entities[term.name] = EntityDraft(name=term.name, kind=selected[term.name])
            elif entity.kind not in PROPER_NOUN_KINDS and selected[term.name] in PROPER_NOUN_KINDS:
                entity.kind = selected[term.name]
            _append_unique(entity.chunk_aliases, alias)
            _append_unique(entity.sentences, unit.line())
            if term.name not in sentence_entities[index]:
                sentence_entities[index].append(term.name)

    pairs = []
    for index, names in enumerate(sentence_entities):
        for i, source in enumerate(names):
            for target in names[i + 1 :]:
                proper = (selected[source] in PROPER_NOUN_KINDS) + (selected[target] in PROPER_NOUN_KINDS)
                pairs.append((-proper, index, source, target))
    pairs.sort(key=lambda pair: pair[:2])
    for _, index, source, target in pairs[:relations_per_chunk]:
        key = tuple(sorted((source, target)))
        relation = draft.relations.get(key)
        if relation is None:
            relation = draft.relations[key] = RelationDraft(source=key[0], target=key[1])
        _append_unique(relation.chunk_aliases, alias)
        _append_unique(relation.sentences, units[index].line())
        relation.occurrences[alias] = relation.occurrences.get(alias, 0) + 1


def _entities_select(terms, limit: int) -> dict[str, str]:
    """Proper nouns always; then nouns by frequency in the chunk, earlier first on ties, up to `limit` in all."""
    selected = {term.name: term.kind for term in terms if term.kind in PROPER_NOUN_KINDS}
    counts: dict[str, int] = {}
    for term in terms:
        if term.name not in selected:
            counts[term.name] = counts.get(term.name, 0) + 1
    ranked = sorted(counts, key=lambda name: -counts[name])  # sorted() is stable: ties keep text order
    for name in ranked[: max(limit - len(selected), 0)]:
        selected[name] = next(term.kind for term in terms if term.name == name)
    return selected


def _append_unique(values: list, value) -> None:
    if value not in values:
        values.append(value)


def description_merge(existing: str, sentences: list[str]) -> str:
    """One sentence per line, existing lines first, no repeats, at most DESCRIPTION_MAX_CHARS."""
    lines = [line for line in (existing or "").split("\n") if line.strip()]
    for sentence in sentences:
        if sentence not in lines:
            lines.append(sentence)
    merged: list[str] = []
    for line in lines:
        if merged and sum(len(kept) + 1 for kept in merged) + len(line) > DESCRIPTION_MAX_CHARS:
            break
        merged.append(line)
    return "\n".join(merged)
