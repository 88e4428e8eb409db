"""Writes of the agent: running a question (a run row per attempt), staff approval and marking answers wrong."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agent.llm.base import LlmProvider, LlmTransientError, provider_get
from agent.models import AnswerReview, AnswerRun, DraftRound, RunEvidence, ToolCallRecord
from agent.pipeline import AnswerTrace, QuestionContext, answer_compose, remove_questions_back, verification_names
from agent.selectors import room_history
from agent.verification import verify_draft
from conversations.models import Question, Room
from delivery.services import send_request_submit
from monitoring.models import Alert
from monitoring.services import alert_raise, audit_record, marker_result_write

logger = logging.getLogger(__name__)

Status = Question.Status


class QuestionNotActionable(Exception):
    """A staff action that does not fit the question's current state."""


def question_dispatch_on_commit(question: Question) -> None:
    """Hand the question to the agent once the transaction that accepted it has committed."""
    question_id = question.pk

    def dispatch():
        from agent.tasks import process_question

        process_question.delay(question_id)

    transaction.on_commit(dispatch)


def question_process(question_id: int, *, provider: LlmProvider | None = None) -> AnswerRun | None:
    """Claim an accepted question, answer it, store every step, queue the send, write the result marker.

    Returns None when another worker holds the question or it is no longer accepted. A transient LLM error puts
    the question back to `accepted` (the task retries); anything else fails it with an alert — never silence.
    """
    claimed = Question.objects.filter(pk=question_id, status=Status.ACCEPTED).update(
        status=Status.RUNNING, updated_at=timezone.now()
    )
    if not claimed:
        return None
    question = Question.objects.select_related("room", "vendor", "message").get(pk=question_id)
    provider = provider or provider_get()
    run = AnswerRun.objects.create(
        question=question,
        attempt=question.runs.count() + 1,
        provider=provider.name,
        room_kind=question.room.kind,
    )
    if question.room.resolution_status != Room.ResolutionStatus.MATCHED or question.vendor_id is None:
        _finish(question, run, outcome=Status.BLOCKED, reason=f"room_{question.room.resolution_status}")
        return run
    try:
        trace = answer_compose(question_context(question), provider=provider)
    except LlmTransientError as exc:
        _run_error(run, exc)
        Question.objects.filter(pk=question_id, status=Status.RUNNING).update(status=Status.ACCEPTED)
        raise
    except Exception as exc:
        logger.exception("question %s failed", question_id)
        _run_error(run, exc)
        question_fail(question_id, reason=f"{type(exc).__name__}: {exc}"[:200])
        return run
    _record_trace(run, trace)
    with transaction.atomic():
        if trace.outcome in (Status.ANSWERED, Status.NO_EVIDENCE):
            if question.vendor.answer_mode == "review":
                run.awaiting_review = True
                run.save(update_fields=["awaiting_review"])
            else:
                run.send_job = _send(question, trace.final_text, actor="agent")
                run.save(update_fields=["send_job"])
        _finish(question, run, outcome=trace.outcome, reason=trace.outcome_reason)
    return run


def question_context(question: Question) -> QuestionContext:
    return QuestionContext(
        question_id=question.pk,
        question_text=question.text,
        vendor=question.vendor,
        room=question.room,
        room_kind=question.room.kind,
        history=room_history(room=question.room, before=question.message),
    )


def question_fail(question_id: int, *, reason: str) -> bool:
    """Fail a question that cannot be answered (after retries, a crash, or stuck running) and alert staff."""
    with transaction.atomic():
        failed = Question.objects.filter(pk=question_id, status__in=[Status.ACCEPTED, Status.RUNNING]).update(
            status=Status.FAILED, outcome_reason=reason[:64], updated_at=timezone.now()
        )
        if not failed:
            return False
        question = Question.objects.select_related("room").get(pk=question_id)
        marker_result_write(question=question, outcome=Status.FAILED)
        audit_record(
            actor_kind="system", actor_id=None, action="question.fail", target=question, data={"reason": reason}
        )
        transaction.on_commit(
            lambda: alert_raise(
                kind=Alert.Kind.QUESTION_FAILED,
                key=f"question:{question_id}",
                message=f"질문 처리에 실패했습니다: [{question.room.name}] {question.text[:80]} ({reason[:120]})",
                data={"question_id": question_id, "reason": reason},
            )
        )
    return True


