"""Writes of the agent: running a question (a run row per attempt, holding a lease), staff approval, wrong marks.

A run claims an accepted question (`accepted → running`) and opens an `AnswerRun` holding a lease, in one
transaction. While it composes, a heartbeat thread renews the lease. It ends in one transaction that records the
trace, queues the send and moves the question to its outcome — but only while the run still holds the question:
a run the sweep took over (its lease lapsed) drops its answer. A transient error closes the run and puts the
question back to `accepted` for the task's retry; the sweep gives a question whose lease lapsed (a killed worker)
to a new run. Either way at most `AGENT_RUN_MAX_ATTEMPTS` runs, then the question fails with an alert.
Question statuses change only through `conversations.question_services`.
"""

import logging
import os
import socket
import threading
import time
from contextlib import contextmanager
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from agent.actions import JobSnapshot, confirmation_line, with_confirmation
from agent.knowledge.faq_services import faq_entry_create
from agent.llm.base import LlmPermanentError, LlmProvider, provider_get, provider_kind
from agent.models import (
    ActionRequest,
    AnswerReview,
    AnswerRun,
    AttentionItem,
    DraftRound,
    RunEvidence,
    ToolCallRecord,
)
from agent.pipeline import AnswerTrace, QuestionContext, answer_compose, remove_questions_back, verification_names
from agent.selectors import questions_dispatch_lost, questions_lease_lapsed, room_history
from agent.tools import ActionRefused, Grade, ToolContext, action_perform
from agent.tools.registry import tool_names
from agent.verification import verify_draft
from config.celery import TRANSIENT_ERRORS
from conversations.models import Question, Room
from conversations.question_services import (
    question_blocked_alert_on_commit,
    question_dispatch,
    question_dispatch_on_commit,
    question_get_locked,
    question_lock,
    question_reopen,
    question_touch,
    question_transition,
)
from conversations.selectors import question_with_room_get, questions_by_ids, room_with_vendor_get
from delivery.selectors import send_jobs_by_key
from delivery.services import SendJobError, send_request_submit
from monitoring.models import Alert
from monitoring.services import alert_raise, audit_record

logger = logging.getLogger(__name__)

Status = Question.Status

# Hard and soft time limit of one run (the task's). The heartbeat stops renewing at the hard limit, so a run that
# hangs in a pool that does not enforce limits still loses its lease.
RUN_TIME_LIMIT_SECONDS = 300
RUN_SOFT_TIME_LIMIT_SECONDS = 240
AGENT_ACTOR = "agent"
SWEEP_ACTOR = "sweep"
ERROR_MAX_LENGTH = 2000
LEASE_LAPSED = "lease lapsed: the run's worker stopped renewing it (killed, out of memory or cut off)"


class QuestionNotActionable(Exception):
    """A staff action that does not fit the question's current state."""


def question_process(question_id: int, *, provider: LlmProvider | None = None) -> AnswerRun | None:
    """Claim an accepted question, answer it, store every step, queue the send — exactly once.

    Returns None when the question is not accepted (another run has it, or it is done). A transient error closes
    the run, puts the question back to `accepted` and is raised again for the task to retry (on the last attempt
    the question fails instead); any other error fails the question with an alert — never silence. A permanent
    provider error (401, 403, 404, a 400 for an unknown model) or a missing provider setting fails it at once and
    raises one provider alert besides: no retry and no sweep would change the answer.
    """
    configuration_error = None
    if provider is None:
        try:
            provider = provider_get()
        except ImproperlyConfigured as error:
            configuration_error = error  # the question fails on it below, at once, instead of waiting for a sweep
    run = run_claim(question_id, provider_name=provider.name if provider else provider_kind())
    if run is None:
        return None
    question = run.question
    with _lease_heartbeat(run):
        try:
            if configuration_error is not None:
                raise configuration_error
            if question.room.resolution_status != Room.ResolutionStatus.MATCHED or question.vendor_id is None:
                # The room was re-resolved away from a vendor after the question was accepted.
                reason = f"room_{question.room.resolution_status}"
                if _run_finish(run, outcome=Status.BLOCKED, reason=reason):
                    question.outcome_reason = reason
                    question_blocked_alert_on_commit(question)
            else:
                trace = answer_compose(question_context(question), provider=provider)
                _run_finish(run, outcome=trace.outcome, reason=trace.outcome_reason, trace=trace)
        except TRANSIENT_ERRORS as error:
            if _run_release(run, error):
                raise
        except Exception as error:
            logger.exception("question %s failed", question_id)
            _run_fail(run, error)
            if isinstance(error, (LlmPermanentError, ImproperlyConfigured)):
                # Another attempt would fail the same way, and so would every other question: say so once.
                transaction.on_commit(partial(provider_failure_alert, error))
    run.refresh_from_db()
    return run


