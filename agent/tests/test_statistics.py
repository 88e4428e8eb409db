"""Statistics for staff (seed 001 section 12): per Seoul day answered / held / blocked / no-evidence / failed,
violations by kind, frequent questions, failed questions, evidence source split and latency p50/p95 — numbers
checked against a known data set, and the page draws them as inline SVG with the same numbers in tables."""

from datetime import datetime, timedelta
from xml.etree import ElementTree
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from agent.models import AnswerRun, DraftRound, RunEvidence
from agent.selectors import (
    latency_percentiles_python,
    percentile,
    question_text_key,
    statistics_daily,
    statistics_frequent_questions,
    statistics_latency_percentiles,
    statistics_source_split,
    statistics_unanswered_questions,
    statistics_violations_by_kind,
    statistics_window_start,
    violations_by_kind_python,
)
from agent.templatetags.agent_admin import horizontal_bar_chart, stacked_bar_chart
from conversations.models import Question
from conversations.tests.factories import QuestionFactory
from delivery.services import send_request_submit

pytestmark = pytest.mark.django_db

SEOUL = ZoneInfo("Asia/Seoul")
NOW = datetime(2025, 3, 14, 12, 0, tzinfo=SEOUL)


def question_at(when: datetime, status=Question.Status.ANSWERED, text="결제 조건이 어떻게 되나요?") -> Question:
    question = QuestionFactory(status=status, text=text)
    Question.objects.filter(pk=question.pk).update(created_at=when)
    return question


def run_at(when: datetime, *, outcome=AnswerRun.Outcome.ANSWERED, latency_ms=0, question=None) -> AnswerRun:
    run = AnswerRun.objects.create(
        question=question or question_at(when),
        provider="scripted",
        room_kind="external",
        outcome=outcome,
        latency_ms=latency_ms,
    )
    AnswerRun.objects.filter(pk=run.pk).update(started_at=when)
    return run


def violation(kind: str) -> dict:
    return {"kind": kind, "value": None, "text": "x", "span": [0, 1], "reason": kind, "suggestion": None}


def test_daily_counts_by_seoul_day_with_every_day_present():
    """Questions count on the Seoul day they arrived: 23:30 and 00:10 Seoul fall on different days even though
    both are on one UTC day; days without questions are present with zeros; older questions are outside."""
    today = NOW.replace(hour=9)
    for status in (Question.Status.ANSWERED, Question.Status.ANSWERED, Question.Status.HELD):
        question_at(today, status)
    question_at(NOW.replace(hour=0, minute=10), Question.Status.NO_EVIDENCE)  # 15:10 UTC the day before
    yesterday_late = NOW.replace(hour=23, minute=30) - timedelta(days=1)  # 14:30 UTC, the same UTC day
    question_at(yesterday_late, Question.Status.FAILED)
    question_at(yesterday_late, Question.Status.BLOCKED)
    question_at(yesterday_late, Question.Status.RUNNING)
    question_at(NOW - timedelta(days=13), Question.Status.ANSWERED)
    question_at(NOW - timedelta(days=14), Question.Status.ANSWERED)  # outside the window

    rows = statistics_daily(days=14, now=NOW)

    assert [row["day"] for row in rows] == [NOW.date() - timedelta(days=13 - offset) for offset in range(14)]
    by_day = {row["day"]: row for row in rows}
    today_row, yesterday_row = by_day[NOW.date()], by_day[NOW.date() - timedelta(days=1)]
    assert today_row == {
        "day": NOW.date(),
        "total": 4,
        "answered": 2,
        "held": 1,
        "blocked": 0,
        "no_evidence": 1,
        "failed": 0,
    }
    assert (yesterday_row["total"], yesterday_row["failed"], yesterday_row["blocked"]) == (3, 1, 1)
    assert rows[0]["answered"] == 1 and rows[0]["total"] == 1
    assert sum(row["total"] for row in rows) == 8
    assert all(row["total"] == 0 for row in rows[1:-2])