def questions_sweep(*, now=None) -> dict:
    """Re-dispatch accepted questions whose dispatch was lost; fail ones stuck running. Bounded, idempotent."""
    from agent.tasks import process_question

    now = now or timezone.now()
    lost_before = now - timedelta(seconds=settings.AGENT_DISPATCH_LOST_SECONDS)
    stale_before = now - timedelta(seconds=settings.AGENT_RUNNING_STALE_SECONDS)
    limit = settings.AGENT_SWEEP_BATCH
    lost = list(
        Question.objects.filter(status=Status.ACCEPTED, updated_at__lt=lost_before)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    for question_id in lost:
        # Touch first so the next sweep does not dispatch it again while this dispatch waits in the queue.
        Question.objects.filter(pk=question_id, status=Status.ACCEPTED).update(updated_at=now)
        process_question.delay(question_id)
    stale = list(
        Question.objects.filter(status=Status.RUNNING, updated_at__lt=stale_before)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    failed = sum(question_fail(question_id, reason="stuck running") for question_id in stale)
    return {"redispatched": len(lost), "failed": failed}


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
    return review


def staff_text_verify(*, question: Question, run: AnswerRun, text: str) -> list[dict]:
    """Verify a staff-edited answer against the evidence of the run, like any draft."""
    names = verification_names(question.vendor, internal=question.room.kind == Room.Kind.INTERNAL)
    result = verify_draft(
        text,
        evidence=list(run.evidence.values_list("text", flat=True)),
        known_brands=names.brands,
        counterpart_names=names.counterpart,
        other_vendor_names=names.other_vendors,
        confirmed_actions=run.confirmed_actions,
    )
    _, asked_back = remove_questions_back(text)
    return [v.as_dict() for v in result.violations] + [{"kind": "asks_back", "text": t} for t in asked_back]


@transaction.atomic
def answer_mark_wrong(*, question: Question, actor, reason: str) -> AnswerReview:
    if not reason.strip():
        raise QuestionNotActionable("오답 사유를 입력하세요.")
    run = question.runs.order_by("-attempt").first()
    review = AnswerReview.objects.create(
        question=question,
        run=run,
        action=AnswerReview.Action.MARK_WRONG,
        text=run.final_text if run else "",
        reason=reason,
        actor=actor,
    )
    audit_record(
        actor_kind="staff", actor_id=actor.pk, action="answer.mark_wrong", target=question, data={"reason": reason}
    )
    return review


def _send(question: Question, text: str, *, actor):
    job, _ = send_request_submit(
        room=question.room,
        items=[{"kind": "text", "text": text}],
        idempotency_key=f"question:{question.pk}:answer",
        question=question,
        actor=actor,
    )
    return job


def _finish(question: Question, run: AnswerRun, *, outcome: str, reason: str) -> None:
    with transaction.atomic():
        run.outcome = outcome
        run.outcome_reason = reason[:200]
        run.finished_at = timezone.now()
        run.save(update_fields=["outcome", "outcome_reason", "finished_at"])
        Question.objects.filter(pk=question.pk, status=Status.RUNNING).update(
            status=outcome, outcome_reason=reason[:64], updated_at=timezone.now()
        )
        marker_result_write(question=question, outcome=outcome)
        audit_record(
            actor_kind="system", actor_id="agent", action=f"question.{outcome}", target=question, data={"run": run.pk}
        )


def _record_trace(run: AnswerRun, trace: AnswerTrace) -> None:
    with transaction.atomic():
        run.model_name = trace.model
        run.history = trace.history
        run.search_query = trace.search_query
        run.query_rewritten = trace.query_rewritten
        run.tools_offered = trace.tools_offered
        run.confirmed_actions = trace.confirmed_actions
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


def _run_error(run: AnswerRun, exc: Exception) -> None:
    AnswerRun.objects.filter(pk=run.pk).update(error=f"{type(exc).__name__}: {exc}"[:2000], finished_at=timezone.now())


def _last_draft(run: AnswerRun) -> str:
    last = run.rounds.order_by("-number").first()
    return last.clean_text if last else ""