def provider_failure_alert(error: Exception) -> None:
    """One open alert for a provider that refuses every call (a wrong key, model or endpoint, a missing setting),
    raised when a question fails on it."""
    kind = provider_kind()
    alert_raise(
        kind=Alert.Kind.LLM_PROVIDER_FAILED,
        key=f"llm:{kind}",
        message=f"LLM 제공자({kind})가 요청을 거부해 질문이 바로 실패했습니다. 설정을 확인하세요: {str(error)[:300]}",
        data={"provider": kind, "error": _error_text(error)},
    )


def run_claim(question_id: int, *, provider_name: str) -> AnswerRun | None:
    """`accepted → running` and a new `AnswerRun` holding a lease, in one transaction; None when not accepted.

    An accepted question whose attempts are used up is failed instead.
    """
    with transaction.atomic():
        question = question_get_locked(question_id)
        if question is None or question.status != Status.ACCEPTED:
            return None
        attempt = _attempts(question) + 1
        if attempt > settings.AGENT_RUN_MAX_ATTEMPTS:
            _fail(question, reason=f"attempts exhausted ({attempt - 1})", actor=AGENT_ACTOR)
            return None
        question_transition(question, to=Status.RUNNING, actor=AGENT_ACTOR, data={"attempt": attempt})
        run = AnswerRun.objects.create(
            question=question,
            attempt=attempt,
            provider=provider_name,
            room_kind=question.room.kind,
            worker=f"{socket.gethostname()}:{os.getpid()}",
            lease_expires_at=timezone.now() + _lease_duration(),
        )
    return run


def run_lease_renew(run_id: int) -> bool:
    """Extend an open run's lease from now; False when the run is closed (finished, failed or taken over)."""
    expires_at = timezone.now() + _lease_duration()
    return bool(AnswerRun.objects.filter(pk=run_id, finished_at__isnull=True).update(lease_expires_at=expires_at))


def question_context(question: Question) -> QuestionContext:
    return QuestionContext(
        question_id=question.pk,
        question_text=question.text,
        vendor=question.vendor,
        room=question.room,
        room_kind=question.room.kind,
        history=room_history(room=question.room, before=question.message),
    )


def questions_sweep(*, now=None) -> dict:
    """Re-dispatch accepted questions whose dispatch was lost; give running questions whose lease lapsed to a new
    run (or fail them when no attempt is left). Bounded batches, compare-and-set: safe to run at any moment."""
    now = now or timezone.now()
    limit = settings.AGENT_SWEEP_BATCH
    lost = questions_dispatch_lost(
        untouched_since=now - timedelta(seconds=settings.AGENT_DISPATCH_LOST_SECONDS), limit=limit
    )
    redispatched = 0
    for question_id in lost:
        # Touch first so the next sweep does not dispatch it again while this dispatch waits in the queue.
        if question_touch(question_id, status=Status.ACCEPTED, now=now):
            question_dispatch(question_id)
            redispatched += 1
    outcomes = [_run_reclaim(question_id, now=now) for question_id in questions_lease_lapsed(now=now, limit=limit)]
    return {
        "redispatched": redispatched,
        "reclaimed": outcomes.count(Status.ACCEPTED),
        "failed": outcomes.count(Status.FAILED),
    }


