"""The whole product once: upload → question → a real Celery worker → verified, rewritten answer → send job →
the edge sender delivers and counts it in the simulated client DB → result marker → the monitor stays silent.

The worker is a real Celery worker (celery.contrib.testing) consuming from the real Redis broker in a thread of
this process, so the scripted model can be installed for it with `provider_override`. Without a broker (`make
demo`) the same upload is answered in-process, on the commit of the upload's transaction.
"""

import json
import sys
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from celery.contrib.testing.worker import start_worker
from rest_framework.test import APIClient

from agent.llm.base import provider_override
from agent.llm.scripted import ScriptedProvider
from agent.models import AnswerRun
from config.celery import app as celery_app
from conversations.models import Question
from delivery.models import SendJob
from delivery.tests.factories import active_device
from edge import simulator
from edge.cli import main as edge_main
from monitoring.models import LivenessMarker
from monitoring.monitor import monitor_run
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory, VendorRecordFactory

KST = ZoneInfo("Asia/Seoul")
ROOM_KEY = "chat-1001"
ROOM_NAME = "(1001) 대한물산"
CORRECT = "한빛식품 참기름 1L 단가는 15,000원입니다."


@pytest.fixture
def celery_worker_on_redis(settings):
    """A real worker consuming the real broker; tasks are no longer run in the caller."""
    celery_app.conf.task_always_eager = False
    settings.CELERY_TASK_ALWAYS_EAGER = False
    try:
        with start_worker(
            celery_app, pool="solo", perform_ping_check=False, queues=["default", "agent", "delivery", "monitoring"]
        ) as worker:
            yield worker
    finally:
        celery_app.conf.task_always_eager = True


def wait_for(predicate, *, seconds=90):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_tagged_question_to_delivered_verified_answer(live_server, knowledge_stores, celery_worker_on_redis, tmp_path):
    vendor = VendorFactory(code="1001", name="대한물산", aliases=[])
    brand = BrandFactory(name="한빛식품")
    ProductFactory(vendor=vendor, brand=brand, name="한빛식품 참기름 1L", sku="DH-001", unit_price=15000)
    VendorRecordFactory(vendor=vendor, title="대한물산 결제 조건", body="월말 마감 후 익월 10일 현금 결제.")
    _, uploader_token = active_device(role="uploader", name="1층 PC")
    _, sender_token = active_device(role="sender", name="CS Mac")

    model = ScriptedProvider(
        [
            {"tool_calls": [{"name": "search_records", "arguments": {"query": "참기름 단가"}}]},
            {"content": "한빚식품 참기름 1L 단가는 16,000원입니다."},  # a misspelt brand and a wrong amount
            {"content": CORRECT},
        ]
    )
    with provider_override(model):
        response = upload_tagged_question(uploader_token, "e2e-1")
        assert response.status_code == 200 and response.json()["questions"] == 1
        question = Question.objects.get()
        assert wait_for(lambda: Question.objects.get(pk=question.pk).status not in ("accepted", "running"))

    question.refresh_from_db()
    assert question.status == Question.Status.ANSWERED
    run = AnswerRun.objects.get(question=question)
    first, second = run.rounds.order_by("number")
    assert {v["kind"] for v in first.violations} == {"amount", "brand_misspelt"}
    assert second.violations == []
    assert run.tool_calls.filter(forced=True, round=1).exists()  # searched again before the rewrite
    job = SendJob.objects.get(question=question)
    assert job.items.get().text == CORRECT

    # The sender Mac: its client DB holds the room; the fake send tool writes what it sends into it.
    client_db = simulator.create_client_db(tmp_path / "client.db", [(ROOM_KEY, ROOM_NAME)])
    send = [sys.executable, "-m", "edge.simulator", "send", "--db", str(client_db), "--room", "{room}"]
    config = tmp_path / "sender.json"
    config.write_text(
        json.dumps(
            {
                "server_url": live_server.url,
                "token": sender_token,
                "state_dir": str(tmp_path / "sender-state"),
                "client_db": {"path": str(client_db)},
                "send": {
                    "text_command": [*send, "--text-file", "{file}"],
                    "photo_command": [*send, "--photo", "{path}"],
                    "text_wait_seconds": 1,
                    "poll_interval_seconds": 0.2,
                },
            }
        )
    )
    assert edge_main(["--config", str(config), "--quiet", "send", "--once"], environ={}) == 0

    job.refresh_from_db()
    assert job.state == SendJob.State.SENT
    assert job.observed_counts["texts"] == 1
    assert simulator_texts(client_db) == [CORRECT]
    assert question.markers.get(kind=LivenessMarker.Kind.RESULT).outcome == "answered"
    assert monitor_run().raised == []


def upload_tagged_question(token: str, batch_id: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    message = {
        "room_key": ROOM_KEY,
        "room_name": ROOM_NAME,
        "sender_name": "김대리",
        "sent_by_me": False,
        "text": "@봇 참기름 단가 얼마예요?",
        "sent_at": (datetime.now(tz=KST) - timedelta(minutes=1)).isoformat(),
        "unread_count": 1,
    }
    return client.post("/api/v1/uploads", {"batch_id": batch_id, "messages": [message]}, format="json")


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_the_upload_is_answered_in_process(knowledge_stores, settings):
    """Tasks run in the caller (`CELERY_TASK_ALWAYS_EAGER`, as in `make demo`): the question conversations accepted
    is answered by the agent's task, dispatched by name on commit, before the upload's response is sent."""
    assert settings.CELERY_TASK_ALWAYS_EAGER and celery_app.conf.task_always_eager
    vendor = VendorFactory(code="1001", name="대한물산", aliases=[])
    ProductFactory(vendor=vendor, brand=BrandFactory(name="한빛식품"), name="한빛식품 참기름 1L", unit_price=15000)
    _, uploader_token = active_device(role="uploader", name="1층 PC")
    model = ScriptedProvider(
        [{"tool_calls": [{"name": "search_records", "arguments": {"query": "참기름 단가"}}]}, {"content": CORRECT}]
    )

    with provider_override(model):
        response = upload_tagged_question(uploader_token, "eager-1")

    assert response.status_code == 200 and response.json()["questions"] == 1
    question = Question.objects.get()
    assert question.status == Question.Status.ANSWERED
    assert AnswerRun.objects.get(question=question).outcome == Question.Status.ANSWERED
    assert SendJob.objects.get(question=question).items.get().text == CORRECT


def simulator_texts(client_db) -> list[str]:
    import sqlite3

    with sqlite3.connect(client_db) as connection:
        return [row[0] for row in connection.execute("SELECT message FROM chat_logs WHERE is_mine = 1 ORDER BY id")]
