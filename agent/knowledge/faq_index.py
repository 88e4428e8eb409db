"""The Qdrant index of the FAQ store. The database is the source of truth; everything here can be rebuilt from it.

One `QdrantClient` per process, created on first use (so after a Celery/gunicorn fork, never inherited): a
Qdrant server when `QDRANT_URL` is set — every process then reads and writes the server — or local mode in the
`QDRANT_PATH` folder otherwise. Local mode locks its folder for one client in one process and is not safe for
concurrent writers in threads, so every local call holds one process-wide lock, and exactly one process owns the
folder:

- the first process that needs the index finds the folder's lock free (tested with `flock` before any client is
  built: qdrant-client reads every collection before it tries the lock, seconds at 20,000 entries), opens it,
  writes `owner.json` (pid, host, start) and serves the index to the others over a Unix socket beside it
  (`_OwnerServer`);
- every other process on the host sends its index calls (sync, searches, writes, counts, rebuild) to the owner
  and gets the owner's answer: the same results, always as fresh as the owner's sync from the database;
- when the owner is gone its lock is free again and the next caller becomes the owner; a folder held by a client
  that does not serve (a `QdrantClient(path=…)` in a shell) gives `FaqIndexUnavailable` at once, naming the
  holder — never a silent fallback. `faq_index_owner()` reports the owner for the health page.

Each point carries three vectors: `dense` (the question, document mode), `passage` ("질문: …\\n답변: …", used
by the local reranker so it never embeds at query time) and `sparse` (model-free hashed terms of question,
answer, category and source, seed 001). The collection name includes the embedder's name, so switching the
embedding provider starts a new collection that `rebuild_faq_index` fills.
"""

import atexit
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import socket
import struct
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections
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
    """The index cannot be reached (server down, or the local folder is held by a process that does not serve it)."""


class _FolderHeld(FaqIndexUnavailable):
    """The local folder is locked by another process: the index calls ask that process (the owner) instead."""

    def __init__(self, folder: str):
        super().__init__(f"the local Qdrant folder {folder} is held by another process (see faq_index_owner())")


@dataclass
class _ClientState:
    client: object = None
    config: tuple = ()
    pid: int = 0
    collections_ready: set = None
    # id of the newest FaqVersion this process has applied to the index (None: not reconciled yet)
    synced_version_id: dict = None
    owner_server: object = None  # local mode: serves the folder this process holds to the host's other processes


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
    """This process's client; reopened when the configuration changed or the process was forked.

    In local mode the folder's lock is tried first: a folder another process holds raises `_FolderHeld` (the
    caller then asks that process) without building a client, which would read every collection before failing.
    """
    config = _client_config()
    with _local_lock:
        if _state.client is not None and _state.config == config and _state.pid == os.getpid():
            return _state.client
        if _state.client is not None and _state.pid == os.getpid():
            _owner_release()
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
            if not _folder_free(config[1]):
                raise _FolderHeld(config[1])
            try:
                client = QdrantClient(path=config[1])
            except RuntimeError as error:
                if "already accessed" in str(error):  # taken between the lock test and the open
                    raise _FolderHeld(config[1]) from error
                raise
        _state.client, _state.config, _state.pid = client, config, os.getpid()
        if config[0] == "local":
            _owner_claim(config[1])
        # Closed while the interpreter still works: a local client left to its finaliser prints a traceback at
        # exit (its close imports modules) and keeps the folder's lock files until the process is gone.
        atexit.unregister(faq_index_reset)
        atexit.register(faq_index_reset)
        return client


def _forget_client():
    _state.client, _state.config, _state.pid = None, (), 0
    _state.collections_ready = set()
    _state.synced_version_id = {}


def faq_index_reset(*, drop: bool = False) -> None:
    """Close this process's client (releasing a local folder and stopping its owner server); with `drop`, delete
    the collection first.

    Tests call it to start from an empty index in a temporary `QDRANT_PATH`.
    """
    with _local_lock:
        if drop:
            client = faq_index_client()
            name = faq_collection_name()
            if client.collection_exists(name):
                client.delete_collection(name)
        if _state.client is not None and _state.pid == os.getpid():
            _owner_release()
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


def _local_points_upsert(entries) -> int:
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


def _local_points_delete(point_ids) -> None:
    from qdrant_client import models

    point_ids = [str(point_id) for point_id in point_ids]
    if point_ids:
        _call(lambda client, name: client.delete(name, points_selector=models.PointIdsList(points=point_ids)))


def _local_vector_count() -> int:
    return _call(lambda client, name: client.count(name, exact=True).count)


def _local_rebuild() -> int:
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
        count = _local_points_upsert(FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE).order_by("pk").iterator())
        _state.synced_version_id[name] = latest_version_id
    return count