# --- the life of a run ---------------------------------------------------------------------------------------


def _run_finish(run: AnswerRun, *, outcome: str, reason: str, trace: AnswerTrace | None = None) -> bool:
    """Record the trace, queue the send and move the question to its outcome, in one transaction — so a crash
    or an error inside leaves nothing half done and the retry answers once. False when the run no longer holds
    the question (the sweep gave it to another run): its answer is dropped."""
    run_id, question_id = run.pk, run.question_id
    with transaction.atomic():
        question = question_get_locked(question_id)
        run = _run_holding(question, run)
        if run is None:
            logger.warning("run %s of question %s was taken over; its answer is dropped", run_id, question_id)
            return False
        if trace is not None:
            _record_trace(run, trace)
            if outcome in (Status.ANSWERED, Status.NO_EVIDENCE):
                if question.vendor.answer_mode == "review":
                    run.awaiting_review = True
                else:
                    # Only a verified answer runs its actions; the line says what they did, from the jobs.
                    line = actions_run(run, actor=AGENT_ACTOR, perform=outcome == Status.ANSWERED)
                    run.final_text = with_confirmation(trace.final_text, line)
                    run.send_job = _send(question, run.final_text, actor=AGENT_ACTOR)
        run.outcome = outcome
        run.outcome_reason = reason[:200]
        _run_close(run)
        question_transition(
            question, to=outcome, actor=AGENT_ACTOR, reason=reason, data={"run": run.pk, "attempt": run.attempt}
        )
    return True


def _run_release(run: AnswerRun, error: Exception) -> bool:
    """After a transient error: close the run and put the question back to `accepted` for a retry. On the last
    attempt the question fails instead. Returns whether the question was put back."""
    message = _error_text(error)
    with transaction.atomic():
        question = question_get_locked(run.question_id)
        run = _run_holding(question, run)
        if run is None:
            return False
        if run.attempt >= settings.AGENT_RUN_MAX_ATTEMPTS:
            _fail(question, reason=f"attempts exhausted: {type(error).__name__}", actor=AGENT_ACTOR, error=message)
            return False
        _run_close(run, error=message)
        question_transition(question, to=Status.ACCEPTED, actor=AGENT_ACTOR, data={"run": run.pk, "error": message})
    return True


def _run_fail(run: AnswerRun, error: Exception) -> None:
    """After a terminal error: close the run and fail the question (unless another run holds it by now)."""
    message = _error_text(error)
    with transaction.atomic():
        question = question_get_locked(run.question_id)
        if _run_holding(question, run) is None:
            return
        _fail(question, reason=message, actor=AGENT_ACTOR)


def _run_reclaim(question_id: int, *, now) -> str | None:
    """A running question none of whose runs holds a live lease: close its open runs and put it back to
    `accepted` with a new dispatch, or fail it when its attempts are used up. None when it changed meanwhile."""
    with transaction.atomic():
        question = question_get_locked(question_id, skip_locked=True)
        if question is None or question.status != Status.RUNNING:
            return None
        open_runs = _open_runs_locked(question)
        if any(run.lease_expires_at and run.lease_expires_at > now for run in open_runs):
            return None  # renewed since the sweep looked
        attempts = _attempts(question)
        if attempts >= settings.AGENT_RUN_MAX_ATTEMPTS:
            reason = f"lease lapsed, attempts exhausted ({attempts})"
            _fail(question, reason=reason, actor=SWEEP_ACTOR, error=LEASE_LAPSED)
            return Status.FAILED
        for run in open_runs:
            _run_close(run, error=LEASE_LAPSED)
        question_transition(
            question, to=Status.ACCEPTED, actor=SWEEP_ACTOR, data={"lease_lapsed_runs": [r.pk for r in open_runs]}
        )
        question_dispatch_on_commit(question)
    return Status.ACCEPTED


