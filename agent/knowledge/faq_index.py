"""The Qdrant index of the FAQ store. The database is the source of truth; everything here can be rebuilt from it.

One `QdrantClient` per process, created on first use (so after a Celery/gunicorn fork, never inherited): a
Qdrant server when `QDRANT_URL` is set, local mode in the `QDRANT_PATH` folder otherwise. Local mode locks its
folder for one client in one process and is not safe for concurrent writers in threads, so every call in local
mode holds one process-wide lock, and a process that cannot get the folder raises `FaqIndexUnavailable`; its
writes stay marked unindexed and the process that holds the folder applies them on its next sync.

Each point carries three vectors: `dense` (the question, document mode), `passage` ("질문: …\\n답변: …", used
by the local reranker so it never embeds at query time) and `sparse` (model-free hashed terms of question,
answer, category and source, seed 001). The collection name includes the embedder's name, so switching the
embedding provider starts a new collection that `rebuild_faq_index` fills.
"""

import contextlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from agent.knowledge.embeddings import embedder_get, sparse_vector
from agent.knowledge.rerank import passage_text

logger = logging.getLogger(__name__)

DENSE = "dense"
PASSAGE = "passage"
SPARSE = "sparse"
_UPSERT_BATCH = 256
_REOPEN_AFTER_POINTS = 1000  # see _reopen_local


class FaqIndexUnavailable(RuntimeError):
    """The index cannot be reached (server down, or the local folder is held by another process)."""


@dataclass
class _ClientState:
    client: object = None
    config: tuple = ()
    pid: int = 0
    collections_ready: set = None
    # id of the newest FaqVersion this process has applied to the index (None: not reconciled yet)
    synced_version_id: dict = None


_state = _ClientState(collections_ready=set(), synced_version_id={})
_local_lock = threading.RLock()


def _is_local() -> bool:
    return not settings.QDRANT_URL


def _guard():
    """Serialise every client call in local mode; a server client is thread-safe."""
    return _local_lock if _is_local() else contextlib.nullcontext()


def _client_config() -> tuple:
    if settings.QDRANT_URL:
        return ("server", settings.QDRANT_URL, settings.QDRANT_API_KEY)
    return ("local", str(Path(settings.QDRANT_PATH).resolve()))


def faq_index_client():
    """This process's client; reopened when the configuration changed or the process was forked."""
    config = _client_config()
    with _local_lock:
        if _state.client is not None and _state.config == config and _state.pid == os.getpid():
            return _state.client
        if _state.client is not None and _state.pid == os.getpid():
            _state.client.close()
        from qdrant_client import QdrantClient

        _forget_client()
        if config[0] == "server":
            client = QdrantClient(
                url=settings.QDRANT_URL,
                api_key=settings.QDRANT_API_KEY or None,
                timeout=settings.QDRANT_TIMEOUT_SECONDS,
            )
        else:
            Path(config[1]).mkdir(parents=True, exist_ok=True)
            try:
                client = QdrantClient(path=config[1])
            except RuntimeError as error:
                if "already accessed" in str(error):
                    raise FaqIndexUnavailable(
                        f"the local Qdrant folder {config[1]} is held by another process; "
                        "that process applies FAQ changes on its next search (or set QDRANT_URL)"
                    ) from error
                raise
        _state.client, _state.config, _state.pid = client, config, os.getpid()
        return client


def _forget_client():
    _state.client, _state.config, _state.pid = None, (), 0
    _state.collections_ready = set()
    _state.synced_version_id = {}


def faq_index_reset(*, drop: bool = False) -> None:
    """Close this process's client (releasing a local folder); with `drop`, delete the collection first.

    Tests call it to start from an empty index in a temporary `QDRANT_PATH`.
    """
    with _local_lock:
        if drop:
            client = faq_index_client()
            name = faq_collection_name()
            if client.collection_exists(name):
                client.delete_collection(name)
        if _state.client is not None and _state.pid == os.getpid():
            _state.client.close()
        _forget_client()


def faq_collection_name() -> str:
    return f"{settings.FAQ_COLLECTION_PREFIX}_{embedder_get().name}"