def _local_sync() -> int:
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
        _local_points_delete(stale)
        _local_points_upsert(to_index)
        _state.synced_version_id[name] = latest_version_id
    return len(stale) + len(to_index)


def _all_point_ids(client, name) -> set[str]:
    point_ids, offset = set(), None
    while True:
        records, offset = client.scroll(name, limit=1024, offset=offset, with_payload=False, with_vectors=False)
        point_ids.update(str(record.id) for record in records)
        if offset is None:
            return point_ids


def _local_dense_search(vector, *, limit: int, score_threshold: float, using: str = DENSE) -> list:
    return _call(
        lambda client, name: (
            client.query_points(
                name,
                query=[float(value) for value in vector],
                using=using,
                limit=limit,
                score_threshold=score_threshold,
                with_payload=True,
                with_vectors=[DENSE, PASSAGE],
            ).points
        )
    )


def _local_stored_vectors(point_ids) -> dict[str, dict]:
    """The stored `dense` and `passage` vectors of these points, by point id (missing points are left out)."""
    point_ids = [str(point_id) for point_id in point_ids]
    if not point_ids:
        return {}
    records = _call(
        lambda client, name: client.retrieve(name, ids=point_ids, with_payload=False, with_vectors=[DENSE, PASSAGE])
    )
    return {str(record.id): record.vector or {} for record in records}


def _local_sparse_search(vector, *, limit: int) -> list:
    if not vector.indices:
        return []
    return _call(
        lambda client, name: (
            client.query_points(
                name, query=vector, using=SPARSE, limit=limit, with_payload=True, with_vectors=[DENSE, PASSAGE]
            ).points
        )
    )


# --- the index as every caller sees it: this process's client, or the owner's over its socket ----------------------


def faq_points_upsert(entries) -> int:
    """Embed and upsert entries; marks them indexed. Returns how many were written."""
    entries = list(entries)
    return _served("upsert", lambda: _local_points_upsert(entries), entry_ids=[entry.pk for entry in entries])


def faq_points_delete(point_ids) -> None:
    point_ids = [str(point_id) for point_id in point_ids]
    if point_ids:
        _served("delete", lambda: _local_points_delete(point_ids), point_ids=point_ids)


def faq_index_vector_count() -> int:
    return _served("count", _local_vector_count)


def faq_index_rebuild() -> int:
    """Drop the collection and index every active entry from the database. Returns the number indexed."""
    return _served("rebuild", _local_rebuild, timeout=settings.FAQ_INDEX_REBUILD_TIMEOUT_SECONDS)


def faq_index_sync() -> int:
    """Apply changes made since the index last looked (see `_local_sync`); in another process than the owner, the
    owner syncs. Returns the number of points written or deleted."""
    return _served("sync", _local_sync)


def faq_index_dense_search(vector, *, limit: int, score_threshold: float, using: str = DENSE) -> list:
    """Points nearest `vector` by one named vector: `dense` (the stored question) or `passage` (question and
    answer), at or above `score_threshold`, best first, with their payload and both dense vectors."""
    if using not in (DENSE, PASSAGE):
        raise ValueError(f"unknown dense vector {using!r}")
    vector = [float(value) for value in vector]
    return _served(
        "dense_search",
        lambda: _local_dense_search(vector, limit=limit, score_threshold=score_threshold, using=using),
        vector=vector,
        limit=limit,
        score_threshold=score_threshold,
        using=using,
    )


def faq_index_stored_vectors(point_ids) -> dict[str, dict]:
    """The stored `dense` and `passage` vectors of these points, by point id (missing points are left out)."""
    point_ids = [str(point_id) for point_id in point_ids]
    if not point_ids:
        return {}
    return _served("stored_vectors", lambda: _local_stored_vectors(point_ids), point_ids=point_ids)


def faq_index_sparse_search(vector, *, limit: int) -> list:
    if not vector.indices:
        return []
    return _served(
        "sparse_search",
        lambda: _local_sparse_search(vector, limit=limit),
        vector=vector.model_dump(mode="json"),
        limit=limit,
    )


def _served(operation: str, local, *, timeout: float | None = None, **arguments):
    """Run `local` here when this process can use the index itself; else send the operation to the owner."""
    if _is_local() and not _holds_folder() and not _folder_free(_client_config()[1]):
        return _owner_ask(operation, arguments, timeout)
    try:
        return local()
    except _FolderHeld:  # another process took the folder between the lock test and the open
        return _owner_ask(operation, arguments, timeout)


def _holds_folder() -> bool:
    return _state.client is not None and _state.config == _client_config() and _state.pid == os.getpid()


