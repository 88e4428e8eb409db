"""Which LightRAG storages the hub runs on, and the one place their configuration is given to LightRAG.

`KNOWLEDGE_HUB_STORAGE`:

- `files` (the embedded default): JSON KV and document status, NetworkX GraphML, NanoVectorDB, all under
  `LIGHTRAG_WORKING_DIR`; one host, every process reloads a workspace whose revision moved.
- `postgres`: `PGKVStorage`, `PGDocStatusStorage` and `PGTableGraphStorage` (plain tables, no Apache AGE) in the
  platform's PostgreSQL (`DATABASE_URL`); vectors in Qdrant (`QdrantVectorDBStorage`, `QDRANT_URL`) when a server
  is configured, else NanoVectorDB files in the working dir with the same revision reload as `files`.

LightRAG's PostgreSQL storages read their connection from `POSTGRES_*` environment variables (and a `config.ini`
in the current directory) when an instance initialises, take `POSTGRES_WORKSPACE` as an override of every
instance's workspace, and its PostgreSQL / Qdrant modules `pip install` a missing driver at import. So, here and
only here: the variables are written from Django's database settings (the test database in tests) before the
modules are imported and again before every instance; `POSTGRES_WORKSPACE` / `QDRANT_WORKSPACE` in the
environment are refused; a missing driver is a `HubStorageError` naming the requirement, and `pipmaster.install`
is disabled while the modules import.
"""

import importlib
import importlib.util
import os
import threading
from contextlib import contextmanager

from django.conf import settings
from django.db import connections

FILES = "files"
POSTGRES = "postgres"
STORAGE_KINDS = (FILES, POSTGRES)

FILE_STORAGE_MODULES = (
    "lightrag.kg.json_kv_impl",
    "lightrag.kg.json_doc_status_impl",
    "lightrag.kg.nano_vector_db_impl",
    "lightrag.kg.networkx_impl",
)
POSTGRES_STORAGE_MODULES = ("lightrag.kg.postgres_impl", "lightrag.kg.pgtable_impl")
QDRANT_STORAGE_MODULE = "lightrag.kg.qdrant_impl"
# Drivers LightRAG would otherwise install at run time: (import name, requirement).
_DRIVERS = {
    "lightrag.kg.postgres_impl": ("asyncpg", "asyncpg"),
    QDRANT_STORAGE_MODULE: ("qdrant_client", "qdrant-client"),
}
# Variables that would silently put every workspace into one.
_WORKSPACE_OVERRIDES = ("POSTGRES_WORKSPACE", "QDRANT_WORKSPACE", "REDIS_WORKSPACE")


class HubStorageError(RuntimeError):
    """The configured hub storage cannot be used as configured (wrong database, missing driver, override set)."""


def storage_kind() -> str:
    kind = settings.KNOWLEDGE_HUB_STORAGE
    if kind not in STORAGE_KINDS:
        raise HubStorageError(f"KNOWLEDGE_HUB_STORAGE must be one of {', '.join(STORAGE_KINDS)}, not {kind!r}")
    return kind


def vectors_on_qdrant() -> bool:
    return storage_kind() == POSTGRES and bool(settings.QDRANT_URL)


def storage_names() -> dict[str, str]:
    """The LightRAG constructor's storage arguments for the configured kind."""
    if storage_kind() == FILES:
        return {
            "kv_storage": "JsonKVStorage",
            "doc_status_storage": "JsonDocStatusStorage",
            "graph_storage": "NetworkXStorage",
            "vector_storage": "NanoVectorDBStorage",
        }
    return {
        "kv_storage": "PGKVStorage",
        "doc_status_storage": "PGDocStatusStorage",
        "graph_storage": "PGTableGraphStorage",
        "vector_storage": "QdrantVectorDBStorage" if vectors_on_qdrant() else "NanoVectorDBStorage",
    }


def storage_label() -> str:
    """How the hub stores its data, for health and the commands (`files`, `postgres+qdrant`, `postgres+files`)."""
    kind = storage_kind()
    if kind == FILES:
        return FILES
    return f"{POSTGRES}+{'qdrant' if vectors_on_qdrant() else 'files'}"


def postgres_environment() -> dict[str, str]:
    """LightRAG's `POSTGRES_*` variables for the database Django uses (its test database in tests)."""
    database = connections["default"].settings_dict
    if "postgresql" not in database["ENGINE"]:
        raise HubStorageError(
            "KNOWLEDGE_HUB_STORAGE=postgres needs DATABASE_URL to point at PostgreSQL "
            f"(the database is {database['ENGINE']})"
        )
    return {
        "POSTGRES_HOST": str(database.get("HOST") or "localhost"),
        "POSTGRES_PORT": str(database.get("PORT") or 5432),
        "POSTGRES_USER": str(database.get("USER") or ""),
        "POSTGRES_PASSWORD": str(database.get("PASSWORD") or ""),
        "POSTGRES_DATABASE": str(database["NAME"]),
        "POSTGRES_MAX_CONNECTIONS": str(settings.KNOWLEDGE_HUB_POSTGRES_MAX_CONNECTIONS),
    }


