"""The statistics page for a chosen date range and vendor: counts only that window, links each bar to the
questions behind it, exports CSV, and shows the automation, override and marked-wrong rates."""

import csv
import io
from datetime import date, datetime
from xml.etree import ElementTree

import pytest
from django.urls import reverse

from agent.models import AnswerReview
from agent.selectors import StatisticsWindow, statistics_daily, statistics_rates
from agent.tests.test_statistics import SEOUL, question_at, run_at
from conversations.models import Question
from conversations.tests.factories import QuestionFactory

pytestmark = pytest.mark.django_db

MARCH_13 = datetime(2025, 3, 13, 10, 0, tzinfo=SEOUL)
MARCH_14 = datetime(2025, 3, 14, 10, 0, tzinfo=SEOUL)
WINDOW = {"start": "2025-03-13", "end": "2025-03-14"}


@pytest.fixture
def two_days():
    """Two answered and one held question on 3/13, one answered on 3/14 for another vendor, one on 3/15."""
    first = question_at(MARCH_13)
    vendor = first.vendor
    for status in (Question.Status.ANSWERED, Question.Status.HELD):
        question = QuestionFactory(status=status, vendor=vendor, room=first.room, message__room=first.room)
        Question.objects.filter(pk=question.pk).update(created_at=MARCH_13)
    other = question_at(MARCH_14)
    question_at(datetime(2025, 3, 15, 10, 0, tzinfo=SEOUL))
    return first, vendor, other


def test_the_window_counts_its_days_and_vendor_only(two_days):
    _, vendor, _ = two_days
    window = StatisticsWindow(first_day=date(2025, 3, 13), last_day=date(2025, 3, 14))
    assert [(row["day"], row["total"]) for row in statistics_daily(window=window)] == [
        (date(2025, 3, 13), 3),
        (date(2025, 3, 14), 1),
    ]
    only_vendor = StatisticsWindow(first_day=date(2025, 3, 13), last_day=date(2025, 3, 14), vendor_id=vendor.pk)
    assert [row["total"] for row in statistics_daily(window=only_vendor)] == [3, 0]


def test_rates_count_automatic_answers_overrides_and_marked_wrong(two_days, admin_user):
    first, vendor, _ = two_days
    approved = Question.objects.filter(vendor=vendor, status=Question.Status.ANSWERED).exclude(pk=first.pk).get()
    AnswerReview.objects.create(question=approved, action=AnswerReview.Action.OVERRIDE, actor=admin_user)
    AnswerReview.objects.create(question=first, action=AnswerReview.Action.MARK_WRONG, actor=admin_user)
    window = StatisticsWindow(first_day=date(2025, 3, 13), last_day=date(2025, 3, 14))

    rates = statistics_rates(window=window)

    assert rates["automation"] == {"rate": 1 / 4, "count": 1, "of": 4}  # only `other` had no staff review
    assert rates["override"] == {"rate": 1.0, "count": 1, "of": 1}
    assert rates["marked_wrong"] == {"rate": 1 / 3, "count": 1, "of": 3}


def test_the_page_filters_links_its_bars_and_shows_rates(admin_client, two_days):
    first, vendor, _ = two_days
    run_at(MARCH_13, question=first, latency_ms=300)
    response = admin_client.get(reverse("agent_admin:statistics"), {**WINDOW, "vendor": vendor.pk})
    body = response.content.decode()

    assert response.context["daily_totals"]["total"] == 3
    assert "2025-03-13 ~ 2025-03-14" in body
    assert 'id="rate-automation"' in body and "0.0%" in body  # every answered question of the vendor: none reviewed
    start = body.index('<svg class="chart"')
    svg = body[start : body.index("</svg>", start) + len("</svg>")]
    ElementTree.fromstring(svg)  # links and axes keep it well-formed
    assert '<a href="/admin/conversations/question/?created_at__gte=2025-03-13T00%3A00%3A00%2B09%3A00' in body
    held_link = response.context["daily"][0]["links"]["held"]
    assert f"vendor__id__exact={vendor.pk}" in held_link and "status__exact=held" in held_link

    listed = admin_client.get(held_link.replace("&amp;", "&"))
    assert listed.status_code == 200
    assert [question.status for question in listed.context["cl"].result_list] == [Question.Status.HELD]


def test_a_range_ending_before_it_starts_is_refused_in_korean(admin_client, two_days):
    response = admin_client.get(reverse("agent_admin:statistics"), {"start": "2025-03-14", "end": "2025-03-13"})
    assert "종료일이 시작일보다 앞섭니다." in response.content.decode()


def test_csv_export_has_the_days_and_the_rates(admin_client, two_days):
    response = admin_client.get(reverse("agent_admin:statistics"), {**WINDOW, "format": "csv"})

    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="statistics-20250313-20250314.csv"' in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0][:3] == ["날짜", "질문", "답변됨"]
    assert rows[1][:3] == ["2025-03-13", "3", "2"] and rows[2][:2] == ["2025-03-14", "1"]
    assert ["자동 처리율", "0.7500", "3", "4"] in rows