def _folder_free(path: str) -> bool:
    """Whether nobody holds the local folder's lock (`flock` on the `.lock` file qdrant-client locks)."""
    lock_path = Path(path) / ".lock"
    if not lock_path.exists():
        return True
    with open(lock_path, "r+") as lock_file:
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.flock(lock_file, fcntl.LOCK_UN)
        return True


# --- the owner: who holds the local folder, and its socket --------------------------------------------------------

_OWNER_FILE = "owner.json"
_FRAME = struct.Struct("!I")
_MAX_FRAME_BYTES = 64 * 1024 * 1024


def _owner_socket_path(folder: str) -> str:
    """A short path (Unix socket paths are limited to ~100 bytes) in a directory only this user can enter."""
    directory = Path(tempfile.gettempdir()) / f"vcs-faq-index-{os.getuid()}"
    directory.mkdir(mode=0o700, exist_ok=True)
    return str(directory / f"{hashlib.sha256(folder.encode()).hexdigest()[:20]}.sock")


def faq_index_owner() -> dict:
    """Which process owns the FAQ index, for the staff health page.

    `{"backend": "server"}` with `QDRANT_URL`; in local mode `{"backend": "local", "folder", "held": bool,
    "owner": {"pid", "host", "started_at", "socket"} | None, "this_process": bool}` — `owner` is None when nobody
    holds the folder (the next caller takes it) or the holder is not one of ours (a client in a shell).
    """
    if not _is_local():
        return {"backend": "server", "url": settings.QDRANT_URL}
    folder = _client_config()[1]
    this_process = _holds_folder()
    held = this_process or not _folder_free(folder)
    owner = None
    if held:
        with contextlib.suppress(OSError, ValueError):
            owner = json.loads((Path(folder) / _OWNER_FILE).read_text())
    return {"backend": "local", "folder": folder, "held": held, "owner": owner, "this_process": this_process}


def _owner_claim(folder: str) -> None:
    """This process just opened the folder: serve it to the others and say so in `owner.json`."""
    server = _OwnerServer(_owner_socket_path(folder))
    _state.owner_server = server
    record = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "socket": server.path,
    }
    (Path(folder) / _OWNER_FILE).write_text(json.dumps(record))


def _owner_release() -> None:
    server, _state.owner_server = _state.owner_server, None
    if server is not None:
        server.stop()
        with contextlib.suppress(OSError):
            (Path(_state.config[1]) / _OWNER_FILE).unlink()


def _frame_send(connection: socket.socket, payload: dict) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    connection.sendall(_FRAME.pack(len(body)) + body)


def _frame_receive(connection: socket.socket) -> dict:
    header = _receive_exactly(connection, _FRAME.size)
    (length,) = _FRAME.unpack(header)
    if length > _MAX_FRAME_BYTES:
        raise ValueError(f"FAQ index frame of {length} bytes refused")
    return json.loads(_receive_exactly(connection, length).decode("utf-8"))


class _ConnectionDropped(ConnectionError):
    """The other end closed or reset the connection before a whole frame arrived."""


