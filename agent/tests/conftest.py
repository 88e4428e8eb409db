"""Fixtures of the agent tests: the knowledge hub on each of its storages, answerable questions and injected
database faults."""

import psycopg
import pytest
from django.db import connection, connections

from agent.knowledge import hub_storage
from agent.knowledge.hub_runtime import runtime_reset
from agent.tests.faults import PAYMENT_TERMS
from conversations.tests.factories import QuestionFactory, RoomFactory
from monitoring.services import marker_accepted_write
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import VendorRecordFactory

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
    # The hub writes QDRANT_URL into the environment for LightRAG; without this it would outlive the test and
    # point later tests' child processes at that closed port.
    monkeypatch.setenv("QDRANT_URL", settings.QDRANT_URL)
    monkeypatch.setattr(hub_storage, "qdrant_client_create", lambda: QdrantClient(location=":memory:"))
    working_dir = hub_storage_use(settings, tmp_path, hub_storage.POSTGRES)
    yield working_dir
    runtime_reset()


@pytest.fixture
def answerable_question(knowledge_stores):
    """An accepted question in 대한물산's room whose answer (`PAYMENT_TERMS`) is in the vendor's records."""
    vendor = VendorFactory(code="1001", name="대한물산", aliases=[])
    VendorRecordFactory(vendor=vendor, title="대한물산 결제 조건", body=PAYMENT_TERMS)
    question = QuestionFactory(message__room=RoomFactory(vendor=vendor), text="결제 조건 알려주세요")
    marker_accepted_write(question=question)
    return question


@pytest.fixture
def fail_once():
    """`fail_once(table, when=...)`: the next insert into `table` matching `when` fails once with a real
    PostgreSQL serialization failure, which Django raises as `OperationalError` (a transient error). Committed
    DDL, so it also holds for other processes (a real worker); dropped at the end of the test."""
    installed = []

    def install(table: str, when: str = "TRUE") -> None:
        name = f"fault_{table}"
        with connection.cursor() as cursor:
            # A sequence, not a table: nextval() survives the rollback of the transaction that it fails.
            cursor.execute(f"CREATE SEQUENCE {name}_seq")
            cursor.execute(
                f"""CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF {when} THEN
                        IF nextval('{name}_seq') = 1 THEN
                            RAISE EXCEPTION 'injected fault' USING ERRCODE = 'serialization_failure';
                        END IF;
                    END IF;
                    RETURN NEW;
                END $$"""
            )
            cursor.execute(f"CREATE TRIGGER {name} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()")
        installed.append((table, name))

    yield install
    with connection.cursor() as cursor:
        for table, name in installed:
            cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
            cursor.execute(f"DROP FUNCTION IF EXISTS {name}()")
            cursor.execute(f"DROP SEQUENCE IF EXISTS {name}_seq")
