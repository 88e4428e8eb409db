"""The hub across processes: a second process's write is seen here, forked children get their own loop, and
importing LightRAG leaves the process alone. These tests start real child processes."""

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from agent.knowledge.hub import hub_document_ingest, hub_search
from agent.knowledge.hub_runtime import runtime_get, runtime_reset
from agent.models import KnowledgeWorkspace
from agent.tests.conftest import hub_storage_use

PROJECT_DIR = Path(settings.BASE_DIR)
CLAIM_RULE = "# 클레임 답변 기한\n\n클레임 1차 답변은 접수 후 24시간 안에 등록해야 합니다.\n"
CHILD_RULE = "# 파손 배상\n\n배송 중 파손은 납품 전이면 협력사가, 센터 보관 중이면 유통사가 배상합니다.\n"
LATE_RULE = "# 분쟁 조정\n\n배상 범위 분쟁은 공정거래 준수팀이 조정하며 조정 전에는 정산에서 차감하지 않습니다.\n"


@pytest.fixture
def files_hub(tmp_path, settings):
    """The runtime alone (no storage-specific behaviour is tested): the file storages only."""
    yield hub_storage_use(settings, tmp_path, "files")
    runtime_reset()


def _child_env(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_DIR), "DJANGO_SETTINGS_MODULE": "config.settings.test", **extra}
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def _child_ingest(working_dir: Path, workspace: str, title: str, content: str) -> None:
    """Ingest a document from a separate `manage.py shell` process against this test database."""
    code = (
        "from agent.knowledge.hub import hub_document_ingest\n"
        f"document = hub_document_ingest(workspace={workspace!r}, title={title!r}, content={content!r}, actor='x')\n"
        "print(document.status)\n"
    )
    _child_run(working_dir, code, expect="ingested")


def _child_run(working_dir: Path, code: str, *, expect: str) -> None:
    """Run `code` in a separate `manage.py shell` process on this test database and hub storage."""
    database = connection.settings_dict
    database_url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=PROJECT_DIR,
        env=_child_env(
            DATABASE_URL=database_url,
            LIGHTRAG_WORKING_DIR=str(working_dir),
            KNOWLEDGE_HUB_STORAGE=settings.KNOWLEDGE_HUB_STORAGE,
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith(expect), result.stdout + result.stderr[-3000:]


@pytest.mark.django_db(transaction=True)
def test_a_write_by_another_process_is_seen_after_the_revision_changes(hub):
    """This process loaded `claims` at revision 1; a child process ingests (revision 2); the next search here
    reloads the workspace and finds the child's text. A write here afterwards reloads first, so nothing is lost."""
    # Transactional tests flush the tables, data-migration rows included (serialized_rollback collides with the
    # content types re-created by the flush), so the workspace is made here.
    KnowledgeWorkspace.objects.get_or_create(slug="claims", defaults={"title": "클레임"})
    hub_document_ingest(workspace="claims", title="클레임 답변 기한", content=CLAIM_RULE, actor="test")
    assert any("24시간" in item.text for item in hub_search("클레임 1차 답변 기한", workspaces=["claims"]))
    assert runtime_get().loaded_revisions()["claims"] == 1

    _child_ingest(hub, "claims", "파손 배상", CHILD_RULE)

    assert KnowledgeWorkspace.objects.get(slug="claims").revision == 2
    found = hub_search("배송 중 파손 배상은 누가 하나요?", workspaces=["claims"])
    assert any("센터 보관 중이면 유통사가" in item.text for item in found)
    assert runtime_get().loaded_revisions()["claims"] == 2

    _child_ingest(hub, "claims", "분쟁 조정", LATE_RULE)  # revision 3, not yet seen here
    hub_document_ingest(
        workspace="claims", title="클레임 위로금", content="# 위로금\n\n이물 혼입 위로금은 1만 원 상품권입니다.\n"
    )

    runtime_reset()  # a fresh process view: everything comes back from the store
    for question, fact in (
        ("클레임 1차 답변 기한", "24시간"),
        ("배송 중 파손 배상은 누가 하나요?", "센터 보관 중이면 유통사가"),
        ("배상 분쟁 조정", "공정거래 준수팀"),
        ("이물 혼입 위로금", "1만 원 상품권"),
    ):
        found = hub_search(question, workspaces=["claims"])
        assert any(fact in item.text for item in found), f"{fact} was lost by a writer that did not reload"


@pytest.mark.django_db(transaction=True)
def test_a_document_another_process_retires_stops_being_evidence_here_without_a_restart(hub):
    """Process A (here) answers from a document; process B retires it; A's next search no longer returns it."""
    KnowledgeWorkspace.objects.get_or_create(slug="claims", defaults={"title": "클레임"})
    document = hub_document_ingest(workspace="claims", title="클레임 답변 기한", content=CLAIM_RULE, actor="test")
    assert any("24시간" in item.text for item in hub_search("클레임 1차 답변 기한", workspaces=["claims"]))

    _child_run(
        hub,
        "from agent.knowledge.hub import hub_document_retire\n"
        "from agent.models import KnowledgeDocument\n"
        f"print(hub_document_retire(document=KnowledgeDocument.objects.get(pk={document.pk}), actor='x').status)\n",
        expect="retired",
    )

    assert not any("24시간" in item.text for item in hub_search("클레임 1차 답변 기한", workspaces=["claims"]))


def _runtime_in_forked_child(queue):
    async def pid_on_loop():
        return os.getpid()

    runtime = runtime_get()
    queue.put((runtime.pid, runtime.call(pid_on_loop(), timeout=10)))


def test_a_forked_child_gets_its_own_loop_thread_and_runtime(files_hub):
    """Celery prefork: the child must not use the parent's loop (it has no thread there); it starts its own."""
    parent = runtime_get()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_runtime_in_forked_child, args=(queue,))
    child.start()
    child_runtime_pid, pid_seen_on_child_loop = queue.get(timeout=60)
    child.join(timeout=30)

    assert child.exitcode == 0
    assert child_runtime_pid == pid_seen_on_child_loop == child.pid != parent.pid

    async def still_answers():
        return "ok"

    assert parent.call(still_answers(), timeout=10) == "ok"


