"""A question's status changes only through `question_transition`: allowed moves are compare-and-set with an audit
row, terminal statuses write the result marker once, and anything else is a domain error that changes nothing."""

import ast
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from conversations.models import Question
from conversations.question_services import (
    ALLOWED_TRANSITIONS,
    QuestionStateConflict,
    question_create,
    question_lock,
    question_transition,
)
from conversations.tests.factories import MessageFactory, QuestionFactory
from monitoring.models import AuditEvent, LivenessMarker

Status = Question.Status
pytestmark = pytest.mark.django_db


def audit_moves(question) -> list[tuple[str, str | None, str]]:
    events = AuditEvent.objects.filter(target_type="conversations.question", target_id=str(question.pk))
    return [(event.action, event.data["from"], event.data["to"]) for event in events.order_by("pk")]


def result_outcomes(question) -> list[str]:
    return list(question.markers.filter(kind=LivenessMarker.Kind.RESULT).values_list("outcome", flat=True))


class TestCreate:
    def test_an_accepted_question_gets_its_accepted_marker_and_an_audit_row(self):
        message = MessageFactory(is_tagged=True, text="@봇 결제 조건?")
        question = question_create(message=message, room=message.room, vendor=message.room.vendor, text="결제 조건?")
        assert question.status == Status.ACCEPTED
        assert question.markers.filter(kind=LivenessMarker.Kind.ACCEPTED).count() == 1
        assert result_outcomes(question) == []
        assert audit_moves(question) == [("question.accepted", None, "accepted")]

    def test_a_blocked_question_gets_its_result_marker_at_once(self):
        message = MessageFactory(is_tagged=True, text="@봇 결제 조건?")
        question = question_create(
            message=message, room=message.room, vendor=None, text="결제 조건?", status=Status.BLOCKED, reason="room"
        )
        assert result_outcomes(question) == ["blocked"]
        assert question.outcome_reason == "room"

    @pytest.mark.parametrize("status", [Status.RUNNING, Status.ANSWERED, Status.FAILED])
    def test_no_question_starts_in_another_status(self, status):
        message = MessageFactory(is_tagged=True)
        with pytest.raises(ValueError):
            question_create(message=message, room=message.room, vendor=None, text="?", status=status)
        assert not Question.objects.exists()


class TestTransition:
    @pytest.mark.parametrize(
        ("from_status", "to_status"),
        # Sorted: a frozenset's order differs between processes, and xdist workers must collect the same tests.
        [(source, target) for source, targets in ALLOWED_TRANSITIONS.items() for target in sorted(targets)],
    )
    def test_every_allowed_move_is_a_compare_and_set_with_an_audit_row(self, from_status, to_status):
        question = QuestionFactory(status=from_status)
        question_transition(question, to=to_status, actor="agent", reason="사유", data={"run": 7})
        stored = Question.objects.get(pk=question.pk)
        assert stored.status == to_status == question.status
        event = AuditEvent.objects.get(target_type="conversations.question", target_id=str(question.pk))
        assert event.action == f"question.{to_status}" and event.actor_id == "agent"
        assert event.data == {"from": from_status, "to": to_status, "reason": "사유", "run": 7}
        terminal = to_status in Question.TERMINAL_STATUSES
        assert result_outcomes(question) == ([to_status] if terminal else [])

    @pytest.mark.parametrize(
        ("from_status", "to_status"),
        [
            (source, target)
            for source in Status.values
            for target in Status.values
            if target not in ALLOWED_TRANSITIONS[source]
        ],
    )
    def test_every_other_move_is_refused_and_changes_nothing(self, from_status, to_status):
        question = QuestionFactory(status=from_status)
        with pytest.raises(QuestionStateConflict):
            question_transition(question, to=to_status, actor="agent")
        assert Question.objects.get(pk=question.pk).status == from_status
        assert audit_moves(question) == []
        assert result_outcomes(question) == []

    def test_a_copy_read_before_another_move_loses_the_compare_and_set(self):
        question = QuestionFactory(status=Status.ACCEPTED)
        first, second = Question.objects.get(pk=question.pk), Question.objects.get(pk=question.pk)
        question_transition(first, to=Status.RUNNING, actor="agent")
        with pytest.raises(QuestionStateConflict):
            question_transition(second, to=Status.RUNNING, actor="agent")
        assert audit_moves(question) == [("question.running", "accepted", "running")]

    def test_terminal_statuses_are_final_and_the_result_marker_is_written_once(self):
        question = QuestionFactory(status=Status.RUNNING)
        question_transition(question, to=Status.ANSWERED, actor="agent")
        for target in Status.values:
            with pytest.raises(QuestionStateConflict):
                question_transition(question, to=target, actor="sweep")
        assert result_outcomes(question) == ["answered"]

    def test_the_table_names_every_status(self):
        assert set(ALLOWED_TRANSITIONS) == set(Status.values)
        # Terminal, except that staff reopen a blocked question once its room has a vendor (question_reopen).
        assert all(not ALLOWED_TRANSITIONS[status] for status in Question.TERMINAL_STATUSES if status != Status.BLOCKED)
        assert ALLOWED_TRANSITIONS[Status.BLOCKED] == {Status.ACCEPTED}


def _writes_question_status(node: ast.AST, source: str) -> bool:
    """`question.status = ...`, `Question.objects....update(status=...)` or
    `question.save(update_fields=[..., "status"])`."""
    if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(
            isinstance(target, ast.Attribute)
            and target.attr == "status"
            and "question" in (ast.get_source_segment(source, target.value) or "").lower()
            for target in targets
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("update", "save"):
        keywords = {keyword.arg: keyword.value for keyword in node.keywords}
        if node.func.attr == "update" and "status" in keywords:
            return "Question" in (ast.get_source_segment(source, node.func.value) or "")
        if node.func.attr == "save" and "update_fields" in keywords:
            receiver = ast.get_source_segment(source, node.func.value) or ""
            fields = ast.get_source_segment(source, keywords["update_fields"]) or ""
            return "question" in receiver.lower() and "status" in fields
    return False


def test_nothing_but_the_transition_service_writes_a_question_status():
    """One owner for the state machine: no other module of the project sets `Question.status`."""
    root = Path(__file__).resolve().parents[2]
    owner = root / "conversations" / "question_services.py"
    writers = []
    for app in ("agent", "conversations", "delivery", "monitoring", "vendors", "config"):
        for path in (root / app).rglob("*.py"):
            if path == owner or "tests" in path.parts or "migrations" in path.parts:
                continue
            source = path.read_text(encoding="utf-8")
            writers += [
                f"{path.relative_to(root)}:{node.lineno}"
                for node in ast.walk(ast.parse(source))
                if _writes_question_status(node, source)
            ]
    assert writers == []


def test_question_lock_locks_only_the_questions_row():
    question = QuestionFactory()
    with transaction.atomic(), CaptureQueriesContext(connection) as captured:
        question_lock(question.pk)
    (sql,) = [query["sql"] for query in captured.captured_queries if "FOR UPDATE" in query["sql"]]
    assert f'"conversations_question"."id" = {question.pk}' in sql
    assert "JOIN" not in sql
