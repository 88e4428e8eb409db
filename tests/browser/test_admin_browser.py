"""The operators' admin in a real browser: log in, the attention list, the audit page of a rewritten and of a held
answer, approving a held answer with an edit, the training upload with a conflict resolved, the statistics page,
retiring a hub document and assigning a blocked room. Each test keeps screenshots under var/test/screenshots/."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect
from rest_framework.test import APIClient

from agent.knowledge.faq_services import faq_entry_create
from agent.knowledge.hub import hub_document_ingest, hub_search
from agent.models import (
    AnswerReview,
    AnswerRun,
    DraftRound,
    FaqEntry,
    KnowledgeDocument,
    KnowledgeWorkspace,
    TrainingJob,
)
from agent.tests import test_admin_questions as audit_page
from agent.tests.test_admin_questions import FINAL_TEXT, answer_run, change_url, question_in_status
from conversations.models import Question, Room
from delivery.models import SendJob
from delivery.tests.factories import active_device
from tests.browser.conftest import log_in
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.django_db(transaction=True)

delivered_question = audit_page.delivered_question  # an answer rewritten after round 0 and delivered
HELD_DRAFT = "납품 단가는 50,000원입니다."
TRAINING_FILE = (
    "question,answer,category\n"
    "발주 마감 시간은 몇 시인가요?,평일 오후 3시입니다.,발주\n"
    "배송비는 누가 부담하나요?,공급사가 부담합니다.,배송\n"
).encode()


def held_question():
    """A held answer: its only draft named an amount the evidence does not have, nothing safe was left."""
    question = question_in_status(Question.Status.HELD)
    run = answer_run(
        question,
        outcome=AnswerRun.Outcome.HELD,
        final_text="",
        outcome_reason="검증을 통과한 문장이 남지 않아 보류했습니다.",
    )
    DraftRound.objects.create(
        run=run,
        number=0,
        draft=HELD_DRAFT,
        violations=[{"kind": "amount", "text": "50,000원", "span": [7, 14], "reason": "근거에 없는 금액: 50,000원"}],
        clean_text="",
    )
    return question


def test_staff_log_in_and_see_what_waits_for_them(page, staff_user, screenshot):
    page.goto("/admin/")
    expect(page.locator("#id_username")).to_be_visible()
    screenshot(page, "login")
    log_in(page)
    expect(page.locator("#agent-staff-links")).to_contain_text("주의가 필요한 질문")
    expect(page.locator("#count-attention")).to_have_text("0건")
    screenshot(page, "admin-index")


def test_the_attention_list_shows_held_and_failed_questions_with_their_reasons(staff_page, screenshot):
    held = held_question()
    failed = question_in_status(Question.Status.FAILED, text="반품 기한이 언제까지인가요?")
    Question.objects.filter(pk=failed.pk).update(outcome_reason="attempts exhausted (3)")
    staff_page.goto("/admin/")
    staff_page.click("#agent-staff-links a:has-text('주의가 필요한 질문')")
    expect(staff_page.locator("#content")).to_contain_text("반품 기한이 언제까지인가요?")
    expect(staff_page.locator("#content")).to_contain_text("시도 3회를 모두 썼습니다")
    expect(staff_page.locator("#content")).to_contain_text(held.text)
    screenshot(staff_page, "attention-list")


def test_the_audit_page_of_a_rewritten_answer_puts_the_verdict_first(staff_page, delivered_question, screenshot):
    staff_page.goto(change_url(delivered_question))
    verdict = staff_page.locator("#verdict")
    expect(verdict).to_contain_text("발송한 답변")
    expect(verdict).to_contain_text(FINAL_TEXT)
    expect(verdict).to_contain_text("금액 1건")
    expect(staff_page.locator("#rounds del.diff-del").first).to_have_text("납품 단가는 50,000원입니다.")
    expect(staff_page.locator("#tool-calls")).to_be_hidden()  # folded away until asked for
    screenshot(staff_page, "audit-rewritten")
    staff_page.click("#run-details > summary")
    expect(staff_page.locator("#tool-calls")).to_be_visible()
    expect(staff_page.locator("#run")).to_contain_text("도구 호출과 초안")
    screenshot(staff_page, "audit-rewritten-details")


def test_the_audit_page_of_a_held_answer_shows_the_unsent_draft_and_its_violation(staff_page, screenshot):
    question = held_question()
    staff_page.goto(change_url(question))
    verdict = staff_page.locator("#verdict")
    expect(verdict).to_contain_text("보류된 초안 (보내지 않음)")
    expect(verdict.locator("mark.violation")).to_have_text("50,000원1")
    expect(staff_page.locator("#actions")).to_contain_text("승인 후 발송")
    screenshot(staff_page, "audit-held")


def test_staff_approve_a_held_answer_after_correcting_it(staff_page, screenshot):
    question = held_question()
    staff_page.goto(change_url(question))
    staff_page.fill("#id_text", HELD_DRAFT)
    staff_page.click("#actions input[type=submit][value='승인 후 발송']")
    expect(staff_page.locator("#approve-violations")).to_contain_text("검증 위반이 남아 있습니다")
    screenshot(staff_page, "approve-refused")

    staff_page.fill("#id_text", FINAL_TEXT)
    staff_page.click("#actions input[type=submit][value='승인 후 발송']")
    expect(staff_page.locator(".messagelist")).to_contain_text("승인하여 발송을 요청했습니다")
    expect(staff_page.locator("#verdict")).to_contain_text(FINAL_TEXT)
    screenshot(staff_page, "approve-sent")
    job = SendJob.objects.get(question=question)
    assert [item.text for item in job.items.all()] == [FINAL_TEXT]
    assert AnswerReview.objects.get(question=question).action == AnswerReview.Action.APPROVE


@pytest.mark.usefixtures("knowledge_stores")
def test_a_training_upload_with_a_conflict_is_resolved_after_confirmation(staff_page, screenshot):
    faq_entry_create(question="발주 마감 시간은 몇 시인가요?", answer="평일 오후 2시입니다.")
    staff_page.goto("/admin/agent/trainingjob/add/")
    staff_page.set_input_files(
        "#id_file", files=[{"name": "training.csv", "mimeType": "text/csv", "buffer": TRAINING_FILE}]
    )
    screenshot(staff_page, "training-upload")
    staff_page.click("#training-upload-submit")
    expect(staff_page.locator("#training-job-status")).to_have_attribute("data-status", "review")
    table = staff_page.locator("#training-conflict-table")
    expect(table).to_contain_text("평일 오후 2시입니다.")
    expect(table).to_contain_text("평일 오후 3시입니다.")
    screenshot(staff_page, "training-conflict")

    staff_page.locator(".conflict-select").first.check()
    staff_page.select_option("#conflict-action", "replace_existing")
    staff_page.click("#conflict-resolve")
    expect(staff_page.locator("#confirm-resolve-list")).to_contain_text("발주 마감 시간은 몇 시인가요?")
    screenshot(staff_page, "training-confirm")
    staff_page.click("#confirm-resolve")
    expect(staff_page.locator("#training-job-status")).to_have_attribute("data-status", "done")
    screenshot(staff_page, "training-resolved")
    assert FaqEntry.objects.get(question="발주 마감 시간은 몇 시인가요?").answer == "평일 오후 3시입니다."
    assert TrainingJob.objects.get().status == TrainingJob.Status.DONE


def test_the_statistics_page_draws_its_charts(staff_page, delivered_question, screenshot):
    held = held_question()
    staff_page.goto("/admin/")
    staff_page.click("#agent-staff-links a:has-text('답변 통계')")
    expect(staff_page.locator("#content svg.chart").first).to_be_visible()
    expect(staff_page.locator("#rate-automation")).to_contain_text("%")
    screenshot(staff_page, "statistics")

    staff_page.select_option("#id_vendor", str(delivered_question.vendor_id))
    staff_page.click("#statistics-apply")
    expect(staff_page.locator("#daily")).to_be_visible()
    screenshot(staff_page, "statistics-vendor")
    staff_page.locator("#daily svg a.chart-link").first.click()
    staff_page.wait_for_url("**/admin/conversations/question/**")
    expect(staff_page.locator("#result_list")).to_contain_text(delivered_question.text)
    screenshot(staff_page, "statistics-bar-questions")

    staff_page.goto("/admin/agent/statistics/")
    staff_page.locator("#violations svg a.chart-link[href*='violation_kind=amount']").click()  # the held draft's
    staff_page.wait_for_url("**/admin/conversations/question/?violation_kind=amount**")
    expect(staff_page.locator("#result_list")).to_contain_text(held.text)
    screenshot(staff_page, "statistics-violation-questions")


WRONG_FEE = "# 반품 회수비\n\n단순 변심 반품의 회수 택배비는 1건당 7,700원이며 협력사가 부담합니다.\n"


@pytest.mark.usefixtures("knowledge_stores")
def test_staff_retire_a_wrong_hub_document_after_confirming(staff_page, screenshot):
    KnowledgeWorkspace.objects.get_or_create(slug="returns", defaults={"title": "반품·교환"})
    document = hub_document_ingest(workspace="returns", title="반품 회수비", content=WRONG_FEE, actor="test")
    assert "7,700원" in _hub_evidence()

    staff_page.goto(f"/admin/agent/knowledgedocument/{document.pk}/change/")
    screenshot(staff_page, "hub-document")
    staff_page.click("#document-retire")
    expect(staff_page.locator("#content-main")).to_contain_text("반품 회수비")
    screenshot(staff_page, "hub-retire-confirm")
    staff_page.click("#confirm-retire")
    expect(staff_page.locator("#document-restore")).to_be_visible()
    screenshot(staff_page, "hub-retired")
    document.refresh_from_db()
    assert document.status == KnowledgeDocument.Status.RETIRED
    assert "7,700" not in _hub_evidence()


def _hub_evidence() -> str:
    return "\n".join(
        item.text for item in hub_search("반품 회수 택배비는 얼마인가요?", workspaces=["returns"], limit=20)
    )


@pytest.mark.usefixtures("knowledge_stores")
def test_staff_assign_a_blocked_room_from_its_candidates(staff_page, screenshot):
    VendorFactory(code="1234", name="대한물산", aliases=[])
    VendorFactory(code="5678", name="가온상사", aliases=[])
    _, token = active_device(role="uploader", name="1층 CS PC")
    uploader = APIClient()
    uploader.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    message = {
        "room_key": "chat-1",
        "room_name": "(5678) 대한물산",
        "sender_name": "김대리",
        "sent_by_me": False,
        "text": "@봇 결제 조건 알려주세요",
        "sent_at": timezone.now().isoformat(),
        "unread_count": 1,
        "attachments": {"photos": 0, "files": 0},
    }
    response = uploader.post("/api/v1/uploads", {"batch_id": "b-1", "messages": [message]}, format="json")
    assert response.status_code in (200, 201), response.content
    question = Question.objects.get()
    assert question.status == Question.Status.BLOCKED

    staff_page.goto("/admin/agent/attention/")
    expect(staff_page.locator("#content")).to_contain_text("코드 오타 의심")
    staff_page.click(f"a[href$='/rooms/{question.room_id}/assign/?question={question.pk}']")
    expect(staff_page.locator("#room-candidates")).to_contain_text("(1234) 대한물산")
    screenshot(staff_page, "room-assign")
    staff_page.click("#room-candidates button:has-text('(1234) 대한물산')")
    staff_page.wait_for_url(f"**/admin/conversations/question/{question.pk}/change/")
    expect(staff_page.locator(".messagelist")).to_contain_text("대한물산에 지정했습니다")
    screenshot(staff_page, "room-assigned")
    room = Room.objects.select_related("vendor").get(pk=question.room_id)
    assert (room.resolution_reason, room.vendor.code) == ("staff_assigned", "1234")
    question.refresh_from_db()
    assert question.status != Question.Status.BLOCKED and question.vendor_id == room.vendor_id