# Every Embedder returns L2-normalised vectors, so a dot product is their cosine: the same scores and thresholds.
# Local mode re-normalises every stored vector on each cosine query and not on a dot-product one (half the time).
def _distance():
    from qdrant_client import models

    return models.Distance.DOT


def _ready_collection(client) -> str:
    from qdrant_client import models

    name = faq_collection_name()
    if name in _state.collections_ready:
        return name
    if client.collection_exists(name) and not _has_current_layout(client, name):
        # Made by an earlier version (cosine): drop it; this process's sync re-indexes it from the database.
        logger.warning("FAQ index %s has an older layout; re-creating it from the database.", name)
        client.delete_collection(name)
        _state.synced_version_id.pop(name, None)
    if not client.collection_exists(name):
        dimension = embedder_get().dimension
        distance = _distance()
        client.create_collection(
            name,
            vectors_config={
                DENSE: models.VectorParams(size=dimension, distance=distance),
                PASSAGE: models.VectorParams(size=dimension, distance=distance),
            },
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )
    _state.collections_ready.add(name)
    return name


def _has_current_layout(client, name: str) -> bool:
    vectors = client.get_collection(name).config.params.vectors
    return all(vector in vectors and vectors[vector].distance == _distance() for vector in (DENSE, PASSAGE))


def _call(operation):
    """Run `operation(client, collection)` under the local-mode lock, mapping transport errors."""
    try:
        with _guard():
            client = faq_index_client()
            return operation(client, _ready_collection(client))
    except FaqIndexUnavailable:
        raise
    except Exception as error:
        from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

        if isinstance(error, ResponseHandlingException | UnexpectedResponse | ConnectionError | TimeoutError):
            raise FaqIndexUnavailable(f"Qdrant call failed: {error}") from error
        raise


def _points(entries) -> list:
    from qdrant_client import models

    embedder = embedder_get()
    question_vectors = embedder.embed_documents([entry.question for entry in entries])
    passage_vectors = embedder.embed_documents([passage_text(entry.question, entry.answer) for entry in entries])
    points = []
    for entry, question_vector, passage_vector in zip(entries, question_vectors, passage_vectors, strict=True):
        sparse_source = " ".join([entry.question, entry.answer, entry.category, entry.source])
        points.append(
            models.PointStruct(
                id=str(entry.point_id),
                vector={
                    DENSE: question_vector.tolist(),
                    PASSAGE: passage_vector.tolist(),
                    SPARSE: sparse_vector(sparse_source),
                },
                payload={
                    "faq_id": entry.pk,
                    "question": entry.question,
                    "answer": entry.answer,
                    "category": entry.category,
                    "url": entry.url,
                    "source": entry.source,
                    "source_created_at": entry.source_created_at.isoformat(),
                },
            )
        )
    return points


def faq_points_upsert(entries) -> int:
    """Embed and upsert entries; marks them indexed. Returns how many were written."""
    from agent.models import FaqEntry

    entries = list(entries)
    for start in range(0, len(entries), _UPSERT_BATCH):
        batch = entries[start : start + _UPSERT_BATCH]
        points = _points(batch)
        _call(lambda client, name, points=points: client.upsert(name, points=points, wait=True))
        FaqEntry.objects.filter(pk__in=[entry.pk for entry in batch]).update(indexed_at=timezone.now())
    if _is_local() and len(entries) >= _REOPEN_AFTER_POINTS:
        _reopen_local()
    return len(entries)


def _reopen_local() -> None:
    """Close this process's local client; the next call reads the folder again.

    Local mode keeps the vectors of a collection filled in this process as float32 and converts the whole matrix
    to float64 on every search (~20 ms at 20,000 points); read back from disk they are float64 (~4-7 ms), and
    later upserts keep them so. After a bulk write (a rebuild, the first sync of a new collection) the one-time
    reload is worth it. What this process has synced stays known.
    """
    with _local_lock:
        synced = dict(_state.synced_version_id)
        faq_index_reset()
        _state.synced_version_id.update(synced)


