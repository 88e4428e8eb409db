"""The knowledge hub's runtime: one event-loop thread per process owns every LightRAG instance.

LightRAG binds an instance to the event loop it was first used on (another thread's loop hangs silently), keeps
process-wide state in `lightrag.kg.shared_storage`, and its file storages never notice another process's
writes. So, per process (keyed by pid, hence created after a Celery prefork):

- one daemon thread runs one asyncio loop; callers submit coroutines with `HubRuntime.call` and wait with a
  timeout;
- each workspace's instance is created lazily on that loop and remembers the `KnowledgeWorkspace.revision` it
  was loaded at; asked for a newer revision, the runtime retires the instance (closed once its last user is
  done), forgets the workspace's shared state and loads it again from the files;
- LightRAG is imported with its `.env` loading disabled and `os.environ` restored afterwards (`hub_storage`),
  only the modules of the configured storages are imported, and its logger is set to WARNING.

The storages (`KNOWLEDGE_HUB_STORAGE`, see `hub_storage`) change where the data lives, not this: the loop thread,
the per-workspace revision reload and the writers' row lock are the same on every storage.
"""

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import threading
from collections import OrderedDict
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from django.conf import settings

from agent.knowledge import hub_storage
from agent.knowledge.embeddings import LocalUseEmbedder, embedder_get

logger = logging.getLogger(__name__)

EMBEDDING_MAX_TOKEN_SIZE = 8192
EMBEDDING_BATCH_SIZE = 64
EMBEDDER_MARKER = "embedder.json"  # in the working directory: which embedding model built the hub
_QUERY_EMBEDDING_CACHE_SIZE = 512


class HubError(RuntimeError):
    """The knowledge hub could not do what was asked."""


class HubUnavailableError(HubError):
    """The hub cannot serve: it timed out, its loop thread died, or its files belong to another embedder."""


class HubLLMNotConfiguredError(HubError):
    """LightRAG asked for an LLM, but none is configured (retrieval never should: it is given its keywords)."""


# --- importing LightRAG without side effects ------------------------------------------------------------------

_lightrag = None
_import_lock = threading.Lock()


def lightrag_modules() -> SimpleNamespace:
    """The LightRAG names the hub uses, imported once per process without touching the process."""
    global _lightrag
    if _lightrag is None:
        with _import_lock:
            if _lightrag is None:
                _lightrag = _lightrag_import_guarded()
    return _lightrag


