"""Wrong answers become evaluation cases: `eval_agent --from-reviews` and the admin export write every answer staff
marked wrong — reason, question, room, what it should have said — as a case that fails on the same wrong answer."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from agent.evaluation import CaseResult, _check_expectations, evaluation_cases_read, review_cases
from agent.models import AnswerReview
from agent.services import answer_mark_wrong
from agent.tests.test_admin_questions import answer_run, question_in_status
from conversations.models import Question

pytestmark = pytest.mark.django_db

WRONG = "결제는 익월 25일이며, 최소 주문 금액은 500,000원입니다."
CORRECTION = "최소 주문 금액은 1,000,000원입니다."


@pytest.fixture
def marked_wrong(admin_user):
    question = question_in_status(Question.Status.ANSWERED, text="최소 주문 금액이 얼마인가요?")
    answer_run(question, final_text=WRONG)
    answer_mark_wrong(question=question, actor=admin_user, reason="최소 주문 금액이 틀림", correction=CORRECTION)
    return question


def test_a_wrong_mark_with_a_correction_becomes_a_case_with_real_expectations(marked_wrong):
    [case] = review_cases()
    assert case["room"] == marked_wrong.room.name and case["question"] == "최소 주문 금액이 얼마인가요?"
    assert case["expect"] == {
        "expect_status": "answered",
        "must_contain": ["1,000,000원"],
        "must_not_contain": ["500,000원"],
    }
    assert case["review"]["reason"] == "최소 주문 금액이 틀림"
    assert case["review"]["should_say"] == CORRECTION and case["review"]["wrong_answer"] == WRONG
    assert case["review"]["question_id"] == marked_wrong.pk


def test_the_case_fails_on_the_same_wrong_answer_and_passes_the_corrected_one(marked_wrong):
    [case] = review_cases()
    wrong = CaseResult(1, case["question"], "answered", WRONG, 0)
    _check_expectations(wrong, case["expect"], evidence_texts=[])
    assert wrong.verdict == "wrong"
    right = CaseResult(1, case["question"], "answered", CORRECTION, 0)
    _check_expectations(right, case["expect"], evidence_texts=[])
    assert right.verdict == "right"


def test_without_a_correction_the_wrong_figures_must_not_come_back(admin_user):
    question = question_in_status(Question.Status.ANSWERED)
    answer_run(question, final_text=WRONG)
    answer_mark_wrong(question=question, actor=admin_user, reason="금액이 틀림")
    [case] = review_cases()
    assert case["expect"] == {"must_not_contain": ["500,000원"]}


def test_the_command_writes_the_cases_and_eval_agent_reads_them(marked_wrong, tmp_path, capsys):
    path = tmp_path / "reviews.jsonl"
    call_command("eval_agent", str(path), "--from-reviews")
    assert "1건" in capsys.readouterr().out
    [(number, case)] = evaluation_cases_read(path)
    assert number == 1 and case["expect"]["must_contain"] == ["1,000,000원"]


def test_the_admin_offers_the_same_export(admin_client, marked_wrong):
    listing = admin_client.get(reverse("admin:agent_answerreview_changelist"))
    assert "오답 전체를 평가 사례로 내보내기" in listing.content.decode()
    response = admin_client.get(reverse("admin:agent_answerreview_export"))
    assert response["Content-Disposition"].startswith("attachment;")
    assert [json.loads(line) for line in response.content.decode().splitlines()] == review_cases()

    review = AnswerReview.objects.get()
    selected = admin_client.post(
        reverse("admin:agent_answerreview_changelist"),
        {"action": "export_as_eval_cases", "_selected_action": [review.pk]},
    )
    assert json.loads(selected.content.decode())["review"]["reason"] == "최소 주문 금액이 틀림"


def test_the_mark_wrong_form_takes_what_it_should_have_said(admin_client):
    question = question_in_status(Question.Status.ANSWERED)
    answer_run(question, final_text=WRONG)
    url = reverse("admin:conversations_question_mark_wrong", args=[question.pk])
    admin_client.post(url, {"reason": "틀림", "correction": CORRECTION})
    assert AnswerReview.objects.get().correction == CORRECTION


def test_a_correction_staff_sent_is_what_it_should_have_said(admin_user):
    question = question_in_status(Question.Status.ANSWERED)
    run = answer_run(question, final_text=WRONG)
    answer_mark_wrong(question=question, actor=admin_user, reason="금액이 틀림")
    AnswerReview.objects.create(
        question=question, run=run, action=AnswerReview.Action.CORRECT, text=CORRECTION, actor=admin_user
    )
    [case] = review_cases()
    assert case["expect"]["must_contain"] == ["1,000,000원"]
    assert case["review"]["should_say"] == CORRECTION
