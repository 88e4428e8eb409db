"""Fixtures of the agent tests: the knowledge hub on each of its storages."""

import psycopg
import pytest
from django.db import connections

from agent.knowledge import hub_storage
from agent.knowledge.hub_runtime import runtime_reset

# Every hub test runs on both storages: LightRAG's files, and PostgreSQL with the vector files beside it (no Qdrant
# server exists here; `hub_on_qdrant` runs the Qdrant vector storage on a local-mode client).
HUB_STORAGES = ["files", "postgres"]


def lightrag_tables_clear() -> None:
    """Empty LightRAG's tables in the test database, on a connection of its own.

    LightRAG writes through its own pool, outside the test's transaction, so its rows outlive a test; truncating
    inside the test's transaction would hold a lock LightRAG's connections then wait on.
    """
    database = connections["default"].settings_dict
    with psycopg.connect(
        host=database["HOST"] or "localhost",
        port=database["PORT"] or 5432,
        user=database["USER"],
        password=database["PASSWORD"] or None,
        dbname=database["NAME"],
        autocommit=True,
    ) as connection:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'lightrag%%'"
            )
        ]
        if tables:
            connection.execute(f"TRUNCATE {', '.join(tables)}")


def hub_storage_use(settings, tmp_path, kind: str):
    """Point the hub at an empty store of `kind` and a fresh runtime; returns the working dir."""
    settings.LIGHTRAG_WORKING_DIR = str(tmp_path / "lightrag")
    settings.KNOWLEDGE_HUB_STORAGE = kind
    runtime_reset()
    if kind == hub_storage.POSTGRES:
        lightrag_tables_clear()
    return tmp_path / "lightrag"


@pytest.fixture(params=HUB_STORAGES)
def hub(request, tmp_path, settings):
    """A fresh, empty knowledge hub on each storage in turn (files; PostgreSQL) and a new hub runtime."""
    working_dir = hub_storage_use(settings, tmp_path, request.param)
    yield working_dir
    runtime_reset()


@pytest.fixture
def hub_on_qdrant(tmp_path, settings, monkeypatch):
    """The hub on PostgreSQL with its vectors in `QdrantVectorDBStorage`, on a local-mode client of the same API
    (a Qdrant server's client in production)."""
    from qdrant_client import QdrantClient

    settings.QDRANT_URL = "http://127.0.0.1:9"  # selects the Qdrant vector storage; never connected
    monkeypatch.setattr(hub_storage, "qdrant_client_create", lambda: QdrantClient(location=":memory:"))
    working_dir = hub_storage_use(settings, tmp_path, hub_storage.POSTGRES)
    yield working_dir
    runtime_reset()