def _lightrag_import_guarded() -> SimpleNamespace:
    import importlib

    with hub_storage.lightrag_import_guard():
        from lightrag import LightRAG, QueryParam
        from lightrag.kg import shared_storage
        from lightrag.query_validation import RAGQueryTooShortError, meets_min_rag_query_weight
        from lightrag.utils import (
            EmbeddingFunc,
            Tokenizer,
            compute_mdhash_id,
            make_relation_vdb_ids,
            normalize_entity_name,
            sanitize_text_for_encoding,
        )

        for module in hub_storage.FILE_STORAGE_MODULES:
            importlib.import_module(module)
    for name in ("lightrag", "nano-vectordb"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return SimpleNamespace(
        LightRAG=LightRAG,
        QueryParam=QueryParam,
        EmbeddingFunc=EmbeddingFunc,
        Tokenizer=Tokenizer,
        RAGQueryTooShortError=RAGQueryTooShortError,
        meets_min_rag_query_weight=meets_min_rag_query_weight,
        compute_mdhash_id=compute_mdhash_id,
        make_relation_vdb_ids=make_relation_vdb_ids,
        normalize_entity_name=normalize_entity_name,
        sanitize_text_for_encoding=sanitize_text_for_encoding,
        shared_storage=shared_storage,
    )


# --- what every instance is given -------------------------------------------------------------------------------


class CharacterTokenizer:
    """One token per character. Without a tokenizer LightRAG downloads a tiktoken file with no timeout.

    Stateless, so safe from LightRAG's worker threads and through `copy.deepcopy`. Hangul counts about as it
    does in LLM tokenizers (a syllable is one or two tokens there), which is all LightRAG's budgets need.
    """

    def encode(self, content: str) -> list[int]:
        return [ord(char) for char in content]

    def decode(self, tokens: list[int]) -> str:
        return "".join(chr(token) for token in tokens)


def llm_configured() -> bool:
    return bool(settings.KNOWLEDGE_HUB_LLM_BASE_URL)


async def llm_complete(prompt, system_prompt=None, history_messages=None, **kwargs) -> str:
    """LightRAG's `llm_model_func`: the OpenAI-compatible chat API when configured, an error otherwise."""
    if not llm_configured():
        raise HubLLMNotConfiguredError("no LLM is configured for the knowledge hub (KNOWLEDGE_HUB_LLM_BASE_URL)")
    from openai import AsyncOpenAI

    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    messages += list(history_messages or [])
    messages.append({"role": "user", "content": prompt})
    options = {"response_format": kwargs["response_format"]} if isinstance(kwargs.get("response_format"), dict) else {}
    async with AsyncOpenAI(
        base_url=settings.KNOWLEDGE_HUB_LLM_BASE_URL,
        api_key=settings.KNOWLEDGE_HUB_LLM_API_KEY or "not-needed",
        timeout=settings.KNOWLEDGE_HUB_LLM_TIMEOUT_SECONDS,
        max_retries=2,
    ) as client:
        response = await client.chat.completions.create(
            model=settings.KNOWLEDGE_HUB_LLM_MODEL, messages=messages, **options
        )
    return response.choices[0].message.content or ""


class _QueryEmbeddings:
    """Query texts embedded once per process even when 13 workspaces ask for them at the same moment."""

    def __init__(self):
        self._vectors: OrderedDict[tuple[str, str], asyncio.Future] = OrderedDict()

    async def get(self, embedder, texts: list[str]) -> np.ndarray:
        loop = asyncio.get_running_loop()
        futures, missing = [], []
        for text in texts:
            key = (embedder.name, text)
            future = self._vectors.get(key)
            if future is None or future.cancelled():
                future = self._vectors[key] = loop.create_future()
                missing.append((key, future))
            self._vectors.move_to_end(key)
            futures.append(future)
        if missing:
            try:
                vectors = await asyncio.to_thread(embedder.embed_queries, [key[1] for key, _ in missing])
            except BaseException:
                # Failed or cancelled: forget these texts so the next search embeds them again.
                for key, future in missing:
                    self._vectors.pop(key, None)
                    future.cancel()
                raise
            for (_, future), vector in zip(missing, vectors, strict=True):
                future.set_result(vector)
        while len(self._vectors) > _QUERY_EMBEDDING_CACHE_SIZE:
            self._vectors.popitem(last=False)
        return np.stack([await future for future in futures])


# --- the runtime -------------------------------------------------------------------------------------------------


class _LoadedWorkspace:
    def __init__(self, rag, revision: int):
        self.rag = rag
        self.revision = revision
        self.users = 0
        self.retired = False


class HubRuntime:
    """This process's loop thread and LightRAG instances. Attributes below `loop` are touched on the loop only."""

    def __init__(self):
        self.pid = os.getpid()
        self.working_dir = str(settings.LIGHTRAG_WORKING_DIR)
        # Storage configuration is read here, in the caller's thread (Django's database settings), never on the loop.
        self.storage_names = hub_storage.storage_names()
        self.storage_label = hub_storage.storage_label()
        hub_storage.storage_environment_apply()
        hub_storage.storage_modules_import()
        hub_storage.postgres_client_state_reset()
        self.qdrant = (
            hub_storage.SharedQdrantClient(hub_storage.qdrant_client_create())
            if self.storage_names["vector_storage"] == "QdrantVectorDBStorage"
            else None
        )
        self.loop = asyncio.new_event_loop()
        self.query_embeddings = _QueryEmbeddings()
        self._workspaces: dict[str, _LoadedWorkspace] = {}
        self._load_locks: dict[str, asyncio.Lock] = {}
        self._embedder_checked = False
        self.thread = threading.Thread(target=self._loop_run, name=f"knowledge-hub-{self.pid}", daemon=True)
        self.thread.start()

    def _loop_run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coroutine, *, timeout: float):
        """Run `coroutine` on the hub's loop and wait at most `timeout` seconds for its result."""
        return self.result(self.submit(coroutine), timeout=timeout)

    def submit(self, coroutine) -> concurrent.futures.Future:
        """Start `coroutine` on the hub's loop and return at once; `result` waits for it."""
        if threading.current_thread() is self.thread:
            coroutine.close()
            raise RuntimeError("HubRuntime.call from the hub's own loop thread would wait on itself")
        if not self.thread.is_alive():
            coroutine.close()
            raise HubUnavailableError("the knowledge hub's loop thread is not running")
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    @staticmethod
    def result(future: concurrent.futures.Future, *, timeout: float):
        """The submitted coroutine's result, waiting at most `timeout` seconds (then it is cancelled)."""
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError as error:
            future.cancel()
            raise HubUnavailableError(f"the knowledge hub did not answer within {timeout:g} s") from error

    @contextlib.asynccontextmanager
    async def workspace(self, slug: str, revision: int):
        """The workspace's instance, loaded at `revision`; it is not closed while the caller holds it."""
        loaded = await self._loaded(slug, revision)
        loaded.users += 1
        try:
            yield loaded.rag
        finally:
            loaded.users -= 1
            if loaded.retired and loaded.users == 0:
                await _instance_close(loaded.rag)

    def loaded_revisions(self) -> dict[str, int]:
        """Revision of every loaded workspace (for tests and the benchmark)."""
        return self.call(self._loaded_revisions(), timeout=5)

    async def _loaded_revisions(self) -> dict[str, int]:
        return {slug: loaded.revision for slug, loaded in self._workspaces.items()}

    async def revision_advance(self, slug: str, *, before: int, after: int) -> None:
        """After a committed write by this process: the loaded copy already holds revision `after`."""
        loaded = self._workspaces.get(slug)
        if loaded is not None and loaded.revision == before:
            loaded.revision = after

    async def workspace_forget(self, slug: str) -> None:
        """After a failed write: the in-memory copy may hold part of it, so the next use reloads from the files."""
        loaded = self._workspaces.get(slug)
        if loaded is not None:
            loaded.revision = -1

    async def _loaded(self, slug: str, revision: int) -> _LoadedWorkspace:
        loaded = self._workspaces.get(slug)
        if loaded is not None and loaded.revision == revision:
            return loaded
        async with self._load_locks.setdefault(slug, asyncio.Lock()):
            loaded = self._workspaces.get(slug)
            if loaded is not None and loaded.revision == revision:
                return loaded
            if loaded is not None:
                loaded.retired = True
                del self._workspaces[slug]
                if loaded.users == 0:
                    await _instance_close(loaded.rag)
                _shared_state_forget(slug)
            loaded = _LoadedWorkspace(await self._instance_create(slug), revision)
            self._workspaces[slug] = loaded
            return loaded

    async def _instance_create(self, slug: str):
        lightrag = lightrag_modules()
        embedder = embedder_get()
        dimension = await asyncio.to_thread(lambda: embedder.dimension)
        if not self._embedder_checked:
            await asyncio.to_thread(_embedder_marker_check, self.working_dir, embedder.name, dimension)
            self._embedder_checked = True

        async def embed(texts, context=None):
            if context == "query":
                return await self.query_embeddings.get(embedder, list(texts))
            return await asyncio.to_thread(embedder.embed_documents, list(texts))

        rag = lightrag.LightRAG(
            working_dir=self.working_dir,
            workspace=slug,
            **self.storage_names,
            embedding_func=lightrag.EmbeddingFunc(
                embedding_dim=dimension,
                func=embed,
                max_token_size=EMBEDDING_MAX_TOKEN_SIZE,
                model_name=embedder.name,
                supports_asymmetric=True,
            ),
            tokenizer=lightrag.Tokenizer(model_name="characters", tokenizer=CharacterTokenizer()),
            llm_model_func=llm_complete,
            llm_model_name=settings.KNOWLEDGE_HUB_LLM_MODEL,
            cosine_better_than_threshold=settings.KNOWLEDGE_HUB_COSINE_THRESHOLD,
            top_k=settings.KNOWLEDGE_HUB_TOP_K,
            chunk_top_k=settings.KNOWLEDGE_HUB_CHUNK_TOP_K,
            # An entity's chunks ranked by how often it occurs there, not by re-scoring their vectors: the hub
            # scores every item against the question itself afterwards (hub_graph.KEYWORD_BOOST).
            kg_chunk_pick_method="WEIGHT",
            addon_params={"language": "Korean"},
            # The local embedder is CPU-bound: big batches one at a time are ~5x faster than LightRAG's default of
            # eight concurrent batches of ten racing for the GIL. An HTTP embedder gains from concurrency.
            embedding_batch_num=EMBEDDING_BATCH_SIZE,
            embedding_func_max_async=1 if isinstance(embedder, LocalUseEmbedder) else 4,
        )
        if self.qdrant is not None:
            for storage in (rag.chunks_vdb, rag.entities_vdb, rag.relationships_vdb):
                storage._client = self.qdrant  # initialize() builds its own client only when none is set
        await rag.initialize_storages()
        return rag

    async def _instances_close(self) -> None:
        for loaded in self._workspaces.values():
            await _instance_close(loaded.rag)
        self._workspaces.clear()

    def stop(self) -> None:
        """Close every instance and end the loop thread (tests and interpreter exit)."""
        if self.thread.is_alive():
            with contextlib.suppress(HubUnavailableError):
                self.call(self._instances_close(), timeout=30)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
        if self.qdrant is not None:
            self.qdrant.close_shared()


