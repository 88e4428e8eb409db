"""Coroutines that write to and read from one workspace's LightRAG instance; they run on the hub's loop thread."""

import asyncio
import logging
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from agent.knowledge.embeddings import embedder_get
from agent.knowledge.hub_extract import EntityDraft, GraphDraft, RelationDraft, description_merge, document_chunks
from agent.knowledge.hub_runtime import HubError, HubRuntime, lightrag_modules
from agent.knowledge.korean_terms import PROPER_NOUN_KINDS, text_normalise

logger = logging.getLogger(__name__)

GRAPH_FIELD_SEP = "<SEP>"  # how LightRAG joins several source chunk ids or file paths in one graph field
# Score = cosine(question, item) + KEYWORD_BOOST x share of the question's nouns the item contains. The local
# embedder's cosines of related business texts sit close together (0.1-0.5); the nouns separate "발주 마감" from
# "발주 수량" and catch brand and product names the embedding barely weighs.
KEYWORD_BOOST = 0.25


@dataclass(frozen=True)
class IngestCounts:
    chunks: int
    entities: int
    relations: int
    chunk_ids: tuple[str, ...] = ()  # LightRAG's ids of the document's chunks (what removing it must delete)


@dataclass(frozen=True)
class RemoveCounts:
    """What removing a document took out of a workspace: its own chunks, and the entities and relations that came
    from nothing else (those also found elsewhere keep their other sources)."""

    chunks: int
    entities_deleted: int
    entities_updated: int
    relations_deleted: int
    relations_updated: int


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk, entity or relation of a workspace, scored against the question (see KEYWORD_BOOST)."""

    workspace: str
    kind: str  # "chunk" | "entity" | "relation"
    item_id: str  # LightRAG's id: chunk-…, ent-…, rel-…
    text: str
    score: float
    file_paths: tuple[str, ...]
    entity_type: str = ""


@dataclass(frozen=True)
class WorkspaceHits:
    """What a search of several workspaces found, and which workspaces answered it (failing ones did not)."""

    hits: list[Hit]
    answered: tuple[str, ...]


# --- writes -------------------------------------------------------------------------------------------------------


async def graph_insert(runtime: HubRuntime, slug: str, revision: int, draft: GraphDraft) -> IngestCounts:
    """Insert the local extractor's graph with `ainsert_custom_kg`, merged into what the workspace already holds.

    `ainsert_custom_kg` overwrites a node or edge with the one given and records one source chunk for it; the
    graph keeps every chunk an entity or relation came from, so descriptions are merged before the call and the
    source chunk ids after it.
    """
    lightrag = lightrag_modules()
    entities, relations = _draft_normalise(draft, lightrag.normalize_entity_name)
    chunk_ids = {
        alias: lightrag.compute_mdhash_id(lightrag.sanitize_text_for_encoding(content), prefix="chunk-")
        for alias, content in draft.chunks.items()
    }
    async with runtime.workspace(slug, revision) as rag:
        graph = rag.chunk_entity_relation_graph
        old_nodes = await graph.get_nodes_batch(list(entities))
        old_edges = await graph.get_edges_batch([{"src": source, "tgt": target} for source, target in relations])
        custom_kg = {
            "chunks": [
                {"content": content, "source_id": alias, "file_path": draft.file_path, "chunk_order_index": order}
                for order, (alias, content) in enumerate(draft.chunks.items())
            ],
            "entities": [
                _entity_payload(entity, old_nodes.get(name), draft.file_path) for name, entity in entities.items()
            ],
            "relationships": [
                _relation_payload(relation, old_edges.get(key), chunk_ids, draft.file_path)
                for key, relation in relations.items()
            ],
        }
        await rag.ainsert_custom_kg(custom_kg, full_doc_id=draft.doc_id)

        new_nodes = await graph.get_nodes_batch(list(entities))
        await graph.upsert_nodes_batch(
            [
                (name, _sources_merged(new_nodes[name], old_nodes.get(name), entity, chunk_ids, draft, rag))
                for name, entity in entities.items()
                if name in new_nodes
            ]
        )
        new_edges = await graph.get_edges_batch([{"src": source, "tgt": target} for source, target in relations])
        await graph.upsert_edges_batch(
            [
                (*key, _sources_merged(new_edges[key], old_edges.get(key), relation, chunk_ids, draft, rag))
                for key, relation in relations.items()
                if key in new_edges
            ]
        )
        await graph.index_done_callback()
    return IngestCounts(
        chunks=len(draft.chunks),
        entities=len(entities),
        relations=len(relations),
        chunk_ids=tuple(dict.fromkeys(chunk_ids.values())),
    )


def _draft_normalise(draft: GraphDraft, normalise) -> tuple[dict, dict]:
    """Entity names as LightRAG stores them; drafts that become the same name are merged, self-loops dropped."""
    names, entities = {}, {}
    for raw_name, entity in draft.entities.items():
        name = normalise(raw_name)
        if not name:
            continue
        names[raw_name] = name
        merged = entities.setdefault(name, EntityDraft(name=name, kind=entity.kind))
        if merged.kind not in PROPER_NOUN_KINDS:
            merged.kind = entity.kind
        merged.sentences += [sentence for sentence in entity.sentences if sentence not in merged.sentences]
        merged.chunk_aliases += [alias for alias in entity.chunk_aliases if alias not in merged.chunk_aliases]
    relations = {}
    for relation in draft.relations.values():
        source, target = names.get(relation.source), names.get(relation.target)
        if not source or not target or source == target:
            continue
        key = tuple(sorted((source, target)))
        merged = relations.setdefault(key, RelationDraft(source=key[0], target=key[1]))
        merged.sentences += [sentence for sentence in relation.sentences if sentence not in merged.sentences]
        merged.chunk_aliases += [alias for alias in relation.chunk_aliases if alias not in merged.chunk_aliases]
        for alias, count in relation.occurrences.items():
            merged.occurrences[alias] = merged.occurrences.get(alias, 0) + count
    return entities, relations


def _entity_payload(entity: EntityDraft, old_node: dict | None, file_path: str) -> dict:
    old_type = (old_node or {}).get("entity_type", "")
    keep_old_type = old_type in PROPER_NOUN_KINDS and entity.kind not in PROPER_NOUN_KINDS
    return {
        "entity_name": entity.name,
        "entity_type": old_type if keep_old_type else entity.kind,
        "description": description_merge(_description_of(old_node), entity.sentences),
        "source_id": entity.chunk_aliases[0],
        "file_path": file_path,
    }


def _relation_payload(relation: RelationDraft, old_edge: dict | None, chunk_ids: dict, file_path: str) -> dict:
    old_sources = _field_values(old_edge, "source_id")
    # Co-occurrences in chunks the edge already counted (the same document ingested again) are not added twice.
    new_occurrences = sum(count for alias, count in relation.occurrences.items() if chunk_ids[alias] not in old_sources)
    keywords = [*_field_values(old_edge, "keywords", separator=","), relation.source, relation.target]
    return {
        "src_id": relation.source,
        "tgt_id": relation.target,
        "description": description_merge(_description_of(old_edge), relation.sentences),
        "keywords": ", ".join(dict.fromkeys(keyword.strip() for keyword in keywords if keyword.strip())),
        "weight": max(float((old_edge or {}).get("weight") or 0) + new_occurrences, 1.0),
        "source_id": relation.chunk_aliases[0],
        "file_path": file_path,
    }


def _sources_merged(current: dict, old: dict | None, draft_item, chunk_ids: dict, draft: GraphDraft, rag) -> dict:
    limit = rag.max_source_ids_per_entity if isinstance(draft_item, EntityDraft) else rag.max_source_ids_per_relation
    sources = _field_values(old, "source_id") + [chunk_ids[alias] for alias in draft_item.chunk_aliases]
    file_paths = [*_field_values(old, "file_path"), draft.file_path]
    return {
        **current,
        "source_id": GRAPH_FIELD_SEP.join(list(dict.fromkeys(sources))[-limit:]),
        "file_path": GRAPH_FIELD_SEP.join(list(dict.fromkeys(file_paths))[-rag.max_file_paths :]),
    }


def _field_values(item: dict | None, field: str, separator: str = GRAPH_FIELD_SEP) -> list[str]:
    value = (item or {}).get(field) or ""
    return [part for part in str(value).split(separator) if part and part not in ("UNKNOWN", "custom_kg")]


def _description_of(item: dict | None) -> str:
    description = (item or {}).get("description") or ""
    return "" if description in ("UNKNOWN", "No description provided") else description.replace(GRAPH_FIELD_SEP, "\n")


async def document_insert_llm(
    runtime: HubRuntime, slug: str, revision: int, *, doc_id: str, content: str, file_path: str
) -> IngestCounts:
    """LightRAG's own pipeline: its chunker, then one LLM extraction call per chunk."""
    async with runtime.workspace(slug, revision) as rag:
        status = await rag.doc_status.get_by_id(doc_id)
        if status is not None and status.get("status") != "processed":
            await rag.adelete_by_doc_id(doc_id)  # an earlier attempt failed half-way: start from nothing
            status = None
        if status is None:
            await rag.ainsert(content, ids=[doc_id], file_paths=[file_path])
            status = await rag.doc_status.get_by_id(doc_id)
        if status is None or status.get("status") != "processed":
            reason = (status or {}).get("error_msg") or "no status recorded"
            raise HubError(f"LightRAG did not process the document: {reason}")
        entities = await rag.full_entities.get_by_id(doc_id) or {}
        relations = await rag.full_relations.get_by_id(doc_id) or {}
    return IngestCounts(
        chunks=status.get("chunks_count") or 0,
        entities=entities.get("count") or 0,
        relations=relations.get("count") or 0,
    )


