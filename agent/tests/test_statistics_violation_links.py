"""Each violation-kind bar of the statistics page (and its counts in the table) links to the question list of
exactly the questions it counts: those whose runs started in the window (not when the question was asked) found
that kind, for the page's vendor."""

from datetime import date, datetime
from html import unescape

import pytest
from django.urls import reverse

from agent.models import DraftRound
from agent.selectors import (
    StatisticsWindow,
    questions_with_violation_kind,
    questions_with_violation_kind_python,
    statistics_violations_by_kind,
    violations_by_kind_python,
)
from agent.tests.test_statistics import SEOUL, question_at, run_at, violation
from conversations.models import Question
from conversations.tests.factories import QuestionFactory

pytestmark = pytest.mark.django_db

MARCH_12 = datetime(2025, 3, 12, 10, 0, tzinfo=SEOUL)
MARCH_13 = datetime(2025, 3, 13, 10, 0, tzinfo=SEOUL)
MARCH_14 = datetime(2025, 3, 14, 23, 30, tzinfo=SEOUL)
MARCH_15 = datetime(2025, 3, 15, 0, 30, tzinfo=SEOUL)
WINDOW = {"start": "2025-03-13", "end": "2025-03-14"}


def question_of(vendor, when: datetime) -> Question:
    question = QuestionFactory(vendor=vendor)
    Question.objects.filter(pk=question.pk).update(created_at=when)
    return question


def rounds(question: Question, when: datetime, *violation_lists) -> None:
    run = run_at(when, question=question)
    for number, violations in enumerate(violation_lists):
        DraftRound.objects.create(run=run, number=number, violations=violations)


@pytest.fixture
def violations():
    """Questions of one vendor whose runs found violations inside and outside 3/13–3/14, and another vendor's."""
    twice = question_at(MARCH_13)
    vendor = twice.vendor
    rounds(twice, MARCH_13, [violation("amount"), violation("brand_misspelt")], [violation("amount")])
    asked_before = question_of(vendor, MARCH_12)  # asked the day before, its run started inside the window
    rounds(asked_before, MARCH_14, [violation("amount")])
    late = question_of(vendor, MARCH_14)  # asked inside, its run started after the window
    rounds(late, MARCH_15, [violation("amount")])
    without_kind = question_of(vendor, MARCH_13)
    rounds(without_kind, MARCH_13, [{"text": "x", "reason": "kind missing"}, {"kind": "", "text": "y"}])
    clean = question_of(vendor, MARCH_13)
    rounds(clean, MARCH_13, [])
    other_vendor = question_at(MARCH_13)
    rounds(other_vendor, MARCH_13, [violation("amount")])
    return {
        "vendor": vendor,
        "counted": {
            "amount": {twice.pk, asked_before.pk},
            "brand_misspelt": {twice.pk},
            "unknown": {without_kind.pk},
        },
        "other_vendor": other_vendor,
    }


def listed_question_ids(admin_client, link: str) -> set[int]:
    response = admin_client.get(unescape(link))
    assert response.status_code == 200
    return {question.pk for question in response.context["cl"].result_list}


def test_every_kind_with_a_count_links_to_exactly_the_questions_it_counts(admin_client, violations):
    vendor = violations["vendor"]
    response = admin_client.get(reverse("agent_admin:statistics"), {**WINDOW, "vendor": vendor.pk})
    body = response.content.decode()
    rows = {row["kind"]: row for row in response.context["violations"]}

    assert {kind: (row["count"], row["questions"]) for kind, row in rows.items()} == {
        "amount": (3, 2),
        "brand_misspelt": (1, 1),
        "unknown": (2, 1),
    }
    for kind, row in rows.items():
        link = row["link"]
        assert f"vendor__id__exact={vendor.pk}" in link and f"violation_kind={kind}" in link
        chart = body[
            body.index('<div class="module" id="violations">') : body.index('<div class="module" id="sources">')
        ]
        assert chart.count(f'href="{link.replace("&", "&amp;")}"') == 3  # the bar, the count and the questions
        assert listed_question_ids(admin_client, link) == violations["counted"][kind]
    assert "종류 미기록" in body  # the kind-less violations, in Korean


def test_without_a_vendor_the_links_list_every_vendors_questions(admin_client, violations):
    response = admin_client.get(reverse("agent_admin:statistics"), WINDOW)
    amount = next(row for row in response.context["violations"] if row["kind"] == "amount")

    assert "vendor__id__exact" not in amount["link"]
    expected = violations["counted"]["amount"] | {violations["other_vendor"].pk}
    assert amount["questions"] == len(expected)
    assert listed_question_ids(admin_client, amount["link"]) == expected


def test_the_question_list_filters_by_violation_kind_on_both_paths(admin_client, violations):
    window = StatisticsWindow(first_day=date(2025, 3, 13), last_day=date(2025, 3, 14))
    everything = Question.objects.all()
    for kind in ("amount", "brand_misspelt", "unknown", "contact"):
        on_postgresql = set(questions_with_violation_kind(everything, kind, window=window).values_list("pk", flat=True))
        in_python = set(
            questions_with_violation_kind_python(everything, kind, window=window).values_list("pk", flat=True)
        )
        assert on_postgresql == in_python
    assert on_postgresql == set()

    # From the list's own filter, without days: every run counts, the late one too.
    listed = listed_question_ids(
        admin_client, f"{reverse('admin:conversations_question_changelist')}?violation_kind=amount"
    )
    assert len(listed) == 4 and violations["counted"]["amount"] < listed
    assert "검증 위반 종류" in admin_client.get(reverse("admin:conversations_question_changelist")).content.decode()


def test_a_vendors_window_counts_and_lists_the_same_questions_on_both_paths(violations):
    vendor = violations["vendor"]
    window = StatisticsWindow(first_day=date(2025, 3, 13), last_day=date(2025, 3, 14), vendor_id=vendor.pk)
    expected = [
        {"kind": "amount", "count": 3, "runs": 2, "questions": 2},
        {"kind": "unknown", "count": 2, "runs": 1, "questions": 1},
        {"kind": "brand_misspelt", "count": 1, "runs": 1, "questions": 1},
    ]

    assert statistics_violations_by_kind(window=window) == expected  # PostgreSQL unnests the lists
    assert violations_by_kind_python(window.start, window=window) == expected
    everything = Question.objects.all()
    for kind, counted in violations["counted"].items():
        assert set(questions_with_violation_kind(everything, kind, window=window)) == set(
            questions_with_violation_kind_python(everything, kind, window=window)
        )
        assert {question.pk for question in questions_with_violation_kind(everything, kind, window=window)} == counted
    # Without a window every run of every vendor counts, the late run and the other vendor's too.
    assert set(questions_with_violation_kind(everything, "amount")) == set(
        questions_with_violation_kind_python(everything, "amount")
    )
    assert len(questions_with_violation_kind(everything, "amount")) == 4


def test_a_bad_day_in_the_link_is_refused_not_an_error(admin_client, violations):
    url = reverse("admin:conversations_question_changelist")
    for query in (
        "violation_kind=amount&violation_start=2025-13-01&violation_end=2025-03-14",
        "violation_kind=amount&violation_start=2025-03-13",
    ):
        response = admin_client.get(f"{url}?{query}")
        assert response.status_code == 302 and response["Location"].endswith("?e=1")