def faq_points_delete(point_ids) -> None:
    from qdrant_client import models

    point_ids = [str(point_id) for point_id in point_ids]
    if point_ids:
        _call(lambda client, name: client.delete(name, points_selector=models.PointIdsList(points=point_ids)))


def faq_index_vector_count() -> int:
    return _call(lambda client, name: client.count(name, exact=True).count)


def faq_index_rebuild() -> int:
    """Drop the collection and index every active entry from the database. Returns the number indexed."""
    from agent.models import FaqEntry, FaqVersion

    with _guard():
        client = faq_index_client()
        name = faq_collection_name()
        if client.collection_exists(name):
            client.delete_collection(name)
        _state.collections_ready.discard(name)
        latest_version_id = FaqVersion.objects.aggregate(latest=Max("id"))["latest"] or 0
        FaqEntry.objects.update(indexed_at=None)
        count = faq_points_upsert(FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE).order_by("pk").iterator())
        _state.synced_version_id[name] = latest_version_id
    return count


def faq_index_sync() -> int:
    """Apply changes made since this process last looked: one cheap query when nothing changed.

    Every FAQ write adds a `FaqVersion` row, so the newest version id is the index revision. The first call in a
    process reconciles the whole index against the database (point ids both ways); later calls replay only the
    versions added since. Entries whose after-commit index write failed (indexed_at is null) are retried here.
    Returns the number of points written or deleted.
    """
    from agent.models import FaqEntry, FaqVersion

    with _guard():
        client = faq_index_client()
        name = _ready_collection(client)
        latest_version_id = FaqVersion.objects.aggregate(latest=Max("id"))["latest"] or 0
        synced = _state.synced_version_id.get(name)
        if synced == latest_version_id:
            return 0
        active = FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE)
        if synced is None:
            indexed_ids = _all_point_ids(client, name)
            active_rows = list(active.values_list("pk", "point_id", "indexed_at"))
            stale = indexed_ids - {str(point_id) for _, point_id, _ in active_rows}
            missing = [
                pk for pk, point_id, indexed_at in active_rows if indexed_at is None or str(point_id) not in indexed_ids
            ]
            to_index = list(active.filter(pk__in=missing))
        else:
            changed = FaqVersion.objects.filter(id__gt=synced, id__lte=latest_version_id)
            touched = {str(snapshot["point_id"]) for snapshot in changed.values_list("snapshot", flat=True)}
            live = {
                str(point_id) for point_id in active.filter(point_id__in=touched).values_list("point_id", flat=True)
            }
            stale = touched - live
            to_index = list(active.filter(indexed_at__isnull=True))
        faq_points_delete(stale)
        faq_points_upsert(to_index)
        _state.synced_version_id[name] = latest_version_id
    return len(stale) + len(to_index)


def _all_point_ids(client, name) -> set[str]:
    point_ids, offset = set(), None
    while True:
        records, offset = client.scroll(name, limit=1024, offset=offset, with_payload=False, with_vectors=False)
        point_ids.update(str(record.id) for record in records)
        if offset is None:
            return point_ids


def faq_index_dense_search(vector, *, limit: int, score_threshold: float) -> list:
    return _call(
        lambda client, name: (
            client.query_points(
                name,
                query=[float(value) for value in vector],
                using=DENSE,
                limit=limit,
                score_threshold=score_threshold,
                with_payload=True,
                with_vectors=[DENSE, PASSAGE],
            ).points
        )
    )


def faq_index_stored_vectors(point_ids) -> dict[str, dict]:
    """The stored `dense` and `passage` vectors of these points, by point id (missing points are left out)."""
    point_ids = [str(point_id) for point_id in point_ids]
    if not point_ids:
        return {}
    records = _call(
        lambda client, name: client.retrieve(name, ids=point_ids, with_payload=False, with_vectors=[DENSE, PASSAGE])
    )
    return {str(record.id): record.vector or {} for record in records}


def faq_index_sparse_search(vector, *, limit: int) -> list:
    if not vector.indices:
        return []
    return _call(
        lambda client, name: (
            client.query_points(
                name, query=vector, using=SPARSE, limit=limit, with_payload=True, with_vectors=[DENSE, PASSAGE]
            ).points
        )
    )