async def _instance_close(rag) -> None:
    """Finalize the storages and stop the instance's queue workers (they would outlive it on the loop)."""
    try:
        await rag.finalize_storages()
        queued = [rag.embedding_func.func, *(state.wrapped for state in rag._role_llm_states.values())]
        for func in queued:
            shutdown = getattr(func, "shutdown", None)
            if shutdown is not None:
                await shutdown(graceful=False)
    except Exception:  # a stale instance that fails to close must not fail the reload that retires it
        logger.exception("closing a LightRAG instance of workspace %s failed", rag.workspace)


def _shared_state_forget(slug: str) -> None:
    """Drop this process's LightRAG shared state of one workspace, so a new instance reads the files again.

    The JSON KV storages keep their data in `shared_storage` dicts keyed `<workspace>:<namespace>` and load the
    file only when that key is first initialised in the process; the retired instance keeps its own references.
    """
    shared = lightrag_modules().shared_storage
    prefix = f"{slug}:"
    for registry in (shared._shared_dicts, shared._init_flags, shared._update_flags, shared._namespace_data_cache):
        if registry is None:
            continue
        for key in [key for key in registry if key.startswith(prefix) and not key.endswith(":pipeline_status")]:
            del registry[key]


def _embedder_marker_check(working_dir: str, embedder_name: str, dimension: int) -> None:
    """Vectors of one embedding model are meaningless to another: refuse a hub built with a different one."""
    marker = Path(working_dir) / EMBEDDER_MARKER
    marker.parent.mkdir(parents=True, exist_ok=True)
    current = {"embedder": embedder_name, "dimension": dimension}
    if not marker.exists():
        marker.write_text(json.dumps(current))
        return
    recorded = json.loads(marker.read_text())
    if recorded != current:
        raise HubUnavailableError(
            f"the knowledge hub in {working_dir} was built with {recorded}, but {current} is configured: "
            "re-ingest the documents into an empty LIGHTRAG_WORKING_DIR"
        )


