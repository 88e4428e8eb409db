"""Thin Celery entry points of the agent: load by id, call a service."""

from celery.exceptions import SoftTimeLimitExceeded

from agent.knowledge.training import training_job_fail, training_job_run
from agent.services import RUN_SOFT_TIME_LIMIT_SECONDS, RUN_TIME_LIMIT_SECONDS, question_process, questions_sweep
from config.celery import task
from conversations.question_services import PROCESS_QUESTION_TASK


# Idempotent (the run claims its question by compare-and-set), so acknowledged late: a message whose worker died
# is delivered again and finds the question taken over or done. Transient errors are retried; how many runs a
# question gets is bounded by AGENT_RUN_MAX_ATTEMPTS in the service, which fails it on the last one. The retry
# bound here is higher so the service decides; if Celery still gives up, the sweep dispatches the question again.
# Conversations dispatches it by this name (`question_dispatch`), as it cannot import the agent.
@task(
    PROCESS_QUESTION_TASK,
    queue="agent",
    soft_time_limit=RUN_SOFT_TIME_LIMIT_SECONDS,
    time_limit=RUN_TIME_LIMIT_SECONDS,
    acks_late=True,
    max_retries=10,
)
def process_question(question_id: int) -> str:
    run = question_process(question_id)
    return run.outcome if run else "skipped"


@task("agent.sweep_questions", queue="agent", soft_time_limit=50, time_limit=60)
def sweep_questions() -> dict:
    return questions_sweep()


# Idempotent: rows are taken while pending, under SKIP LOCKED, so a redelivered message continues the job.
@task("agent.training_job_run", queue="default", soft_time_limit=1800, time_limit=1900, acks_late=True)
def training_job_run_task(job_id: int) -> str:
    try:
        return training_job_run(job_id)
    except SoftTimeLimitExceeded:
        training_job_fail(job_id, reason="시간 제한을 넘었습니다. '다시 실행'으로 남은 행을 이어서 처리하세요.")
        return "failed"