def storage_environment_apply() -> None:
    """Write the configured storage's variables into the environment LightRAG reads; refuse workspace overrides.

    Called before the storage modules are imported and before every instance is created (the values only change
    when a test switches databases or storages).
    """
    overrides = [name for name in _WORKSPACE_OVERRIDES if os.environ.get(name, "").strip()]
    if overrides:
        raise HubStorageError(
            f"{', '.join(overrides)} is set: LightRAG would put every knowledge workspace into one. Unset it; "
            "the hub passes each workspace itself."
        )
    if storage_kind() != POSTGRES:
        return
    os.environ.update(postgres_environment())
    if vectors_on_qdrant():
        os.environ["QDRANT_URL"] = settings.QDRANT_URL
        if settings.QDRANT_API_KEY:
            os.environ["QDRANT_API_KEY"] = settings.QDRANT_API_KEY


@contextmanager
def lightrag_import_guard():
    """Import LightRAG modules without side effects on the process.

    Its modules call `load_dotenv(".env")` at import: a no-op here, so a `.env` in whatever directory the process
    runs from never lands in the environment or in QueryParam defaults; variables the import adds are removed and
    changed ones restored. `pipmaster.install` raises instead of installing a driver at run time.
    """
    import dotenv
    import pipmaster

    environ_before = dict(os.environ)
    load_dotenv, install = dotenv.load_dotenv, pipmaster.install

    def install_refused(package, *args, **kwargs):
        raise HubStorageError(f"LightRAG tried to install {package!r} at run time: pin it in requirements.txt")

    dotenv.load_dotenv = lambda *args, **kwargs: False
    pipmaster.install = install_refused
    try:
        yield
    finally:
        dotenv.load_dotenv, pipmaster.install = load_dotenv, install
        for name in set(os.environ) - set(environ_before):
            del os.environ[name]
        for name, value in environ_before.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


_imported: set[str] = set()
_import_lock = threading.Lock()


def storage_modules_import() -> None:
    """Import the storage modules of the configured kind once per process (the file ones come with LightRAG)."""
    names = storage_names()
    modules = []
    if names["kv_storage"] == "PGKVStorage":
        modules += POSTGRES_STORAGE_MODULES
    if names["vector_storage"] == "QdrantVectorDBStorage":
        modules.append(QDRANT_STORAGE_MODULE)
    missing = [module for module in modules if module not in _imported]
    if not missing:
        return
    for module in missing:
        driver = _DRIVERS.get(module)
        if driver and importlib.util.find_spec(driver[0]) is None:
            raise HubStorageError(
                f"KNOWLEDGE_HUB_STORAGE={storage_label()} needs the {driver[1]!r} package: "
                "pip install -r requirements.txt"
            )
    with _import_lock:
        storage_environment_apply()
        with lightrag_import_guard():
            for module in missing:
                importlib.import_module(module)
        _imported.update(missing)


def storage_problems() -> list[str]:
    """What keeps the configured storage from working, without connecting (for the health check)."""
    try:
        names = storage_names()
        if names["kv_storage"] == "PGKVStorage":
            postgres_environment()
    except HubStorageError as error:
        return [str(error)]
    overrides = [name for name in _WORKSPACE_OVERRIDES if os.environ.get(name, "").strip()]
    problems = [f"{name} is set: unset it (it would merge every knowledge workspace)" for name in overrides]
    if names["kv_storage"] == "PGKVStorage" and importlib.util.find_spec("asyncpg") is None:
        problems.append("the asyncpg package is missing: pip install -r requirements.txt")
    return problems


def postgres_client_state_reset() -> None:
    """Forget LightRAG's process-wide PostgreSQL pool and its lock (a new loop thread, or a forked child).

    `ClientManager` keeps one pool per process and an `asyncio.Lock` created at import; both belong to the loop
    that first used them, so a new hub loop must start without them. The old loop closed its pool when it stopped.
    """
    if "lightrag.kg.postgres_impl" not in _imported:
        return
    import asyncio

    from lightrag.kg.postgres_impl import ClientManager

    ClientManager._instances = {"db": None, "ref_count": 0, "vector_signature": None}
    ClientManager._lock = asyncio.Lock()


class SharedQdrantClient:
    """One Qdrant client for every vector storage of every workspace in the process.

    LightRAG's `QdrantVectorDBStorage` builds a client per storage (three per workspace) with no timeout and closes
    it when the instance is finalised; the runtime instead gives each storage this proxy of its own client (with
    `QDRANT_TIMEOUT_SECONDS`), whose `close` is left to the runtime.
    """

    def __init__(self, client):
        self._client = client

    def __getattr__(self, name):
        return getattr(self._client, name)

    def close(self):
        """Closed by `HubRuntime.stop`, not by each storage."""

    def close_shared(self):
        self._client.close()


def qdrant_client_create():
    """The hub's client of the Qdrant server (tests replace this function with a local-mode client)."""
    from qdrant_client import QdrantClient

    return QdrantClient(
        url=settings.QDRANT_URL, api_key=settings.QDRANT_API_KEY or None, timeout=settings.QDRANT_TIMEOUT_SECONDS
    )