def _run_holding(question: Question | None, run: AnswerRun) -> AnswerRun | None:
    """`run` as stored now, locked, while it still holds `question` (locked by the caller): the question running
    and the run not closed by the sweep. None otherwise. Read afresh, so nothing a rolled-back attempt to finish
    set on the caller's copy is written."""
    if question is None or question.status != Status.RUNNING:
        return None
    return AnswerRun.objects.select_for_update().filter(pk=run.pk, finished_at__isnull=True).first()


def _run_close(run: AnswerRun, *, error: str = "") -> None:
    """End the run and its lease; the run's outcome (if any) is set by the caller."""
    run.finished_at = timezone.now()
    run.lease_expires_at = None
    if error:
        run.error = error[:ERROR_MAX_LENGTH]
    run.save(
        update_fields=[
            "outcome",
            "outcome_reason",
            "awaiting_review",
            "final_text",
            "send_job",
            "error",
            "finished_at",
            "lease_expires_at",
        ]
    )


def _fail(question: Question, *, reason: str, actor: str, error: str = "") -> None:
    """`→ failed` (result marker, audit row), its open runs closed as failed, and a `question_failed` alert after
    the commit. The question is locked by the caller."""
    for run in _open_runs_locked(question):
        run.outcome = AnswerRun.Outcome.FAILED
        run.outcome_reason = reason[:200]
        _run_close(run, error=error or reason)
    question_transition(question, to=Status.FAILED, actor=actor, reason=reason)
    question_id, room_name, text = question.pk, question.room.name, question.text
    transaction.on_commit(
        lambda: alert_raise(
            kind=Alert.Kind.QUESTION_FAILED,
            key=f"question:{question_id}",
            message=f"질문 처리에 실패했습니다: [{room_name}] {text[:80]} ({reason[:120]})",
            data={"question_id": question_id, "reason": reason},
        )
    )


def _open_runs_locked(question: Question) -> list[AnswerRun]:
    return list(
        AnswerRun.objects.select_for_update().filter(question=question, finished_at__isnull=True).order_by("pk")
    )


def _attempts(question: Question) -> int:
    return question.runs.aggregate(last=Max("attempt"))["last"] or 0


def _lease_duration() -> timedelta:
    return timedelta(seconds=settings.AGENT_RUN_LEASE_SECONDS)


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:ERROR_MAX_LENGTH]


@contextmanager
def _lease_heartbeat(run: AnswerRun):
    """Renew the run's lease every `AGENT_RUN_HEARTBEAT_SECONDS` from a thread while the block runs.

    A thread, not calls between pipeline stages: one model call may take longer than a lease (timeouts times
    retries), and a thread renews whatever the pipeline is doing. It dies with the process, which is the point:
    a killed worker stops renewing and the sweep takes the question over. It stops at the run's hard time limit,
    so a run hung in a pool that enforces no limit loses its lease too.
    """
    stop = threading.Event()
    renew_until = time.monotonic() + RUN_TIME_LIMIT_SECONDS
    heartbeat = threading.Thread(
        target=_lease_heartbeat_loop, args=(run.pk, stop, renew_until), name=f"run-{run.pk}-heartbeat", daemon=True
    )
    heartbeat.start()
    try:
        yield
    finally:
        stop.set()
        heartbeat.join(timeout=settings.AGENT_RUN_HEARTBEAT_SECONDS)


def _lease_heartbeat_loop(run_id: int, stop: threading.Event, renew_until: float) -> None:
    try:
        while not stop.wait(settings.AGENT_RUN_HEARTBEAT_SECONDS) and time.monotonic() < renew_until:
            try:
                if not run_lease_renew(run_id):
                    return  # closed: finished, or taken over by the sweep
            except TRANSIENT_ERRORS:
                # Try again at the next beat; if the database stays away the lease lapses, as it should.
                logger.warning("run %s: lease renewal failed", run_id, exc_info=True)
    finally:
        connection.close()  # this thread's own connection


