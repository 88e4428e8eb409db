"""Thin Celery entry points of the agent: load by id, call a service."""

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError

from agent.knowledge.training import training_job_fail, training_job_run
from agent.llm.base import LlmTransientError
from agent.services import question_fail, question_process, questions_sweep

TRANSIENT_ERRORS = (LlmTransientError, OperationalError)
MAX_RETRIES = 3


@shared_task(
    bind=True,
    name="agent.process_question",
    acks_late=True,  # idempotent: the question is claimed by compare-and-set
    soft_time_limit=240,
    time_limit=300,
    max_retries=MAX_RETRIES,
)
def process_question(self, question_id: int) -> str:
    try:
        run = question_process(question_id)
    except TRANSIENT_ERRORS as exc:
        if self.request.retries >= MAX_RETRIES:
            question_fail(question_id, reason=f"retries exhausted: {type(exc).__name__}")
            return "failed"
        if self.request.is_eager:
            # In-process execution (no broker): retry right here instead of raising Retry to the caller.
            return self.apply(args=[question_id], retries=self.request.retries + 1).result
        raise self.retry(exc=exc, countdown=min(60, 5 * 2**self.request.retries)) from exc
    except SoftTimeLimitExceeded:
        question_fail(question_id, reason="time limit")
        return "failed"
    return run.outcome if run else "skipped"


@shared_task(name="agent.sweep_questions", soft_time_limit=50, time_limit=60)
def sweep_questions() -> dict:
    return questions_sweep()


@shared_task(
    name="agent.training_job_run",
    acks_late=True,  # idempotent: rows are taken while pending, under SKIP LOCKED
    soft_time_limit=1800,
    time_limit=1900,
)
def training_job_run_task(job_id: int) -> str:
    try:
        return training_job_run(job_id)
    except SoftTimeLimitExceeded:
        training_job_fail(job_id, reason="시간 제한을 넘었습니다. '다시 실행'으로 남은 행을 이어서 처리하세요.")
        return "failed"
