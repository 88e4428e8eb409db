"""Agent runs survive crashes and blips: a transient error after composing, a worker that dies mid-question and a
worker that comes back after its run was taken over each end with the question answered exactly once.

Faults are real: a PostgreSQL trigger raises a real serialization failure (SQLSTATE 40001) on one insert, and a
worker "dies" by raising a BaseException from inside the model call, which no cleanup code of the run catches.
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from agent.llm.base import provider_override
from agent.llm.scripted import ScriptedProvider
from agent.models import AnswerRun
from agent.services import question_process, questions_sweep
from agent.tasks import process_question
from conversations.models import Question
from conversations.tests.factories import QuestionFactory, RoomFactory
from delivery.models import SendJob
from monitoring.models import LivenessMarker
from monitoring.services import marker_accepted_write
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import VendorRecordFactory

PAYMENT_TERMS = "월말 마감 후 익월 10일에 현금으로 결제합니다."
SEARCH = {"tool_calls": [{"name": "search_records", "arguments": {"query": "결제 조건"}}]}
ANSWER = [SEARCH, {"content": PAYMENT_TERMS}]


class WorkerKilled(BaseException):
    """Stands for SIGKILL / OOM: nothing in the run catches it, so no cleanup or status change happens."""


@pytest.fixture
def question(knowledge_stores):
    vendor = VendorFactory(code="1001", name="대한물산", aliases=[])
    VendorRecordFactory(vendor=vendor, title="대한물산 결제 조건", body=PAYMENT_TERMS)
    asked = QuestionFactory(message__room=RoomFactory(vendor=vendor), text="결제 조건 알려주세요")
    marker_accepted_write(question=asked)
    return asked


@pytest.fixture
def fail_once():
    """`fail_once(table, when=...)`: the next insert into `table` matching `when` fails once with a real
    PostgreSQL serialization failure, which Django raises as `OperationalError` (a transient error)."""
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


def answered_once(question) -> None:
    """The question is answered, with one send job and one result marker; the accepted marker is still there."""
    question.refresh_from_db()
    assert question.status == Question.Status.ANSWERED
    assert SendJob.objects.filter(question=question).count() == 1
    assert SendJob.objects.get(question=question).items.get().text == PAYMENT_TERMS
    assert list(question.markers.filter(kind=LivenessMarker.Kind.RESULT).values_list("outcome", flat=True)) == [
        "answered"
    ]
    assert question.markers.filter(kind=LivenessMarker.Kind.ACCEPTED).count() == 1


@pytest.mark.django_db(transaction=True)
class TestTransientDatabaseErrorAfterComposing:
    @pytest.mark.parametrize(
        ("table", "when"),
        [
            ("agent_draftround", "TRUE"),  # recording the trace
            ("monitoring_livenessmarker", "NEW.kind = 'result'"),  # finishing, after the send job was queued
        ],
        ids=["trace_write", "result_marker"],
    )
    def test_the_task_retries_and_the_question_is_answered_once(self, question, fail_once, table, when):
        fail_once(table, when)
        with provider_override(ScriptedProvider(ANSWER * 2)):
            outcome = process_question.delay(question.pk).get()
        assert outcome == "answered"
        answered_once(question)
        first, second = AnswerRun.objects.filter(question=question).order_by("attempt")
        assert "OperationalError" in first.error and first.outcome == ""
        assert second.outcome == "answered" and second.send_job_id is not None
        assert first.send_job_id is None  # the failed attempt's send job was rolled back with it


@pytest.mark.django_db(transaction=True)
class TestWorkerKilledMidQuestion:
    def test_a_run_whose_worker_died_is_dispatched_again_and_answered_once(self, question, settings):
        with pytest.raises(WorkerKilled):
            question_process(question.pk, provider=ScriptedProvider([SEARCH, WorkerKilled()]))
        question.refresh_from_db()
        assert question.status == Question.Status.RUNNING

        later = timezone.now() + timedelta(minutes=11)
        with provider_override(ScriptedProvider(ANSWER)):
            questions_sweep(now=later)
        answered_once(question)
        first, second = AnswerRun.objects.filter(question=question).order_by("attempt")
        assert first.outcome == "" and first.finished_at is not None
        assert second.outcome == "answered"

    def test_a_worker_that_comes_back_after_its_run_was_taken_over_sends_nothing(self, question):
        """The first worker stalls past its lease; the sweep hands the question to another run, which answers.
        When the first worker then finishes, its answer is dropped: one send job, one result marker."""

        def stall_past_the_lease(messages, tools):
            with provider_override(ScriptedProvider(ANSWER)):
                questions_sweep(now=timezone.now() + timedelta(minutes=11))
            return {"content": PAYMENT_TERMS}

        question_process(question.pk, provider=ScriptedProvider([SEARCH, stall_past_the_lease]))
        answered_once(question)
        first, second = AnswerRun.objects.filter(question=question).order_by("attempt")
        assert first.send_job_id is None and first.outcome == ""
        assert second.outcome == "answered"
