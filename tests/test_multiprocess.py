"""Several processes, one platform: two gunicorn workers take uploads, two Celery worker processes answer, on
PostgreSQL and Redis, with the FAQ index in Qdrant's local folder (one process owns it and serves the others).

50 tagged questions are uploaded concurrently in two rounds with an FAQ edit between them: every question is
answered once, no answer after the edit uses the old FAQ text, `/api/v1/health` answers ok on every poll, and
one of the platform's processes owns the FAQ folder.
"""

import concurrent.futures
import contextlib
import importlib
import os
import signal
import socket
import subprocess
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest
from django.apps import apps as django_apps
from django.conf import settings
from django.db import connection
from django.db.models import Count

from agent.knowledge.faq_index import faq_index_owner, faq_index_reset
from agent.knowledge.faq_services import faq_entry_create, faq_entry_update
from agent.models import AnswerRun, RunEvidence
from conversations.models import Question
from delivery.tests.factories import active_device
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import VendorRecordFactory

ROOT = Path(settings.BASE_DIR)
KST = ZoneInfo("Asia/Seoul")
ROUNDS = 2
PER_ROUND = 25
OLD_ANSWER = "반품은 협력사 포털의 반품 메뉴에서 접수합니다."
NEW_ANSWER = "반품은 고객센터 1588-0000 으로 전화해 접수합니다."
QUESTIONS = [
    "반품 접수는 어떻게 하나요?",
    "반품 신청 방법 알려주세요",
    "정산일은 언제인가요?",
    "결제 조건이 어떻게 되나요?",
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _spawn(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    with open(log, "wb") as output:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@pytest.fixture
def platform(tmp_path, knowledge_stores):
    """gunicorn with 2 sync workers and 2 Celery worker processes on this test's database and Redis database."""
    database = connection.settings_dict
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DJANGO_DEBUG": "false",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "QDRANT_URL": "",
        "QDRANT_PATH": settings.QDRANT_PATH,
        "LIGHTRAG_WORKING_DIR": settings.LIGHTRAG_WORKING_DIR,
        "UPLOAD_RATE_PER_MINUTE": "1000000",
        "LOG_LEVEL": "WARNING",
    }
    for name in ("OPENAI_BASE_URL", "LLM_MODEL", "LLM_PROVIDER", "EMBEDDINGS_BASE_URL", "RERANK_URL"):
        env.pop(name, None)
    env.pop("PYTEST_XDIST_WORKER", None)
    processes = {
        "web": _spawn(
            [
                str(ROOT / ".venv/bin/gunicorn"),
                "config.wsgi",
                "-b",
                f"127.0.0.1:{port}",
                "-w",
                "2",
                "--log-level",
                "warning",
            ],
            env,
            tmp_path / "gunicorn.log",
        )
    }
    for number in (1, 2):
        processes[f"worker{number}"] = _spawn(
            [str(ROOT / ".venv/bin/celery"), "-A", "config", "worker", "-Q", "default,agent,delivery,monitoring",
             "-c", "1", "--pool", "prefork", "-n", f"test{number}@%h", "--loglevel", "WARNING",
             "--without-gossip", "--without-mingle"],
            env,
            tmp_path / f"worker{number}.log",
        )  # fmt: skip
    try:
        base_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base_url}/api/schema/", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, (tmp_path / "gunicorn.log").read_text(errors="replace")[-3000:]
            time.sleep(0.3)
        yield base_url, processes, tmp_path
    finally:
        for process in processes.values():
            _stop(process)


def _messages(round_number: int, first_sent_at: datetime) -> list[dict]:
    return [
        {
            "room_key": "chat-1001",
            "room_name": "(1001) 대한물산",
            "sender_name": "김대리",
            "sent_by_me": False,
            "text": f"@봇 {QUESTIONS[number % len(QUESTIONS)]}",
            # 20 s apart in the room's time: a repeated question is never taken for a resend of the previous one
            "sent_at": (first_sent_at + timedelta(seconds=20 * number)).isoformat(),
            "unread_count": 1,
            "client_message_id": f"r{round_number}-{number}",
        }
        for number in range(PER_ROUND)
    ]