def test_violations_by_kind_count_every_round_of_the_window_on_both_paths():
    first = run_at(NOW - timedelta(hours=1))
    DraftRound.objects.create(
        run=first, number=0, violations=[violation("amount"), violation("amount"), violation("brand_misspelt")]
    )
    DraftRound.objects.create(run=first, number=1, violations=[violation("amount")])
    DraftRound.objects.create(run=first, number=2, violations=[])
    second = run_at(NOW - timedelta(days=2))
    DraftRound.objects.create(run=second, number=0, violations=[violation("other_vendor"), violation("amount")])
    old = run_at(NOW - timedelta(days=20))
    DraftRound.objects.create(run=old, number=0, violations=[violation("action_claim")])
    expected = [
        {"kind": "amount", "count": 4, "runs": 2, "questions": 2},
        {"kind": "brand_misspelt", "count": 1, "runs": 1, "questions": 1},
        {"kind": "other_vendor", "count": 1, "runs": 1, "questions": 1},
    ]

    assert statistics_violations_by_kind(days=14, now=NOW) == expected  # PostgreSQL unnests the lists
    assert violations_by_kind_python(statistics_window_start(days=14, now=NOW)) == expected


def test_frequent_questions_group_spacing_case_and_punctuation():
    wordings = [
        (30, "결제 조건이 어떻게 되나요?"),
        (29, "결제조건이 어떻게 되나요"),
        (28, "결제 조건이  어떻게 되나요 ？"),
    ]
    for hours, text in wordings:
        question_at(NOW - timedelta(hours=hours), text=text)
    question_at(NOW - timedelta(hours=31), text="결제 조건이 어떻게 되나요?")  # the same wording again, earlier
    question_at(NOW - timedelta(hours=3), text="배송 언제 와요")
    question_at(NOW - timedelta(hours=2), text="배송 언제 와요?")
    question_at(NOW - timedelta(hours=4), text="HACCP 인증서 있나요?")
    question_at(NOW - timedelta(days=30), text="배송 언제 와요?")  # outside the window

    assert statistics_frequent_questions(days=14, limit=2, now=NOW) == [
        {"text": "결제 조건이  어떻게 되나요 ？", "count": 4},  # the newest wording of the group
        {"text": "배송 언제 와요?", "count": 2},
    ]
    assert question_text_key("HACCP 인증서 있나요?") == question_text_key("haccp인증서 있나요")


def test_unanswered_questions_are_the_latest_ten_failed_or_not_answered():
    failed = [question_at(NOW - timedelta(minutes=minutes), Question.Status.FAILED) for minutes in range(12)]
    question_at(NOW + timedelta(minutes=1), Question.Status.ANSWERED)

    assert statistics_unanswered_questions(limit=10) == failed[:10]


def test_held_no_evidence_and_blocked_questions_count_as_unanswered_until_an_answer_is_sent():
    """Held and no-evidence questions are "unanswered" like technical failures; one whose answer staff sent is not."""
    held = question_at(NOW - timedelta(minutes=1), Question.Status.HELD)
    no_evidence = question_at(NOW - timedelta(minutes=2), Question.Status.NO_EVIDENCE)
    blocked = question_at(NOW - timedelta(minutes=3), Question.Status.BLOCKED)
    sent = question_at(NOW - timedelta(minutes=4), Question.Status.HELD)
    run = AnswerRun.objects.create(question=sent, attempt=1, provider="scripted", room_kind="external", outcome="held")
    run.send_job, _ = send_request_submit(
        room=sent.room, items=[{"kind": "text", "text": "답변"}], idempotency_key="s", question=sent, actor="test"
    )
    run.save()

    assert statistics_unanswered_questions() == [held, no_evidence, blocked]