@transaction.atomic
def answer_approve(*, question: Question, actor, text: str | None = None, override_reason: str = "") -> AnswerReview:
    """Staff send a held or review-mode answer. An edited text is verified again; sending despite violations
    needs a reason and is recorded as an override."""
    run = question.runs.order_by("-attempt").first()
    if run is None or run.send_job_id:
        raise QuestionNotActionable("이미 발송되었거나 답변 실행이 없는 질문입니다.")
    if run.outcome not in (Status.ANSWERED, Status.HELD, Status.NO_EVIDENCE):
        raise QuestionNotActionable("답변·보류·근거 없음 상태의 질문만 승인할 수 있습니다.")
    final = (text if text is not None else run.final_text or _last_draft(run)).strip()
    if not final:
        raise QuestionNotActionable("보낼 답변이 비어 있습니다.")
    violations = staff_text_verify(question=question, run=run, text=final)
    if violations and not override_reason.strip():
        raise QuestionNotActionable("검증 위반이 남아 있습니다. 그대로 보내려면 사유를 입력하세요.")
    action = AnswerReview.Action.OVERRIDE if violations else AnswerReview.Action.APPROVE
    # Approving a verified answer runs its action requests; a held or no-evidence one runs none (staff run
    # those one by one from the question page). The line reports what exists, from the jobs.
    line = actions_run(run, actor=actor, perform=run.outcome == Status.ANSWERED)
    final = with_confirmation(final, line)
    run.send_job = _send(question, final, actor=actor)
    run.final_text = final
    run.awaiting_review = False
    run.save(update_fields=["send_job", "final_text", "awaiting_review"])
    review = AnswerReview.objects.create(
        question=question,
        run=run,
        action=action,
        text=final,
        reason=override_reason,
        violations=violations,
        actor=actor,
    )
    audit_record(
        actor_kind="staff", actor_id=actor.pk, action=f"answer.{action}", target=question, data={"run": run.pk}
    )
    _attention_set(question, actor=actor, state=AttentionItem.State.DONE)
    return review


def question_reanswer(*, question: Question, actor) -> Question:
    """Staff have a blocked question answered after all, once its room has a vendor: `blocked → accepted` with the
    room's vendor (audited) and handed to the agent after the commit."""
    with transaction.atomic():
        locked = question_get_locked(question.pk)
        if locked is None or locked.status != Status.BLOCKED:
            raise QuestionNotActionable("차단된 질문만 다시 답변할 수 있습니다.")
        room = room_with_vendor_get(room_id=locked.room_id)
        if room.resolution_status != Room.ResolutionStatus.MATCHED or room.vendor_id is None:
            raise QuestionNotActionable("방의 벤더를 먼저 지정하세요.")
        question_reopen(locked, vendor=room.vendor, actor=actor)
        question_dispatch_on_commit(locked)
    return locked


def staff_text_verify(*, question: Question, run: AnswerRun, text: str) -> list[dict]:
    """Verify a staff-edited answer against the evidence of the run, like any draft."""
    names = verification_names(question.vendor, internal=question.room.kind == Room.Kind.INTERNAL)
    result = verify_draft(
        text,
        evidence=list(run.evidence.values_list("text", flat=True)),
        record_evidence=list(run.evidence.filter(source_kind="record").values_list("text", flat=True)),
        known_brands=names.brands,
        counterpart_names=names.counterpart,
        other_vendor_names=names.other_vendors,
        confirmed_actions=run.confirmed_actions,
        question=question.text,
        counterpart_brands=names.counterpart_brands,
    )
    _, asked_back = remove_questions_back(text)
    return [v.as_dict() for v in result.violations] + [{"kind": "asks_back", "text": t} for t in asked_back]