def _upload_concurrently(base_url: str, token: str, round_number: int, first_sent_at: datetime) -> None:
    messages = _messages(round_number, first_sent_at)
    batches = [messages[start : start + 5] for start in range(0, len(messages), 5)]

    def post(index_batch):
        index, batch = index_batch
        response = httpx.post(
            f"{base_url}/api/v1/uploads",
            json={"batch_id": f"r{round_number}-b{index}", "messages": batch},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        assert response.status_code in (200, 201), response.text[:2000]

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(batches)) as pool:
        list(pool.map(post, enumerate(batches)))


def _wait_until_answered(ids: list[int], health, *, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        health()
        if Question.objects.filter(pk__in=ids, status__in=Question.TERMINAL_STATUSES).count() == len(ids):
            return
        time.sleep(1.0)
    open_ = list(
        Question.objects.filter(pk__in=ids).exclude(status__in=Question.TERMINAL_STATUSES).values("pk", "status")
    )
    pytest.fail(f"{len(open_)} questions not finished: {open_[:5]}")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_web_and_two_worker_processes_answer_every_question_once_with_the_current_faq(platform):
    base_url, processes, logs = platform
    # A transactional test starts from flushed tables: the data migration's workspaces are made again.
    importlib.import_module("agent.migrations.0003_default_workspaces").workspaces_create(django_apps, None)
    vendor = VendorFactory(code="1001", name="대한물산", aliases=[])
    VendorRecordFactory(vendor=vendor, title="대한물산 결제 조건", body="월말 마감 후 익월 10일 현금 결제.")
    faq = faq_entry_create(question="반품 접수는 어떻게 하나요?", answer=OLD_ANSWER, category="반품")
    faq_entry_create(question="정산일은 언제인가요?", answer="정산은 매월 10일에 지급합니다.", category="정산")
    faq_index_reset()  # this process wrote the index first: release the folder, a worker takes it
    _, token = active_device(role="uploader", name="1층 PC")
    health_replies = []

    def health():
        response = httpx.get(f"{base_url}/api/v1/health", timeout=30)
        health_replies.append((response.status_code, response.json().get("status"), response.text[:500]))

    start = datetime.now(tz=KST) - timedelta(hours=2)
    ids_by_round = []
    for round_number in range(ROUNDS):
        if round_number == 1:
            faq_entry_update(faq.pk, question=faq.question, answer=NEW_ANSWER, actor="test")
        before = set(Question.objects.values_list("pk", flat=True))
        _upload_concurrently(base_url, token, round_number, start + timedelta(minutes=30 * round_number))
        ids = sorted(set(Question.objects.values_list("pk", flat=True)) - before)
        assert len(ids) == PER_ROUND
        _wait_until_answered(ids, health, seconds=150)
        ids_by_round.append(ids)

    every = [pk for ids in ids_by_round for pk in ids]
    runs = dict(AnswerRun.objects.filter(question_id__in=every).values_list("question_id").annotate(n=Count("pk")))
    assert runs == dict.fromkeys(every, 1), "every question is answered exactly once"
    after_edit = RunEvidence.objects.filter(run__question_id__in=ids_by_round[1], reference=f"faq:{faq.pk}")
    assert after_edit.exists(), "the edited FAQ must be evidence for the questions asked after the edit"
    assert not after_edit.filter(text__contains="포털의 반품 메뉴").exists(), "a worker answered from the old FAQ"
    assert all(NEW_ANSWER in text for text in after_edit.values_list("text", flat=True))
    assert health_replies and all(code == 200 and status == "ok" for code, status, _ in health_replies), [
        reply for reply in health_replies if reply[0] != 200 or reply[1] != "ok"
    ][:3]
    owner = faq_index_owner()
    assert owner["held"] and not owner["this_process"]
    # Whichever process needed the index first owns it: a Celery worker, or a gunicorn worker (a health check).
    platform_groups = {process.pid for process in processes.values()}
    assert os.getpgid(owner["owner"]["pid"]) in platform_groups, "one of the platform's processes owns the folder"
    for name in ("worker1", "worker2"):
        log = (logs / f"{name}.log").read_text(errors="replace")
        assert "Traceback" not in log, log[-3000:]
    assert all(process.poll() is None for process in processes.values())