def _receive_exactly(connection: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = connection.recv(min(left, 1 << 20))
        if not chunk:
            raise _ConnectionDropped("the other end closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _points_decode(points: list[dict]) -> list:
    from qdrant_client import models

    return [models.ScoredPoint.model_validate(point) for point in points]


def _sparse_decode(vector: dict):
    from qdrant_client import models

    return models.SparseVector.model_validate(vector)


# What the owner runs for each operation another process sends: (local function, result encoder, result decoder).
def _owner_operations() -> dict:
    from agent.models import FaqEntry

    def points_encode(points):
        return [point.model_dump(mode="json") for point in points]

    def same(value):
        return value

    return {
        "sync": (lambda: _local_sync(), same, same),
        "count": (lambda: _local_vector_count(), same, same),
        "rebuild": (lambda: _local_rebuild(), same, same),
        "upsert": (
            lambda entry_ids: _local_points_upsert(FaqEntry.objects.filter(pk__in=entry_ids).order_by("pk")),
            same,
            same,
        ),
        "delete": (lambda point_ids: _local_points_delete(point_ids), same, same),
        "dense_search": (
            lambda vector, limit, score_threshold, using=DENSE: _local_dense_search(
                vector, limit=limit, score_threshold=score_threshold, using=using
            ),
            points_encode,
            _points_decode,
        ),
        "sparse_search": (
            lambda vector, limit: _local_sparse_search(_sparse_decode(vector), limit=limit),
            points_encode,
            _points_decode,
        ),
        "stored_vectors": (lambda point_ids: _local_stored_vectors(point_ids), same, same),
    }


def _owner_ask(operation: str, arguments: dict, timeout: float | None):
    """Send one operation to the process that owns the local folder and return its result.

    No owner answering (it exited, or the holder is a client that does not serve): if the folder has become free
    this process takes it and runs the operation itself; otherwise `FaqIndexUnavailable` names the holder. An owner
    that drops the connection before it replies (it was exiting), or one that starts serving while this process
    waits for a handover, is asked once more: every operation is idempotent, and the second ask finds the next owner
    or the free folder.
    """
    for attempt in (1, 2):
        try:
            return _owner_ask_once(operation, arguments, timeout)
        except _ConnectionDropped as error:
            if attempt == 2:
                raise FaqIndexUnavailable(f"the FAQ index owner did not answer {operation}: {error}") from error


def _owner_ask_once(operation: str, arguments: dict, timeout: float | None):
    folder = _client_config()[1]
    path = _owner_socket_path(folder)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(timeout or settings.FAQ_INDEX_OWNER_TIMEOUT_SECONDS)
    try:
        try:
            connection.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            handover = "free" if _folder_free(folder) else _handover_awaited(folder, path)
            if handover == "free":
                local, _, _ = _owner_operations()[operation]
                return local(**arguments)
            if handover == "serving":
                raise _ConnectionDropped("the FAQ index owner started serving") from None
            owner = faq_index_owner()["owner"]
            holder = f"process {owner['pid']} on {owner['host']} since {owner['started_at']}" if owner else "a client"
            raise FaqIndexUnavailable(
                f"the local Qdrant folder {folder} is held by another process ({holder}) that does not serve the "
                "FAQ index to other processes: stop it, or set QDRANT_URL"
            ) from None
        try:
            _frame_send(connection, {"operation": operation, "arguments": arguments})
            reply = _frame_receive(connection)
        except (ConnectionResetError, BrokenPipeError) as error:
            raise _ConnectionDropped(str(error)) from error
    except _ConnectionDropped:
        raise
    except (OSError, ValueError) as error:
        raise FaqIndexUnavailable(f"the FAQ index owner did not answer {operation}: {error}") from error
    finally:
        connection.close()
    if "error" in reply:
        raise FaqIndexUnavailable(f"the FAQ index owner failed {operation}: {reply['error']}")
    return _owner_operations()[operation][2](reply["result"])


_HANDOVER_SECONDS = 3.0
_HANDOVER_POLL_SECONDS = 0.05


def _handover_awaited(folder: str, socket_path: str) -> str:
    """An owner of ours (its `owner.json` is there) that holds the folder without serving is exiting or starting:
    wait a moment for the folder to come free ("free") or for a process to listen on its socket ("serving", and
    the caller asks again); "" when neither happens, or when the holder is not one of ours (a client in a shell
    never serves)."""
    if not (Path(folder) / _OWNER_FILE).exists():
        return ""
    # An exiting owner removes `owner.json` before it closes its client: the lock outlives the file a moment.
    deadline = time.monotonic() + _HANDOVER_SECONDS
    while time.monotonic() < deadline:
        time.sleep(_HANDOVER_POLL_SECONDS)
        if _folder_free(folder):
            return "free"
        if _socket_accepts(socket_path):
            return "serving"
    return ""


def _socket_accepts(path: str) -> bool:
    """Whether a process listens at `path` (a socket file left by an owner that was killed accepts nothing)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(_HANDOVER_POLL_SECONDS)
    try:
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


class _OwnerServer:
    """Serves this process's local index to the other processes of the host, one request per connection.

    Requests are handled one at a time on one thread: local-mode calls are serialised by `_local_lock` anyway,
    and the thread keeps one database connection (the sync and upserts read the FAQ tables). The socket is in a
    directory only this user can enter.
    """

    def __init__(self, path: str):
        self.path = path
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # left by an owner that died; the folder lock says it is gone
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        os.chmod(path, 0o600)
        self._listener.listen(64)
        self._listener.settimeout(0.5)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"faq-index-owner-{os.getpid()}", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            while not self._stopping.is_set():
                try:
                    connection, _ = self._listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    return
                with connection:
                    self._answer(connection)
        finally:
            from django.db import connection as database

            database.close()

    def _answer(self, connection: socket.socket) -> None:
        connection.settimeout(settings.FAQ_INDEX_OWNER_TIMEOUT_SECONDS)
        try:
            request = _frame_receive(connection)
            local, encode, _ = _owner_operations()[request["operation"]]
        except (OSError, ValueError, KeyError) as error:
            logger.warning("FAQ index owner: bad request: %s", error)
            return
        close_old_connections()
        try:
            reply = {"result": encode(local(**request.get("arguments", {})))}
        except Exception as error:  # the caller gets the failure as FaqIndexUnavailable
            logger.exception("FAQ index owner: %s failed", request["operation"])
            reply = {"error": f"{type(error).__name__}: {error}"}
        with contextlib.suppress(OSError):
            _frame_send(connection, reply)

    def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