# --- removal ----------------------------------------------------------------------------------------------------


def chunk_ids_of(content: str, *, max_chars: int) -> list[str]:
    """LightRAG's chunk ids of a document the local extractor chunked (for rows ingested before ids were kept)."""
    lightrag = lightrag_modules()
    return [
        lightrag.compute_mdhash_id(lightrag.sanitize_text_for_encoding(chunk), prefix="chunk-")
        for chunk in document_chunks(content, max_chars=max_chars)
    ]


async def document_remove_llm(runtime: HubRuntime, slug: str, revision: int, *, doc_id: str) -> RemoveCounts:
    """LightRAG's own deletion of a document it extracted: chunks, entities and relations, the rest rebuilt."""
    async with runtime.workspace(slug, revision) as rag:
        chunks = len((await rag.doc_status.get_by_id(doc_id) or {}).get("chunks_list") or [])
        result = await rag.adelete_by_doc_id(doc_id)
    if result.status not in ("success", "not_found"):
        raise HubError(f"LightRAG did not delete the document: {result.status}: {result.message}")
    return RemoveCounts(chunks=chunks, entities_deleted=0, entities_updated=0, relations_deleted=0, relations_updated=0)


async def document_remove_local(
    runtime: HubRuntime,
    slug: str,
    revision: int,
    *,
    doc_id: str,
    chunk_ids: list[str],
    kept_chunk_ids: set[str],
) -> RemoveCounts:
    """Take a document the local extractor built out of the workspace: LightRAG keeps no record of a custom-KG
    insert (`adelete_by_doc_id` finds nothing), so the graph is read and every item that cites its chunks is fixed.

    - its chunks go from the chunk store and the chunk vectors, except those another document still has
      (`kept_chunk_ids`: the same paragraph in two documents is one chunk);
    - an entity or relation citing only those chunks is deleted (graph and vectors; a relation too when one of its
      entities goes);
    - one that also cites other chunks keeps them: its description keeps only the lines found in a remaining
      chunk, its file paths lose the document's, a relation's weight shrinks in proportion, and its vector is
      written again from the new description — a removed document's sentence never stays as evidence.
    """
    lightrag = lightrag_modules()
    removed = set(chunk_ids) - kept_chunk_ids
    own_path = f"{doc_id}:"
    async with runtime.workspace(slug, revision) as rag:
        graph = rag.chunk_entity_relation_graph
        nodes, edges = await graph.get_all_nodes(), await graph.get_all_edges()
        node_plans = [(node, _sources_left(node, removed)) for node in nodes]
        node_plans = [(node, left) for node, left in node_plans if left is not None]
        deleted_nodes = {node["id"] for node, left in node_plans if not left}
        edge_plans = []
        for edge in edges:
            left = _sources_left(edge, removed)
            if left is None and not {edge["source"], edge["target"]} & deleted_nodes:
                continue
            deleted = left is None or not left or bool({edge["source"], edge["target"]} & deleted_nodes)
            edge_plans.append((edge, [] if deleted else left))
        remaining_ids = {source for _, left in node_plans + edge_plans for source in left}
        remaining_texts = [
            row["content"]
            for row in await rag.text_chunks.get_by_ids(sorted(remaining_ids))
            if row and row.get("content")
        ]

        node_updates, entity_vectors = [], {}
        for node, left in node_plans:
            if not left:
                continue
            description = _description_kept(node, remaining_texts)
            properties = {
                **{key: value for key, value in node.items() if key != "id"},
                "source_id": GRAPH_FIELD_SEP.join(left),
                "file_path": _paths_without(node, own_path),
                "description": description,
            }
            node_updates.append((node["id"], properties))
            entity_vectors[lightrag.compute_mdhash_id(node["id"], prefix="ent-")] = {
                "content": f"{node['id']}\n{description}",
                "entity_name": node["id"],
                "source_id": properties["source_id"],
                "description": description,
                "entity_type": node.get("entity_type", ""),
                "file_path": properties["file_path"],
            }
        edge_updates, relation_vectors, deleted_edges = [], {}, []
        for edge, left in edge_plans:
            source, target = edge["source"], edge["target"]
            if not left:
                deleted_edges.append((source, target))
                continue
            description = _description_kept(edge, remaining_texts)
            before = len(_field_values(edge, "source_id")) or 1
            properties = {
                **{key: value for key, value in edge.items() if key not in ("source", "target")},
                "source_id": GRAPH_FIELD_SEP.join(left),
                "file_path": _paths_without(edge, own_path),
                "description": description,
                "weight": max(1.0, float(edge.get("weight") or 1.0) * len(left) / before),
            }
            edge_updates.append((source, target, properties))
            relation_id = lightrag.make_relation_vdb_ids(source, target)[0]
            relation_vectors[relation_id] = {
                "src_id": source,
                "tgt_id": target,
                "source_id": properties["source_id"],
                "content": f"{edge.get('keywords', '')}\t{source}\n{target}\n{description}",
                "keywords": edge.get("keywords", ""),
                "description": description,
                "weight": properties["weight"],
                "file_path": properties["file_path"],
            }

        if deleted_edges:
            await graph.remove_edges(deleted_edges)
            await rag.relationships_vdb.delete(
                [relation_id for pair in deleted_edges for relation_id in lightrag.make_relation_vdb_ids(*pair)]
            )
        if deleted_nodes:
            await graph.remove_nodes(sorted(deleted_nodes))
            await rag.entities_vdb.delete(
                [lightrag.compute_mdhash_id(name, prefix="ent-") for name in sorted(deleted_nodes)]
            )
        if node_updates:
            await graph.upsert_nodes_batch(node_updates)
            await rag.entities_vdb.upsert(entity_vectors)
        if edge_updates:
            await graph.upsert_edges_batch(edge_updates)
            await rag.relationships_vdb.upsert(relation_vectors)
        if removed:
            await rag.chunks_vdb.delete(sorted(removed))
            await rag.text_chunks.delete(sorted(removed))
        for storage in (graph, rag.entities_vdb, rag.relationships_vdb, rag.chunks_vdb, rag.text_chunks):
            await storage.index_done_callback()
    return RemoveCounts(
        chunks=len(removed),
        entities_deleted=len(deleted_nodes),
        entities_updated=len(node_updates),
        relations_deleted=len(deleted_edges),
        relations_updated=len(edge_updates),
    )


