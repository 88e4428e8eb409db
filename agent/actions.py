"""The `[시스템 확인]` line: what the answer says happened, built by code from the send jobs, never by the model.

The caller reads the send jobs named by the run's action requests before and after the actions ran; the line
lists each job that exists afterwards — new ones as a request (`발송 요청 #J00012 · 견적서 · 상태: 대기`), ones
that already existed before as such — or says that nothing was done when the model asked for an action and no
job exists.
"""

from dataclasses import dataclass

from agent.llm.prompts import SYSTEM_CONFIRMATION_TAG

NOTHING_DONE = "새로 처리되거나 접수된 것은 없음"
DRY_RUN_NUMBER = "(시험 실행: 기록하지 않음)"
_QUEUED_LABEL = "대기"


@dataclass(frozen=True)
class JobSnapshot:
    job_id: int
    state_label: str


def job_number(job_id: int) -> str:
    return f"#J{job_id:05d}"


def confirmation_line(
    labels: dict[str, str], before: dict[str, JobSnapshot], after: dict[str, JobSnapshot], *, asked: bool
) -> str:
    """One `[시스템 확인]` line from the jobs by idempotency key before and after the actions ran; `labels`
    names each key's action (the run's requests, in order). "" when no action was asked for at all."""
    parts = []
    for key, label in labels.items():
        job = after.get(key)
        if job is None:
            continue
        if key in before and before[key].job_id == job.job_id:
            parts.append(f"이미 요청된 발송 {job_number(job.job_id)} · {label} · 상태: {job.state_label}")
        else:
            parts.append(f"발송 요청 {job_number(job.job_id)} · {label} · 상태: {job.state_label}")
    if not parts:
        return f"{SYSTEM_CONFIRMATION_TAG} {NOTHING_DONE}" if asked or labels else ""
    return f"{SYSTEM_CONFIRMATION_TAG} " + " / ".join(parts)


def confirmation_line_preview(requests: list[dict], *, asked: bool) -> str:
    """The line a real run would append, for a dry run: every recorded request as a new, queued send."""
    parts = [f"발송 요청 {DRY_RUN_NUMBER} · {request['label']} · 상태: {_QUEUED_LABEL}" for request in requests]
    if not parts:
        return f"{SYSTEM_CONFIRMATION_TAG} {NOTHING_DONE}" if asked else ""
    return f"{SYSTEM_CONFIRMATION_TAG} " + " / ".join(parts)


def with_confirmation(text: str, line: str) -> str:
    return f"{text.rstrip()}\n\n{line}" if line else text
