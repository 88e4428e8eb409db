"""Writes of a question's status: the state machine, and the one service every status change goes through.

A question is created `accepted` (a matched room: the agent will answer it) or `blocked` (no answer is attempted).
`accepted → running` when a run claims it; `running → answered | held | blocked | no_evidence | failed` when the run
ends; `running → accepted` when a run lets go of it (a transient error, or a lease that lapsed because its worker
died) so that another run can take it; `accepted → failed` when no attempt is left. Terminal statuses never change,
with one exception staff make: a question blocked because its room had no vendor is reopened (`blocked → accepted`,
`question_reopen`) once staff assigned the room a vendor, so the agent answers it after all.

Every change is a compare-and-set on the status the caller read, checked against `ALLOWED_TRANSITIONS`, with an
audit row (`question.<status>`) in the same transaction. The liveness markers are written here too: the *accepted*
marker when an accepted question is created, the *result* marker when a question reaches a terminal status — so
each is written once per question (a reopened question gets a fresh *accepted* marker and loses its *result* one,
so the liveness monitor watches the new attempt). Nothing else writes `Question.status`.

An accepted question is handed to the agent by the name of the agent's task (`PROCESS_QUESTION_TASK`), so that
conversations, below the agent, does not import it; every dispatch, the agent's own included, goes through
`question_dispatch` / `question_dispatch_on_commit`.
"""

from functools import partial

from django.db import transaction
from django.utils import timezone

from config.celery import task_by_name
from conversations.models import Question
from conversations.selectors import question_reason_label
from monitoring.models import Alert, AuditEvent, LivenessMarker
from monitoring.services import alert_raise, audit_record, marker_accepted_write, marker_result_write

Status = Question.Status

ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    # To failed without a run: every attempt is used up.
    Status.ACCEPTED: frozenset({Status.RUNNING, Status.FAILED}),
    # Back to accepted: the run let go of the question and another run may take it.
    Status.RUNNING: frozenset(
        {Status.ACCEPTED, Status.ANSWERED, Status.HELD, Status.BLOCKED, Status.NO_EVIDENCE, Status.FAILED}
    ),
    Status.ANSWERED: frozenset(),
    Status.HELD: frozenset(),
    # Back to accepted: staff assigned the room a vendor and have the question answered (`question_reopen`).
    Status.BLOCKED: frozenset({Status.ACCEPTED}),
    Status.NO_EVIDENCE: frozenset(),
    Status.FAILED: frozenset(),
}
INITIAL_STATUSES = (Status.ACCEPTED, Status.BLOCKED)
# The agent's task that answers an accepted question; `agent.tasks` declares it with this name.
PROCESS_QUESTION_TASK = "agent.process_question"
REASON_MAX_LENGTH = Question._meta.get_field("outcome_reason").max_length


class QuestionStateConflict(Exception):
    """The question's status does not allow the requested change (or changed since the caller read it)."""

    def __init__(self, question: Question, to_status: str):
        super().__init__(f"Question {question.pk} cannot move from {question.status} to {to_status}.")
        self.question = question
        self.to_status = to_status


def question_create(*, message, room, vendor, text: str, status: str = Status.ACCEPTED, reason: str = "") -> Question:
    """Create the question of a tagged message, `accepted` or `blocked`, with its audit row and liveness marker."""
    if status not in INITIAL_STATUSES:
        raise ValueError(f"A question starts accepted or blocked, not {status!r}.")
    with transaction.atomic():
        question = Question.objects.create(
            message=message,
            room=room,
            vendor=vendor,
            text=text,
            status=status,
            outcome_reason=reason[:REASON_MAX_LENGTH],
        )
        audit_record(
            actor_kind=AuditEvent.ActorKind.SYSTEM,
            actor_id="ingest",
            action=f"question.{status}",
            target=question,
            data={"from": None, "to": status, "reason": reason},
        )
        if status == Status.ACCEPTED:
            marker_accepted_write(question=question)
        else:
            marker_result_write(question=question, outcome=status)
            question_blocked_alert_on_commit(question)
    return question


def question_dispatch(question_id: int) -> None:
    """Hand an accepted question to the agent now: queued on the broker, or answered here when tasks run in-process
    (no broker: `make demo`, the tests)."""
    task_by_name(PROCESS_QUESTION_TASK).delay(question_id)


def question_dispatch_on_commit(question: Question) -> None:
    """Hand the question to the agent once the transaction that accepted it has committed."""
    transaction.on_commit(partial(question_dispatch, question.pk))