def _sources_left(item: dict, removed: set[str]) -> list[str] | None:
    """The item's source chunks once `removed` are gone; None when it cites none of them (untouched)."""
    sources = _field_values(item, "source_id")
    if not removed.intersection(sources):
        return None
    return [source for source in sources if source not in removed]


def _paths_without(item: dict, own_path: str) -> str:
    return GRAPH_FIELD_SEP.join(path for path in _field_values(item, "file_path") if not path.startswith(own_path))


def _description_kept(item: dict, remaining_texts: list[str]) -> str:
    """The description's lines (sentences of the chunks the item came from) that a remaining chunk still holds."""
    lines = [line for line in _description_of(item).split("\n") if line]
    kept = [line for line in lines if any(line.rstrip("…") in text for text in remaining_texts)]
    return "\n".join(kept)


# --- reads ------------------------------------------------------------------------------------------------------


async def workspaces_search(
    runtime: HubRuntime,
    targets: list[tuple[str, int]],
    *,
    query: str,
    hl_keywords: list,
    ll_keywords: list,
    nearest: int = 0,
    always: frozenset[str] = frozenset(),
    others: tuple[tuple[str, int], ...] | list[tuple[str, int]] = (),
    others_nearest: int = 0,
) -> WorkspaceHits:
    """Query every (workspace, revision) at once; a workspace that fails is logged and left out.

    `nearest` > 0: when more targets than that (besides the `always` ones) are given, only the `nearest` whose
    content is closest to the question are queried, with the `always` ones (see `workspaces_nearest`).
    `others_nearest` > 0: of the `others` (workspaces routing left out), that many nearest in content are queried
    too.
    """
    # LightRAG embeds the question (chunks) and the joined low- and high-level keywords (entities, relations):
    # one batch here, and every workspace finds the three vectors cached.
    vectors = await runtime.query_embeddings.get(
        embedder_get(), [query, ", ".join(ll_keywords), ", ".join(hl_keywords)]
    )
    query_vector = vectors[0]
    if nearest and len(targets) > nearest + len(always):
        targets = await workspaces_nearest(runtime, targets, vectors, nearest=nearest, always=always)
    if others_nearest and others:
        ranked = await workspaces_ranked(runtime, list(others), vectors)
        targets = [*targets, *ranked[:others_nearest]]
    # The caller keeps a handful of items in all: asking 13 workspaces for the full top-k each would only rank
    # ~600 candidates for them. Each workspace gets its share, never less than a few.
    share = max(1, len(targets))
    top_k = max(5, settings.KNOWLEDGE_HUB_TOP_K * 2 // share)
    chunk_top_k = max(3, settings.KNOWLEDGE_HUB_CHUNK_TOP_K * 2 // share)
    results = await asyncio.gather(
        *(
            _workspace_search(
                runtime, slug, revision, query, hl_keywords, ll_keywords, query_vector, top_k, chunk_top_k
            )
            for slug, revision in targets
        ),
        return_exceptions=True,
    )
    too_short = lightrag_modules().RAGQueryTooShortError
    hits, answered = [], []
    for (slug, _), result in zip(targets, results, strict=True):
        if isinstance(result, too_short):
            continue
        if isinstance(result, BaseException):
            logger.warning("knowledge hub search failed in workspace %s: %r", slug, result)
            continue
        hits.extend(result)
        answered.append(slug)
    return WorkspaceHits(hits, tuple(answered))


async def workspaces_nearest(
    runtime: HubRuntime, targets: list[tuple[str, int]], vectors, *, nearest: int, always: frozenset[str]
) -> list[tuple[str, int]]:
    """The `nearest` targets whose content is closest to the question, plus the `always` ones, in given order.

    Closeness is the best cosine of one vector lookup per store: the question against chunks, its low-level
    keywords against entities, its high-level keywords against relations, the three vectors LightRAG's own query
    would use. Three lookups cost a fraction of a full graph query (~1 ms against ~10-20 ms a workspace).
    """
    candidates = [target for target in targets if target[0] not in always]
    kept = set((await workspaces_ranked(runtime, candidates, vectors))[:nearest])
    return [target for target in targets if target in kept or target[0] in always]


async def workspaces_ranked(runtime: HubRuntime, targets: list[tuple[str, int]], vectors) -> list[tuple[str, int]]:
    """The targets, closest in content to the question first (see `workspaces_nearest`); one that fails to
    answer is left out."""
    query_vector, low_vector, high_vector = vectors

    async def closeness(slug: str, revision: int) -> float:
        async with runtime.workspace(slug, revision) as rag:
            found = [
                *await rag.chunks_vdb.query("", top_k=1, query_embedding=query_vector),
                *await rag.entities_vdb.query("", top_k=1, query_embedding=low_vector),
                *await rag.relationships_vdb.query("", top_k=1, query_embedding=high_vector),
            ]
        return max((float(item["distance"]) for item in found), default=0.0)

    scores = await asyncio.gather(*(closeness(*target) for target in targets), return_exceptions=True)
    ranked = sorted(
        (
            (score, target)
            for score, target in zip(scores, targets, strict=True)
            if not isinstance(score, BaseException)
        ),
        key=lambda pair: -pair[0],
    )
    return [target for _, target in ranked]


async def _workspace_search(
    runtime, slug, revision, query, hl_keywords, ll_keywords, query_vector, top_k, chunk_top_k
) -> list[Hit]:
    lightrag = lightrag_modules()
    param = lightrag.QueryParam(
        mode=settings.KNOWLEDGE_HUB_QUERY_MODE,
        top_k=min(top_k, settings.KNOWLEDGE_HUB_TOP_K),
        chunk_top_k=min(chunk_top_k, settings.KNOWLEDGE_HUB_CHUNK_TOP_K),
        hl_keywords=list(hl_keywords),
        ll_keywords=list(ll_keywords),
        enable_rerank=False,
    )
    async with runtime.workspace(slug, revision) as rag:
        result = await rag.aquery_data(query, param)
        if result.get("status") != "success":  # LightRAG's `no_results` failure: nothing matched
            return []
        data = result.get("data") or {}
        chunks, entities, relations = data.get("chunks", []), data.get("entities", []), data.get("relationships", [])
        entity_ids = [lightrag.compute_mdhash_id(entity["entity_name"], prefix="ent-") for entity in entities]
        relation_ids = [lightrag.make_relation_vdb_ids(rel["src_id"], rel["tgt_id"]) for rel in relations]
        vectors = {
            **await rag.chunks_vdb.get_vectors_by_ids([chunk["chunk_id"] for chunk in chunks]),
            **await rag.entities_vdb.get_vectors_by_ids(entity_ids),
            **await rag.relationships_vdb.get_vectors_by_ids([i for ids in relation_ids for i in ids]),
        }

    keywords = [text_normalise(keyword).lower() for keyword in ll_keywords if keyword != query]

    def score(text, *ids):
        vector = next((vectors[i] for i in ids if i in vectors), None)
        cosine = _cosine(query_vector, vector) if vector is not None else 0.0
        if not keywords:
            return cosine
        normalised = text_normalise(text).lower()
        return cosine + KEYWORD_BOOST * sum(keyword in normalised for keyword in keywords) / len(keywords)

    hits = [
        Hit(
            slug,
            "chunk",
            chunk["chunk_id"],
            chunk["content"],
            score(chunk["content"], chunk["chunk_id"]),
            (chunk["file_path"],),
        )
        for chunk in chunks
    ]
    # An entity or relation reads as its description, one `[section path] sentence` line each, without its
    # name as a label: the same sentence reached through a chunk is then recognisably the same (hub.py merges).
    for entity, entity_id in zip(entities, entity_ids, strict=True):
        description = _description_of(entity)
        if description:
            hits.append(
                Hit(
                    slug,
                    "entity",
                    entity_id,
                    description,
                    score(f"{entity['entity_name']} {description}", entity_id),
                    tuple(_field_values(entity, "file_path")),
                    entity.get("entity_type", ""),
                )
            )
    for relation, ids in zip(relations, relation_ids, strict=True):
        description = _description_of(relation)
        if description:
            hits.append(
                Hit(
                    slug,
                    "relation",
                    ids[0],
                    description,
                    score(f"{relation['src_id']} {relation['tgt_id']} {description}", *ids),
                    tuple(_field_values(relation, "file_path")),
                )
            )
    return hits


def _cosine(query_vector: np.ndarray, vector) -> float:
    vector = np.asarray(vector, dtype=np.float32)
    norms = float(np.linalg.norm(query_vector) * np.linalg.norm(vector))
    return float(np.dot(query_vector, vector) / norms) if norms else 0.0