def test_source_split_counts_items_and_runs_per_source():
    first, second = run_at(NOW - timedelta(hours=1)), run_at(NOW - timedelta(hours=2))
    old = run_at(NOW - timedelta(days=40))
    for position, (run, kind) in enumerate(
        [(first, "record"), (first, "record"), (second, "record"), (second, "hub"), (old, "faq")]
    ):
        RunEvidence.objects.create(
            run=run, position=position, source_kind=kind, reference=f"{kind}:{position}", text="t"
        )

    assert statistics_source_split(days=14, now=NOW) == [
        {"source_kind": "record", "items": 3, "runs": 2},
        {"source_kind": "hub", "items": 1, "runs": 1},
        {"source_kind": "faq", "items": 0, "runs": 0},
    ]


def test_latency_percentiles_interpolate_like_percentile_cont_on_both_paths():
    """p50 and p95 over runs that went through the pipeline (blocked and unfinished runs left out), the same from
    PostgreSQL's percentile_cont and from the portable Python path."""
    for latency in (100, 200, 300, 400, 1000):
        run_at(NOW - timedelta(hours=1), latency_ms=latency)
    run_at(NOW - timedelta(hours=1), outcome=AnswerRun.Outcome.BLOCKED, latency_ms=0)
    run_at(NOW - timedelta(hours=1), outcome="", latency_ms=0)
    run_at(NOW - timedelta(days=30), latency_ms=99_999)

    expected = {"count": 5, "p50": 300.0, "p95": 880.0}  # 400 + 0.8 × (1000 − 400)
    assert statistics_latency_percentiles(days=14, now=NOW) == expected
    window = AnswerRun.objects.filter(
        started_at__gte=NOW - timedelta(days=13, hours=12), outcome__in=["answered", "held", "no_evidence"]
    )
    assert latency_percentiles_python(window) == expected


def test_latency_percentiles_without_runs_are_empty():
    assert statistics_latency_percentiles(days=14, now=NOW) == {"count": 0, "p50": None, "p95": None}
    assert percentile([], 0.5) is None
    assert percentile([42], 0.95) == 42.0


def test_charts_are_well_formed_svg_with_escaped_labels():
    """Labels are user text (questions): they are escaped, and the SVG parses."""
    bars = horizontal_bar_chart([("<b>가격</b> & 조건", 3), ("배송", 0)], title="자주 묻는 질문")
    columns = stacked_bar_chart(
        ["03/13", "03/14"], [("답변", "#2e7d32", [2, 0]), ("보류", "#f9a825", [1, 0])], title="일별"
    )

    for svg in (bars, columns):
        ElementTree.fromstring(svg)
    assert "&lt;b&gt;가격&lt;/b&gt; &amp; 조건" in bars
    assert "<b>" not in bars
    assert columns.count("<rect") == 2 + 2  # two segments on the first day, none on the empty one, two legend keys


def test_statistics_page_shows_charts_and_tables_to_staff(admin_client):
    now = timezone.now()
    for status in (Question.Status.ANSWERED, Question.Status.ANSWERED, Question.Status.HELD, Question.Status.FAILED):
        question_at(now, status, text="결제 조건이 어떻게 되나요?")
    run = run_at(now, latency_ms=250)
    DraftRound.objects.create(run=run, number=0, violations=[violation("brand_misspelt")])
    RunEvidence.objects.create(run=run, position=0, source_kind="faq", reference="faq:1", text="t")

    response = admin_client.get(reverse("agent_admin:statistics"))

    assert response.status_code == 200
    body = response.content.decode()
    assert response.context["daily_totals"] == {
        "total": 5,
        "answered": 3,
        "held": 1,
        "blocked": 0,
        "no_evidence": 0,
        "failed": 1,
    }
    assert '<th class="total-answered">3</th>' in body and '<th class="total-failed">1</th>' in body
    assert body.count('<svg class="chart"') == 4  # daily, violations, sources, frequent questions
    assert "브랜드 오기" in body and "250 ms" in body and "결제 조건이 어떻게 되나요?" in body
    assert '<script src="http' not in body and '<link rel="stylesheet" href="http' not in body  # no CDN


def test_statistics_page_is_staff_only(client):
    client.force_login(get_user_model().objects.create_user("someone", password="x"))

    response = client.get(reverse("agent_admin:statistics"))

    assert response.status_code == 302 and response.url.startswith(reverse("admin:login"))