@transaction.atomic
def answer_mark_wrong(*, question: Question, actor, reason: str, correction: str = "") -> AnswerReview:
    """Record that the answer was wrong, with the reason and (when staff write it) what it should have said —
    both go into the evaluation export (`eval_agent --from-reviews`)."""
    if not reason.strip():
        raise QuestionNotActionable("오답 사유를 입력하세요.")
    run = question.runs.order_by("-attempt").first()
    review = AnswerReview.objects.create(
        question=question,
        run=run,
        action=AnswerReview.Action.MARK_WRONG,
        text=run.final_text if run else "",
        reason=reason,
        correction=correction.strip(),
        actor=actor,
    )
    audit_record(
        actor_kind="staff", actor_id=actor.pk, action="answer.mark_wrong", target=question, data={"reason": reason}
    )
    _attention_set(question, actor=actor, state=AttentionItem.State.OPEN)
    return review


@transaction.atomic
def answer_correct(*, question: Question, actor, text: str, override_reason: str = "") -> AnswerReview:
    """Staff follow an answer already sent with a correction: a new send to the room, its text verified against the
    run's evidence like any staff edit (sending despite violations needs a reason and is recorded with them)."""
    question = question_get_locked(question.pk)
    run = question.runs.order_by("-attempt").first() if question else None
    if run is None or run.send_job_id is None:
        raise QuestionNotActionable("아직 보낸 답변이 없습니다. 정정 대신 승인해 보내세요.")
    final = text.strip()
    if not final:
        raise QuestionNotActionable("보낼 정정 답변이 비어 있습니다.")
    violations = staff_text_verify(question=question, run=run, text=final)
    if violations and not override_reason.strip():
        raise QuestionNotActionable("검증 위반이 남아 있습니다. 그대로 보내려면 사유를 입력하세요.")
    number = question.reviews.filter(action=AnswerReview.Action.CORRECT).count() + 1
    job, _ = send_request_submit(
        room=question.room,
        items=[{"kind": "text", "text": final}],
        idempotency_key=f"question:{question.pk}:correction:{number}",
        question=question,
        actor=actor,
    )
    review = AnswerReview.objects.create(
        question=question,
        run=run,
        action=AnswerReview.Action.CORRECT,
        text=final,
        reason=override_reason,
        violations=violations,
        actor=actor,
    )
    audit_record(
        actor_kind="staff",
        actor_id=actor.pk,
        action="answer.correct",
        target=question,
        data={"run": run.pk, "send_job": job.pk, "number": number, "violations": len(violations)},
    )
    _attention_set(question, actor=actor, state=AttentionItem.State.DONE)
    return review


def staff_answer_latest(question: Question) -> AnswerReview | None:
    """The last answer staff sent for the question (an approval, an override or a correction), if any."""
    sent = (AnswerReview.Action.APPROVE, AnswerReview.Action.OVERRIDE, AnswerReview.Action.CORRECT)
    return question.reviews.filter(action__in=sent).exclude(text="").order_by("-created_at", "-pk").first()


@transaction.atomic
def staff_answer_save_as_faq(*, question: Question, actor, faq_question: str, answer: str, category: str = ""):
    """Keep an answer staff sent as an FAQ entry (through the FAQ services: a `created` version of curation origin),
    its source naming the question. Raises `FaqError` when an active FAQ has the same question."""
    entry = faq_entry_create(
        question=faq_question,
        answer=answer,
        category=category,
        source="staff_answer",
        source_id=f"question:{question.pk}",
        actor=actor,
    )
    audit_record(
        actor_kind="staff", actor_id=actor.pk, action="answer.save_as_faq", target=question, data={"faq": entry.pk}
    )
    return entry


# --- the needs-attention list as a work queue ---


# `owner` left as it is (None means "nobody").
UNCHANGED = object()


def attention_update(*, question_ids, actor, owner=UNCHANGED, state: str | None = None) -> int:
    """Staff take or hand over (`owner`, None to release) and close or reopen (`state`) questions of the attention
    list, in one transaction with an audit row per question changed. Returns how many changed."""
    if state is not None and state not in AttentionItem.State.values:
        raise ValueError(f"unknown attention state: {state}")
    changed = 0
    with transaction.atomic():
        for question in questions_by_ids(question_ids):
            changed += _attention_set(question, actor=actor, owner=owner, state=state)
    return changed


