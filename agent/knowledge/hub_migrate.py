"""Copy a workspace from LightRAG's file storages into the configured (PostgreSQL) storages, without re-extracting.

The file storages keep each namespace as one file under `<working dir>/<workspace>/`: JSON key-value stores
(`kv_store_<namespace>.json`), the document status (`kv_store_doc_status.json`), the graph
(`graph_chunk_entity_relation.graphml`) and the vectors (`vdb_<namespace>.json`). They are read as files and
written through the target instance's own storages, so the target keeps LightRAG's layout. Every write is an
upsert by LightRAG's ids: copying again changes nothing.

Vectors: with the vectors kept in files beside PostgreSQL (no `QDRANT_URL`) the `vdb_*.json` files already are the
target's and stay where they are; with Qdrant they are upserted into it (embedded again by the configured
embedder; no LLM call, no extraction).
"""

import json
from dataclasses import dataclass
from pathlib import Path

from agent.knowledge.hub_runtime import HubRuntime

# LightRAG instance attribute -> file of the namespace.
KV_FILES = {
    "full_docs": "kv_store_full_docs.json",
    "text_chunks": "kv_store_text_chunks.json",
    "full_entities": "kv_store_full_entities.json",
    "full_relations": "kv_store_full_relations.json",
    "entity_chunks": "kv_store_entity_chunks.json",
    "relation_chunks": "kv_store_relation_chunks.json",
    "llm_response_cache": "kv_store_llm_response_cache.json",
    "doc_status": "kv_store_doc_status.json",
}
GRAPH_FILE = "graph_chunk_entity_relation.graphml"
VECTOR_FILES = {
    "chunks_vdb": "vdb_chunks.json",
    "entities_vdb": "vdb_entities.json",
    "relationships_vdb": "vdb_relationships.json",
}
_BATCH = 500
_NANO_FIELDS = ("__id__", "__created_at__", "__write_seq__", "vector")


@dataclass
class CopyCounts:
    records: int = 0  # key-value and document-status records
    chunks: int = 0
    nodes: int = 0
    edges: int = 0
    vectors: int = 0


def workspace_has_files(folder: Path) -> bool:
    return (folder / GRAPH_FILE).exists() or (folder / KV_FILES["text_chunks"]).exists()


async def workspace_copy_from_files(
    runtime: HubRuntime, slug: str, revision: int, *, folder: Path, progress=None
) -> CopyCounts:
    """Upsert everything the workspace's files hold into the instance of the configured storages."""
    import networkx

    counts = CopyCounts()
    report = progress or (lambda stage, done: None)
    async with runtime.workspace(slug, revision) as rag:
        for attribute, file_name in KV_FILES.items():
            data = _json(folder / file_name)
            storage = getattr(rag, attribute)
            items = list(data.items())
            for start in range(0, len(items), _BATCH):
                await storage.upsert(dict(items[start : start + _BATCH]))
            counts.records += len(items)
            if attribute == "text_chunks":
                counts.chunks = len(items)
            report(attribute, len(items))
        graph_path = folder / GRAPH_FILE
        if graph_path.exists():
            graph = networkx.read_graphml(graph_path)
            nodes = [(str(node), dict(data)) for node, data in graph.nodes(data=True)]
            edges = [(str(source), str(target), dict(data)) for source, target, data in graph.edges(data=True)]
            for start in range(0, len(nodes), _BATCH):
                await rag.chunk_entity_relation_graph.upsert_nodes_batch(nodes[start : start + _BATCH])
            for start in range(0, len(edges), _BATCH):
                await rag.chunk_entity_relation_graph.upsert_edges_batch(edges[start : start + _BATCH])
            counts.nodes, counts.edges = len(nodes), len(edges)
            report("graph", len(nodes) + len(edges))
        if runtime.storage_names["vector_storage"] != "NanoVectorDBStorage":
            for attribute, file_name in VECTOR_FILES.items():
                rows = _json(folder / file_name).get("data") or []
                storage = getattr(rag, attribute)
                for start in range(0, len(rows), _BATCH):
                    await storage.upsert(
                        {
                            row["__id__"]: {key: value for key, value in row.items() if key not in _NANO_FIELDS}
                            for row in rows[start : start + _BATCH]
                        }
                    )
                counts.vectors += len(rows)
                report(attribute, len(rows))
        for storage in (
            *(getattr(rag, attribute) for attribute in KV_FILES),
            rag.chunk_entity_relation_graph,
            *(getattr(rag, attribute) for attribute in VECTOR_FILES),
        ):
            await storage.index_done_callback()
    return counts


def _json(path: Path) -> dict:
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8")) or {}
