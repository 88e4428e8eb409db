"""Fault suite with real processes: Celery workers (`python -m agent.tests.fault_worker`) on the test Redis and
PostgreSQL. A worker killed with SIGKILL mid-question, and a transient database error after composing in a worker,
each end with the question answered exactly once.

The workers run with small time settings (lease 2 s, heartbeat 0.2 s); this process plays beat and runs the sweep
itself. The figures of each case are asserted as one dict: runs, send jobs, result markers, final status.
"""

import os
import signal
import subprocess
import sys
import time
from urllib.parse import quote

import pytest
from django.conf import settings as django_settings
from django.db import connection

from agent.models import AnswerRun
from agent.services import questions_sweep
from agent.tasks import process_question
from agent.tests.faults import answered_once
from config.celery import app as celery_app
from conversations.models import Question
from delivery.models import SendJob
from monitoring.models import LivenessMarker

WORKER_SETTINGS = {"AGENT_RUN_LEASE_SECONDS": "2", "AGENT_RUN_HEARTBEAT_SECONDS": "0.2"}
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def wait_for(predicate, *, seconds=180):  # generous: CI machines are shared
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def figures(question) -> dict:
    return {
        "status": Question.objects.get(pk=question.pk).status,
        "runs": AnswerRun.objects.filter(question=question).count(),
        "send_jobs": SendJob.objects.filter(question=question).count(),
        "result_markers": question.markers.filter(kind=LivenessMarker.Kind.RESULT).count(),
    }


@pytest.fixture
def dispatch_to_broker(settings):
    """Tasks dispatched here go to the Redis broker, for the worker processes."""
    celery_app.conf.task_always_eager = False
    settings.CELERY_TASK_ALWAYS_EAGER = False
    yield
    celery_app.conf.task_always_eager = True


@pytest.fixture
def start_worker(tmp_path, knowledge_stores, settings):
    """`start_worker(mode)`: a worker process on this test's database and Redis; every one is gone at the end."""
    processes = []
    database = connection.settings_dict

    def start(mode: str) -> subprocess.Popen:
        env = {
            **os.environ,
            **WORKER_SETTINGS,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": (
                f"postgres://{quote(database['USER'])}:{quote(database['PASSWORD'] or '')}"
                f"@{database['HOST']}:{database['PORT']}/{database['NAME']}"
            ),
            "TEST_REDIS_URL": settings.REDIS_URL,
            "QDRANT_PATH": settings.QDRANT_PATH,
            "LIGHTRAG_WORKING_DIR": settings.LIGHTRAG_WORKING_DIR,
            "FAULT_WORKER_HANG_FILE": str(tmp_path / "hanging"),
        }
        log = open(tmp_path / f"worker-{mode}-{len(processes)}.log", "wb")  # noqa: SIM115 (closed with the process)
        process = subprocess.Popen(
            [sys.executable, "-m", "agent.tests.fault_worker", mode],
            cwd=django_settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        processes.append((process, log))
        return process

    yield start
    for process, log in processes:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def test_a_worker_killed_mid_question_is_replaced_and_the_question_answered_exactly_once(
    answerable_question, start_worker, dispatch_to_broker, tmp_path
):
    question = answerable_question
    hanging = start_worker("hang")
    process_question.delay(question.pk)
    assert wait_for(lambda: (tmp_path / "hanging").exists()), "the first worker never reached the model call"
    first_lease = AnswerRun.objects.get(question=question).lease_expires_at
    # Alive, it keeps its lease while blocked in the model call.
    assert wait_for(lambda: AnswerRun.objects.get(question=question).lease_expires_at > first_lease)

    os.kill(hanging.pid, signal.SIGKILL)
    hanging.wait()
    assert figures(question) == {"status": "running", "runs": 1, "send_jobs": 0, "result_markers": 0}

    start_worker("answer")
    assert wait_for(lambda: questions_sweep() and Question.objects.get(pk=question.pk).status == "answered")
    assert figures(question) == {"status": "answered", "runs": 2, "send_jobs": 1, "result_markers": 1}
    answered_once(question)
    killed, replacement = AnswerRun.objects.filter(question=question).order_by("attempt")
    assert killed.error.startswith("lease lapsed") and killed.outcome == ""
    assert replacement.outcome == "answered" and replacement.worker != killed.worker


def test_a_transient_database_error_after_composing_is_retried_through_the_broker_and_answered_once(
    answerable_question, start_worker, dispatch_to_broker, fail_once
):
    question = answerable_question
    fail_once("agent_draftround")  # the first attempt's trace write
    start_worker("answer")
    process_question.delay(question.pk)
    assert wait_for(lambda: Question.objects.get(pk=question.pk).status not in ("accepted", "running"))
    assert figures(question) == {"status": "answered", "runs": 2, "send_jobs": 1, "result_markers": 1}
    answered_once(question)
    failed, retried = AnswerRun.objects.filter(question=question).order_by("attempt")
    assert "OperationalError" in failed.error and retried.outcome == "answered"