def _attention_set(question: Question, *, actor, owner=UNCHANGED, state: str | None = None) -> bool:
    """Set the question's attention owner and/or state (inside the caller's transaction); audited when changed."""
    # The question's row lock serialises the first write of its item (two staff acting at once create one row).
    question_lock(question.pk)
    item, _ = AttentionItem.objects.select_for_update().get_or_create(question=question)
    before = {"owner": item.owner_id, "state": item.state}
    if owner is not UNCHANGED:
        item.owner = owner
    if state is not None:
        item.state = state
        item.done_at = timezone.now() if state == AttentionItem.State.DONE else None
    after = {"owner": item.owner_id, "state": item.state}
    if after == before:
        return False
    item.save()
    audit_record(
        actor_kind="staff",
        actor_id=actor.pk,
        action="attention.update",
        target=question,
        data={"before": before, "after": after},
    )
    return True


def _send(question: Question, text: str, *, actor):
    job, _ = send_request_submit(
        room=question.room,
        items=[{"kind": "text", "text": text}],
        idempotency_key=f"question:{question.pk}:answer",
        question=question,
        actor=actor,
    )
    return job


def _record_trace(run: AnswerRun, trace: AnswerTrace) -> None:
    with transaction.atomic():
        run.model_name = trace.model
        run.history = trace.history
        run.search_query = trace.search_query
        run.query_rewritten = trace.query_rewritten
        run.tools_offered = trace.tools_offered
        run.confirmed_actions = trace.confirmed_actions
        run.handoff_removed = trace.handoff_removed
        run.final_text = trace.final_text
        run.prompt_tokens = trace.prompt_tokens
        run.completion_tokens = trace.completion_tokens
        run.llm_calls = trace.llm_calls
        run.stage_ms = trace.stage_ms
        run.latency_ms = round(trace.stage_ms.get("total", 0))
        run.save()
        RunEvidence.objects.bulk_create(
            RunEvidence(
                run=run,
                round=round_,
                position=position,
                source_kind=item.source_kind,
                reference=item.reference[:200],
                workspace=item.workspace,
                title=item.title[:300],
                url=item.url[:500],
                text=item.text,
                score=item.score,
                mask_count=item.mask_count,
            )
            for position, (round_, item) in enumerate(trace.evidence)
        )
        DraftRound.objects.bulk_create(
            DraftRound(
                run=run,
                number=r.number,
                draft=r.draft,
                violations=r.violations,
                removed=r.removed,
                clean_text=r.clean_text,
            )
            for r in trace.rounds
        )
        ToolCallRecord.objects.bulk_create(
            ToolCallRecord(
                run=run,
                round=c.round,
                position=position,
                name=c.name[:64],
                arguments=c.arguments,
                allowed=c.allowed,
                blocked_reason=c.blocked_reason[:200],
                forced=c.forced,
                duration_ms=c.duration_ms,
                result_summary=c.result_summary,
                error=c.error,
            )
            for position, c in enumerate(trace.tool_calls)
        )
        ActionRequest.objects.bulk_create(
            ActionRequest(
                run=run,
                question_id=run.question_id,
                position=position,
                tool=request["tool"],
                arguments=request["arguments"],
                idempotency_key=request["idempotency_key"],
                label=request["label"][:300],
                # Asked again for an action that already happened: nothing left to run.
                status=ActionRequest.Status.DONE if request["already_done"] else ActionRequest.Status.PENDING,
                result="이미 처리된 요청" if request["already_done"] else "",
            )
            for position, request in enumerate(trace.action_requests)
        )


def _last_draft(run: AnswerRun) -> str:
    last = run.rounds.order_by("-number").first()
    return last.clean_text if last else ""


# --- action requests: irreversible actions, run only after the answer passed verification ---------------------