_runtime: HubRuntime | None = None
_runtime_lock = threading.Lock()


def runtime_get() -> HubRuntime:
    """This process's runtime, created on first use; a forked child gets its own instead of its parent's."""
    global _runtime
    runtime = _runtime
    if runtime is not None and runtime.pid == os.getpid():
        return runtime
    with _runtime_lock:
        if _runtime is None or _runtime.pid != os.getpid():
            # After a fork the parent's loop thread does not exist here, and LightRAG's module-level shared state
            # holds the parent's locks: start from a clean slate.
            lightrag_modules().shared_storage.finalize_share_data()
            try:
                _runtime = HubRuntime()
            except hub_storage.HubStorageError as error:
                raise HubUnavailableError(str(error)) from error
        return _runtime


def runtime_problems() -> list[str]:
    """What keeps the hub from serving in this process, without starting anything (for the health check)."""
    problems = hub_storage.storage_problems()
    if _runtime is not None and _runtime.pid == os.getpid() and not _runtime.thread.is_alive():
        problems.append("the knowledge hub's loop thread is not running")
    marker = Path(settings.LIGHTRAG_WORKING_DIR) / EMBEDDER_MARKER
    if marker.exists():
        recorded = json.loads(marker.read_text()).get("embedder")
        if recorded != embedder_get().name:
            problems.append(f"the hub was built with the embedder {recorded!r}, {embedder_get().name!r} is configured")
    return problems


def runtime_reset() -> None:
    """Stop this process's runtime and clear LightRAG's shared state (tests switch working directories)."""
    global _runtime
    with _runtime_lock:
        if _runtime is not None and _runtime.pid == os.getpid():
            _runtime.stop()
        _runtime = None
        lightrag_modules().shared_storage.finalize_share_data()
