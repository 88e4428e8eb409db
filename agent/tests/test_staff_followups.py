"""Fixing an answer from the audit page: a held answer is written from its evidence (sentences and an FAQ's answer to
insert), an answer already sent is followed by a verified, audited correction, and a staff answer becomes an FAQ."""

import pytest
from django.urls import reverse

from agent.models import AnswerReview, AnswerRun, AttentionItem, FaqEntry, FaqVersion, RunEvidence
from agent.tests.test_admin_questions import FINAL_TEXT, answer_run, approve_url, change_url, question_in_status
from conversations.models import Question
from delivery.models import SendJob
from delivery.services import send_request_submit
from monitoring.models import AuditEvent

pytestmark = pytest.mark.django_db

FAQ_EVIDENCE = (
    "질문: 대금 지급일이 언제인가요?\n답변: 대금은 매월 10일에 현금으로 지급합니다. 휴일이면 다음 영업일입니다."
)


def correct_url(question):
    return reverse("admin:conversations_question_correct", args=[question.pk])


def save_faq_url(question):
    return reverse("admin:conversations_question_save_as_faq", args=[question.pk])


@pytest.fixture
def delivered_question():
    """An answered question whose answer (`FINAL_TEXT`, from the record evidence) was sent to the room."""
    question = question_in_status(Question.Status.ANSWERED, text="납품 단가 얼마예요?")
    run = answer_run(question)
    run.send_job, _ = send_request_submit(
        room=question.room,
        items=[{"kind": "text", "text": FINAL_TEXT}],
        idempotency_key=f"question:{question.pk}:answer",
        question=question,
        actor="agent",
    )
    run.save(update_fields=["send_job"])
    return question


@pytest.fixture
def held_with_faq():
    question = question_in_status(Question.Status.HELD, text="대금 지급일이 언제예요?")
    run = answer_run(question, outcome=AnswerRun.Outcome.HELD, final_text="")
    RunEvidence.objects.create(
        run=run, position=1, source_kind="faq", reference="faq:7", title="대금 지급일", text=FAQ_EVIDENCE
    )
    return question


def test_a_held_answer_offers_the_faq_answer_and_its_sentences(admin_client, held_with_faq):
    response = admin_client.get(change_url(held_with_faq))

    faq = next(item for item in response.context["evidence_inserts"] if item["source_kind"] == "faq")
    assert faq["faq_answer"] == "대금은 매월 10일에 현금으로 지급합니다. 휴일이면 다음 영업일입니다."
    assert faq["sentences"] == ["대금은 매월 10일에 현금으로 지급합니다.", "휴일이면 다음 영업일입니다."]
    body = response.content.decode()
    assert "FAQ 답변 전체 넣기" in body and 'data-insert="대금은 매월 10일에 현금으로 지급합니다.' in body


def test_the_inserted_faq_answer_is_sent_after_verification(admin_client, held_with_faq):
    response = admin_client.post(
        approve_url(held_with_faq), {"text": "대금은 매월 10일에 현금으로 지급합니다. 휴일이면 다음 영업일입니다."}
    )
    assert response.status_code == 302
    review = AnswerReview.objects.get(question=held_with_faq)
    assert review.action == AnswerReview.Action.APPROVE and review.violations == []
    assert AttentionItem.objects.get(question=held_with_faq).state == AttentionItem.State.DONE


def test_a_correction_is_a_new_verified_and_audited_send(admin_client, admin_user, delivered_question):
    question = delivered_question
    page = admin_client.get(change_url(question)).content.decode()
    assert 'id="correct-form"' in page

    response = admin_client.post(correct_url(question), {"correct-text": "납품 단가는 30,000원입니다."})

    assert response.status_code == 302, response.content.decode()[:3000]
    job = SendJob.objects.get(idempotency_key=f"question:{question.pk}:correction:1")
    assert job.question_id == question.pk and job.room_id == question.room_id
    review = AnswerReview.objects.get(action=AnswerReview.Action.CORRECT)
    assert review.text == "납품 단가는 30,000원입니다." and review.violations == [] and review.actor == admin_user
    audit = AuditEvent.objects.get(action="answer.correct")
    assert audit.data["send_job"] == job.pk and audit.actor_id == str(admin_user.pk)

    admin_client.post(correct_url(question), {"correct-text": FINAL_TEXT})
    assert SendJob.objects.filter(idempotency_key=f"question:{question.pk}:correction:2").exists()


def test_a_correction_with_a_wrong_amount_needs_a_reason(admin_client, delivered_question):
    question = delivered_question
    wrong = "납품 단가는 50,000원입니다."

    refused = admin_client.post(correct_url(question), {"correct-text": wrong})
    assert refused.status_code == 200
    assert "검증 위반이 남아 있습니다" in refused.content.decode()
    assert not AnswerReview.objects.filter(action=AnswerReview.Action.CORRECT).exists()

    sent = admin_client.post(
        correct_url(question), {"correct-text": wrong, "correct-override_reason": "단가 인상 공문 확인"}
    )
    assert sent.status_code == 302
    review = AnswerReview.objects.get(action=AnswerReview.Action.CORRECT)
    assert review.reason == "단가 인상 공문 확인" and review.violations


def test_a_question_never_sent_cannot_be_corrected(admin_client, held_with_faq):
    response = admin_client.post(correct_url(held_with_faq), {"correct-text": "대금은 매월 10일에 지급합니다."})
    assert response.status_code == 200 and "아직 보낸 답변이 없습니다" in response.content.decode()
    assert not SendJob.objects.exists()


def test_a_staff_answer_is_saved_as_an_faq_with_its_version(admin_client, admin_user, held_with_faq):
    text = "대금은 매월 10일에 현금으로 지급합니다."
    admin_client.post(approve_url(held_with_faq), {"text": text})
    form = admin_client.get(change_url(held_with_faq)).context["save_faq_form"]
    assert form.initial == {"question": "대금 지급일이 언제예요?", "answer": text}

    response = admin_client.post(
        save_faq_url(held_with_faq),
        {"faq-question": "대금 지급일이 언제예요?", "faq-answer": text, "faq-category": "정산"},
    )

    assert response.status_code == 302
    entry = FaqEntry.objects.get()
    assert (entry.answer, entry.category, entry.source, entry.source_id) == (
        text,
        "정산",
        "staff_answer",
        f"question:{held_with_faq.pk}",
    )
    version = FaqVersion.objects.get(entry=entry)
    assert (version.reason, version.origin, version.actor) == ("created", "curation", admin_user.get_username())
    assert AuditEvent.objects.get(action="answer.save_as_faq").data == {"faq": entry.pk}

    again = admin_client.post(
        save_faq_url(held_with_faq), {"faq-question": "대금 지급일이 언제예요?", "faq-answer": text}
    )
    assert again.status_code == 200 and "같은 질문의 FAQ가 이미 있습니다" in again.content.decode()
    assert FaqEntry.objects.count() == 1
