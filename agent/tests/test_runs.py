"""Agent runs survive crashes and blips: a transient error after composing, a worker that dies mid-question and a
worker that comes back after its run was taken over each end with the question answered exactly once.

Faults are real: a PostgreSQL trigger raises a real serialization failure (SQLSTATE 40001) on one insert, and a
worker "dies" by raising a BaseException from inside the model call, which no cleanup code of the run catches.
"""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from agent.llm.base import provider_override
from agent.llm.scripted import ScriptedProvider
from agent.models import AnswerRun
from agent.services import question_process, questions_sweep, run_claim
from agent.tasks import process_question
from agent.tests.faults import ANSWER, PAYMENT_TERMS, SEARCH, WorkerKilled, answered_once
from conversations.models import Question
from delivery.models import SendJob
from monitoring.models import Alert, AuditEvent, LivenessMarker


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
    def test_the_task_retries_and_the_question_is_answered_once(self, answerable_question, fail_once, table, when):
        question = answerable_question
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
    def test_a_run_whose_worker_died_is_dispatched_again_and_answered_once(self, answerable_question):
        question = answerable_question
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

    def test_a_worker_that_comes_back_after_its_run_was_taken_over_sends_nothing(self, answerable_question):
        """The first worker stalls past its lease; the sweep hands the question to another run, which answers.
        When the first worker then finishes, its answer is dropped: one send job, one result marker."""
        question = answerable_question

        def stall_past_the_lease(messages, tools):
            with provider_override(ScriptedProvider(ANSWER)):
                questions_sweep(now=timezone.now() + timedelta(minutes=11))
            return {"content": PAYMENT_TERMS}

        question_process(question.pk, provider=ScriptedProvider([SEARCH, stall_past_the_lease]))
        answered_once(question)
        first, second = AnswerRun.objects.filter(question=question).order_by("attempt")
        assert first.send_job_id is None and first.outcome == ""
        assert second.outcome == "answered"


@pytest.mark.django_db(transaction=True)
class TestLease:
    def test_a_claim_opens_a_run_holding_a_lease_and_the_sweep_leaves_a_live_one_alone(
        self, answerable_question, settings
    ):
        question = answerable_question
        settings.AGENT_RUN_LEASE_SECONDS = 60
        run = run_claim(question.pk, provider_name="scripted")
        question.refresh_from_db()
        assert question.status == Question.Status.RUNNING
        assert run.attempt == 1 and run.worker and run.finished_at is None
        assert run.lease_expires_at > timezone.now() + timedelta(seconds=30)
        assert questions_sweep(now=timezone.now() + timedelta(seconds=30)) == {
            "redispatched": 0,
            "reclaimed": 0,
            "failed": 0,
        }
        question.refresh_from_db()
        assert question.status == Question.Status.RUNNING

    def test_the_heartbeat_renews_the_lease_while_the_run_composes(self, answerable_question, settings):
        question = answerable_question
        settings.AGENT_RUN_HEARTBEAT_SECONDS = 0.05
        leases = []

        def answer_once_renewed(messages, tools):
            run = AnswerRun.objects.get(question=question)
            leases.append(run.lease_expires_at)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and leases[-1] <= leases[0]:
                time.sleep(0.05)
                leases.append(AnswerRun.objects.get(pk=run.pk).lease_expires_at)
            return {"content": PAYMENT_TERMS}

        run = question_process(question.pk, provider=ScriptedProvider([SEARCH, answer_once_renewed]))
        assert leases[-1] > leases[0]  # renewed while the model call was still running
        assert run.outcome == "answered" and run.lease_expires_at is None  # a finished run holds no lease
        answered_once(question)

    def test_lapsed_leases_use_up_the_attempts_then_the_question_fails_with_one_alert(
        self, answerable_question, settings
    ):
        question = answerable_question
        settings.AGENT_RUN_MAX_ATTEMPTS = 2
        killed_mid_question = ScriptedProvider([SEARCH, WorkerKilled()] * 2)
        with pytest.raises(WorkerKilled):
            question_process(question.pk, provider=killed_mid_question)
        with provider_override(killed_mid_question), pytest.raises(WorkerKilled):
            questions_sweep(now=timezone.now() + timedelta(minutes=2))  # the second run dies too
        report = questions_sweep(now=timezone.now() + timedelta(minutes=4))
        assert report == {"redispatched": 0, "reclaimed": 0, "failed": 1}

        question.refresh_from_db()
        assert question.status == Question.Status.FAILED
        runs = list(AnswerRun.objects.filter(question=question).order_by("attempt"))
        assert [run.attempt for run in runs] == [1, 2]
        assert all(run.error.startswith("lease lapsed") and run.finished_at for run in runs)
        assert [run.outcome for run in runs] == ["", "failed"]
        assert list(question.markers.filter(kind=LivenessMarker.Kind.RESULT).values_list("outcome", flat=True)) == [
            "failed"
        ]
        assert Alert.objects.filter(kind=Alert.Kind.QUESTION_FAILED, key=f"question:{question.pk}").count() == 1
        assert not SendJob.objects.filter(question=question).exists()

    def test_every_status_change_of_a_retried_question_is_audited_in_order(self, answerable_question):
        question = answerable_question
        with pytest.raises(WorkerKilled):
            question_process(question.pk, provider=ScriptedProvider([SEARCH, WorkerKilled()]))
        with provider_override(ScriptedProvider(ANSWER)):
            questions_sweep(now=timezone.now() + timedelta(minutes=2))
        moves = [
            (event.actor_id, event.data["from"], event.data["to"])
            for event in AuditEvent.objects.filter(target_type="conversations.question", target_id=str(question.pk))
            .order_by("pk")
            .exclude(data__from=None)
        ]
        assert moves == [
            ("agent", "accepted", "running"),
            ("sweep", "running", "accepted"),
            ("agent", "accepted", "running"),
            ("agent", "running", "answered"),
        ]
