"""`hub_migrate_storage --to postgres`: the demo workspaces move from the file storages into PostgreSQL without
re-extraction, answer the same questions there, and a second run changes nothing."""

import io

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connections

from agent.knowledge import hub_graph
from agent.knowledge.hub import DEMO_KNOWLEDGE_DIR, hub_demo_load, hub_search
from agent.knowledge.hub_runtime import runtime_reset
from agent.tests.conftest import hub_storage_use
from monitoring.models import AuditEvent

pytestmark = pytest.mark.django_db

QUESTIONS = {
    "returns": "반품 신청 기한은 며칠인가요?",
    "settlement": "정산 대금 지급일은 언제인가요?",
    "logistics": "물류센터 입고 시간은 언제인가요?",
}


def _lightrag_row_counts() -> dict[str, int]:
    database = connections["default"].settings_dict
    with psycopg.connect(
        host=database["HOST"], port=database["PORT"], user=database["USER"], dbname=database["NAME"]
    ) as connection:
        return {
            table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("lightrag_doc_chunks", "lightrag_graph_nodes", "lightrag_graph_edges")
        }


def _answers() -> dict[str, list[str]]:
    return {
        slug: [item.reference for item in hub_search(question, workspaces=[slug], limit=5)]
        for slug, question in QUESTIONS.items()
    }


@pytest.fixture
def workspaces():
    """The 13 workspaces of the data migration (a transactional test elsewhere may have flushed them)."""
    import importlib

    from django.apps import apps

    importlib.import_module("agent.migrations.0003_default_workspaces").workspaces_create(apps, None)


def test_the_demo_workspaces_move_to_postgres_and_answer_the_same(settings, tmp_path, monkeypatch, workspaces):
    hub_storage_use(settings, tmp_path, "files")
    demo = tmp_path / "demo"  # three of the demo workspaces, to keep the test short
    demo.mkdir()
    for slug in QUESTIONS:
        (demo / slug).symlink_to(DEMO_KNOWLEDGE_DIR / slug)
    loaded = hub_demo_load(directory=demo)
    assert set(loaded) == set(QUESTIONS)
    on_files = _answers()
    assert all(on_files.values())

    hub_storage_use(settings, tmp_path, "postgres")

    def no_extraction(*args, **kwargs):
        raise AssertionError("migrating must not extract or ingest again")

    monkeypatch.setattr(hub_graph, "graph_insert", no_extraction)
    out = io.StringIO()
    call_command("hub_migrate_storage", "--to", "postgres", stdout=out)
    report = out.getvalue()
    assert f"워크스페이스 {len(loaded)}개를 PostgreSQL로 옮겼습니다." in report
    assert "returns: 청크" in report  # progress per store
    first = _lightrag_row_counts()
    assert first["lightrag_doc_chunks"] > 0 and first["lightrag_graph_nodes"] > 0

    runtime_reset()
    assert _answers() == on_files
    assert AuditEvent.objects.filter(action="knowledge.storage.migrate").count() == len(loaded)

    call_command("hub_migrate_storage", "--to", "postgres", stdout=io.StringIO())
    assert _lightrag_row_counts() == first
    assert _answers() == on_files


def test_migrating_needs_the_postgres_storage_configured(settings, tmp_path):
    hub_storage_use(settings, tmp_path, "files")
    with pytest.raises(CommandError, match="KNOWLEDGE_HUB_STORAGE=postgres"):
        call_command("hub_migrate_storage", "--to", "postgres", stdout=io.StringIO())


def test_the_vectors_move_into_qdrant_embedded_again_and_a_second_run_adds_none(
    settings, tmp_path, monkeypatch, workspaces
):
    from qdrant_client import QdrantClient

    from agent.knowledge import hub_storage

    hub_storage_use(settings, tmp_path, "files")
    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "returns").symlink_to(DEMO_KNOWLEDGE_DIR / "returns")
    hub_demo_load(directory=demo)
    on_files = [item.reference for item in hub_search(QUESTIONS["returns"], workspaces=["returns"], limit=5)]
    assert on_files

    # One local-mode client stands in for the Qdrant server, so it outlives the command's runtime.
    server = QdrantClient(location=":memory:")
    monkeypatch.setattr(server, "close", lambda **kwargs: None)
    monkeypatch.setattr(hub_storage, "qdrant_client_create", lambda: server)
    settings.QDRANT_URL = "http://127.0.0.1:9"  # selects the Qdrant vector storage; never connected
    monkeypatch.setenv("QDRANT_URL", settings.QDRANT_URL)
    hub_storage_use(settings, tmp_path, "postgres")
    monkeypatch.setattr(hub_graph, "graph_insert", lambda *a, **k: pytest.fail("no extraction when migrating"))

    out = io.StringIO()
    call_command("hub_migrate_storage", "--to", "postgres", stdout=out)
    assert "벡터 30" in out.getvalue()  # chunk, entity and relation vectors, embedded again

    def points() -> int:
        return sum(server.count(collection.name).count for collection in server.get_collections().collections)

    first = points()
    assert first > 0
    runtime_reset()
    assert [item.reference for item in hub_search(QUESTIONS["returns"], workspaces=["returns"], limit=5)] == on_files

    call_command("hub_migrate_storage", "--to", "postgres", stdout=io.StringIO())
    assert points() == first
    runtime_reset()