def actions_run(run: AnswerRun, *, actor, perform: bool) -> str:
    """Run the run's pending action requests (when `perform`) and return the `[시스템 확인]` line built from the
    send jobs named by its requests, read before and after. "" when the model asked for no action."""
    requests = list(run.action_requests.order_by("position"))
    asked = bool(requests) or run.tool_calls.filter(name__in=tool_names(grade=Grade.IRREVERSIBLE)).exists()
    labels = {request.idempotency_key: request.label for request in requests}
    before = _jobs_by_key(labels)
    if perform:
        for request in requests:
            if request.status == ActionRequest.Status.PENDING:
                action_request_run(request, actor=actor)
    return confirmation_line(labels, before, _jobs_by_key(labels), asked=asked)


@transaction.atomic
def action_request_run(request: ActionRequest, *, actor) -> ActionRequest:
    """Run one pending action request: the registry checks the tool and its arguments again (a read tool, a
    tampered argument or a record gone since is refused), then it acts — idempotently, by the request's key."""
    request = ActionRequest.objects.select_for_update().get(pk=request.pk)
    if request.status != ActionRequest.Status.PENDING:
        return request
    question = question_with_room_get(question_id=request.question_id)
    context = ToolContext(
        question_id=question.pk,
        vendor=question.vendor,
        room=question.room,
        room_kind=question.room.kind,
    )
    try:
        _, job = action_perform(
            context, request.tool, request.arguments, idempotency_key=request.idempotency_key, actor=actor
        )
    except ActionRefused as error:
        return action_request_transition(request, to=ActionRequest.Status.REFUSED, actor=actor, result=str(error))
    except SendJobError as error:
        return action_request_transition(request, to=ActionRequest.Status.FAILED, actor=actor, result=str(error))
    return action_request_transition(
        request,
        to=ActionRequest.Status.DONE,
        actor=actor,
        result=f"발송 작업 #{job.pk}",
        send_job=job,
    )


_ACTION_TRANSITIONS = {
    ActionRequest.Status.PENDING: (
        ActionRequest.Status.DONE,
        ActionRequest.Status.REFUSED,
        ActionRequest.Status.FAILED,
    ),
}


def action_request_transition(request: ActionRequest, *, to: str, actor, result: str = "", send_job=None):
    """The one way an action request changes status: compare-and-set on the status read, with an audit row."""
    if to not in _ACTION_TRANSITIONS.get(request.status, ()):
        raise QuestionNotActionable(f"동작 요청 상태를 {request.status}에서 {to}(으)로 바꿀 수 없습니다.")
    now = timezone.now()
    changed = ActionRequest.objects.filter(pk=request.pk, status=request.status).update(
        status=to, result=result[:500], send_job=send_job, executed_by=_actor_name(actor)[:150], executed_at=now
    )
    if not changed:
        raise QuestionNotActionable("동작 요청이 그사이 바뀌었습니다. 새로 고쳐 확인하세요.")
    audit_record(
        actor_kind="staff" if hasattr(actor, "pk") else "system",
        actor_id=actor.pk if hasattr(actor, "pk") else str(actor),
        action=f"action_request.{to}",
        target=request,
        data={"from": request.status, "tool": request.tool, "key": request.idempotency_key, "result": result[:200]},
    )
    request.refresh_from_db()
    return request


def action_request_run_by_staff(*, request: ActionRequest, actor) -> ActionRequest:
    """Staff run one pending request from the question page (e.g. of a held answer, whose actions never run by
    themselves)."""
    if request.status != ActionRequest.Status.PENDING:
        raise QuestionNotActionable("이미 실행되었거나 거부된 요청입니다.")
    return action_request_run(request, actor=actor)


def _jobs_by_key(labels: dict[str, str]) -> dict[str, JobSnapshot]:
    jobs = send_jobs_by_key(idempotency_keys=labels)
    return {job.idempotency_key: JobSnapshot(job.pk, job.get_state_display()) for job in jobs}


def _actor_name(actor) -> str:
    return getattr(actor, "username", None) or str(actor)