def question_blocked_alert_on_commit(question: Question) -> None:
    """After the commit, a `room_unanswered` alert for the room of a question no answer was attempted for (one live
    alert per room; it closes when staff assign the room a vendor)."""
    room = question.room
    room_id, room_name, question_id, text = room.pk, room.name, question.pk, question.text
    reason = question_reason_label(question.outcome_reason)
    transaction.on_commit(
        lambda: alert_raise(
            kind=Alert.Kind.ROOM_UNANSWERED,
            key=f"room:{room_id}",
            message=f"벤더가 정해지지 않은 방이라 답하지 않은 질문이 있습니다: [{room_name}] {text[:80]} ({reason})",
            data={"room_id": room_id, "question_id": question_id, "reason": question.outcome_reason},
        )
    )


def question_get_locked(question_id: int, *, skip_locked: bool = False) -> Question | None:
    """The question, its row locked for a status change in the caller's transaction; None when it is gone (or
    locked by another transaction, with `skip_locked`)."""
    return (
        Question.objects.select_for_update(of=("self",), skip_locked=skip_locked)
        .select_related("room", "vendor", "message")
        .filter(pk=question_id)
        .first()
    )


def question_lock(question_id: int) -> None:
    """Lock the question's row in the caller's transaction without reading it, to serialise a first write that
    hangs off the question (another app's row created for it)."""
    Question.objects.select_for_update().filter(pk=question_id).values_list("pk").first()


def question_transition(
    question: Question, *, to: str, actor: str, reason: str | None = None, data: dict | None = None
) -> Question:
    """Move `question` from the status it was read with to `to`: compare-and-set, audit row, result marker.

    `actor` names the system component that acts (`"agent"`, `"sweep"`). `reason` (when given) becomes the
    question's `outcome_reason`. Raises `QuestionStateConflict` when the move is not allowed or the status changed
    since `question` was read.
    """
    from_status = question.status
    if to not in ALLOWED_TRANSITIONS[from_status]:
        raise QuestionStateConflict(question, to)
    fields = {"status": to, "updated_at": timezone.now()}
    if reason is not None:
        fields["outcome_reason"] = reason[:REASON_MAX_LENGTH]
    with transaction.atomic():
        if not Question.objects.filter(pk=question.pk, status=from_status).update(**fields):
            raise QuestionStateConflict(question, to)
        for name, value in fields.items():
            setattr(question, name, value)
        audit_record(
            actor_kind=AuditEvent.ActorKind.SYSTEM,
            actor_id=actor,
            action=f"question.{to}",
            target=question,
            data={"from": from_status, "to": to, **({"reason": reason} if reason else {}), **(data or {})},
        )
        if to in Question.TERMINAL_STATUSES:
            marker_result_write(question=question, outcome=to)
    return question


def question_reopen(question: Question, *, vendor, actor) -> Question:
    """`blocked → accepted` by staff, with the vendor they assigned the room: compare-and-set, audit row, a fresh
    *accepted* marker in place of the *result* one. The caller hands the question to the agent after the commit."""
    if Status.ACCEPTED not in ALLOWED_TRANSITIONS[question.status]:
        raise QuestionStateConflict(question, Status.ACCEPTED)
    from_status, from_reason = question.status, question.outcome_reason
    fields = {"status": Status.ACCEPTED, "vendor": vendor, "outcome_reason": "", "updated_at": timezone.now()}
    with transaction.atomic():
        if not Question.objects.filter(pk=question.pk, status=from_status).update(**fields):
            raise QuestionStateConflict(question, Status.ACCEPTED)
        for name, value in fields.items():
            setattr(question, name, value)
        audit_record(
            actor_kind=AuditEvent.ActorKind.STAFF,
            actor_id=actor.pk,
            action="question.reopen",
            target=question,
            data={"from": from_status, "to": Status.ACCEPTED, "reason": from_reason, "vendor_code": vendor.code},
        )
        LivenessMarker.objects.filter(question=question).delete()
        marker_accepted_write(question=question)
    return question


def question_touch(question_id: int, *, status: str, now=None) -> bool:
    """Refresh `updated_at` of a question still in `status` (no status change, no audit row): the sweep marks an
    accepted question it dispatched again, so the next sweep does not dispatch it once more while it waits."""
    return bool(Question.objects.filter(pk=question_id, status=status).update(updated_at=now or timezone.now()))