IMPORT_PROBE = """
import json, logging, os, sys
import django
django.setup()
before = dict(os.environ)
from agent.knowledge.hub_runtime import lightrag_modules
lightrag = lightrag_modules()
print(json.dumps({
    "environ_unchanged": dict(os.environ) == before,
    "probe_loaded": "HUB_GUARD_PROBE" in os.environ,
    "top_k": lightrag.QueryParam().top_k,
    "storage_modules": sorted(m for m in sys.modules if m.startswith("lightrag.kg.") and m.endswith("_impl")),
    "lightrag_log_level": logging.getLogger("lightrag").level,
}))
"""


def test_importing_lightrag_loads_no_env_file_and_no_database_storage_module(tmp_path):
    """Run from a directory with a `.env`: LightRAG's import-time `load_dotenv` must not read it, `os.environ` is
    unchanged, only the four file storage modules are imported, and its logger is at WARNING."""
    (tmp_path / ".env").write_text("HUB_GUARD_PROBE=1\nTOP_K=3\nPOSTGRES_WORKSPACE=wrong\n")
    env = _child_env()
    for name in ("TOP_K", "POSTGRES_WORKSPACE", "HUB_GUARD_PROBE"):
        env.pop(name, None)

    result = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["environ_unchanged"] is True
    assert report["probe_loaded"] is False
    assert report["top_k"] != 3
    assert report["storage_modules"] == [
        "lightrag.kg.json_doc_status_impl",
        "lightrag.kg.json_kv_impl",
        "lightrag.kg.nano_vector_db_impl",
        "lightrag.kg.networkx_impl",
    ]
    assert report["lightrag_log_level"] == 30


def test_the_runtime_refuses_to_wait_on_its_own_loop(files_hub):
    """A coroutine running on the hub loop that calls back into `call` would deadlock: it raises instead."""
    runtime = runtime_get()

    async def nested():
        async def inner():
            return 1

        try:
            runtime.call(inner(), timeout=1)
        except RuntimeError as error:
            return str(error)
        return "no error"

    assert "own loop thread" in runtime.call(nested(), timeout=10)
