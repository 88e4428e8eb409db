"""The staff's view of the agent: the question audit page shows everything behind an answer on one screen, staff
approve (an edit is verified again; sending despite violations needs a reason) or mark answers wrong through the
services, and every question that needs a person shows up in the attention list."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agent.llm.scripted import ScriptedProvider
from agent.models import AnswerReview, AnswerRun, DraftRound, RunEvidence, ToolCallRecord
from agent.selectors import questions_needing_attention
from agent.services import question_process
from conversations.models import Question, Room
from conversations.tests.factories import QuestionFactory, RoomFactory
from delivery.models import Device, SendJob
from delivery.services import (
    send_job_claim,
    send_job_progress,
    send_job_report,
    send_request_submit,
    sender_room_set,
)
from delivery.tests.factories import StaffUserFactory, active_device
from monitoring.models import AuditEvent
from monitoring.services import marker_result_write
from vendors.models import Vendor
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory, VendorRecordFactory

pytestmark = pytest.mark.django_db

WRONG_AMOUNT_MARK = (
    '<mark class="violation violation-number" title="근거에 없는 금액: 50,000원">50,000원<sup>1</sup></mark>'
)
EVIDENCE_TEXT = "결제 조건: 월말 마감 후 익월 10일 현금 결제. 납품 단가 30,000원."
FINAL_TEXT = "결제 조건은 월말 마감 후 익월 10일 현금 결제이며, 납품 단가는 30,000원입니다."


def answer_run(question, *, outcome=AnswerRun.Outcome.ANSWERED, final_text=FINAL_TEXT, awaiting_review=False, **fields):
    """A finished run with one record evidence item, as the pipeline stores it."""
    run = AnswerRun.objects.create(
        question=question,
        attempt=question.runs.count() + 1,
        provider="scripted",
        model_name="fake-model",
        room_kind=question.room.kind,
        outcome=outcome,
        outcome_reason=fields.pop("outcome_reason", ""),
        final_text=final_text,
        awaiting_review=awaiting_review,
        latency_ms=fields.pop("latency_ms", 1234),
        **fields,
    )
    RunEvidence.objects.create(
        run=run, position=0, source_kind="record", reference="record:42", title="결제 조건", text=EVIDENCE_TEXT
    )
    return run


def question_in_status(status, *, text="결제 조건이 어떻게 되나요?", answer_mode=Vendor.AnswerMode.AUTO, **kwargs):
    question = QuestionFactory(text=text, status=status, **kwargs)
    Vendor.objects.filter(pk=question.vendor_id).update(answer_mode=answer_mode)
    question.vendor.refresh_from_db()
    return question


def change_url(question):
    return reverse("admin:conversations_question_change", args=[question.pk])


def approve_url(question):
    return reverse("admin:conversations_question_approve", args=[question.pk])


def mark_wrong_url(question):
    return reverse("admin:conversations_question_mark_wrong", args=[question.pk])


@pytest.fixture
def delivered_question():
    """An answered question with everything the audit page shows: a rewritten query over history, masked hub
    evidence, a first draft with a wrong amount rewritten in round 1, an allowed, a forced and a blocked tool call,
    and a send job that a sender device delivered and counted."""
    question = question_in_status(Question.Status.ANSWERED, text="그럼 단가는 얼마야?")
    run = answer_run(
        question,
        history=[{"role": "user", "sender": "김대리", "text": "결제 조건 알려주세요", "sent_at": "2025-03-14T10:00"}],
        search_query="결제 조건과 납품 단가는 얼마인가요?",
        query_rewritten=True,
        tools_offered=["search_records", "search_faq", "search_hub"],
        stage_ms={"rewrite": 3, "tool_loop": 40, "verification": 12, "total": 55},
        prompt_tokens=812,
        completion_tokens=95,
        llm_calls=3,
    )
    RunEvidence.objects.create(
        run=run,
        round=1,
        position=1,
        source_kind="hub",
        reference="hub:policies:chunk-ab12",
        workspace="policies",
        title="정산 정책",
        text="[다른 벤더]와 같은 조건으로 월말 마감합니다.",
        score=0.82,
        mask_count=1,
    )
    DraftRound.objects.create(
        run=run,
        number=0,
        draft="납품 단가는 50,000원입니다. 참이술도 있습니다.",
        violations=[
            {
                "kind": "amount",
                "value": 50000,
                "text": "50,000원",
                "span": [7, 14],
                "reason": "근거에 없는 금액: 50,000원",
                "suggestion": None,
            },
            {
                "kind": "brand_misspelt",
                "value": "참이술",
                "text": "참이술",
                "span": [19, 22],
                "reason": "브랜드 표기 오류: 참이술 → 참이슬",
                "suggestion": "참이슬",
            },
        ],
        removed=[],
        clean_text="",
    )
    DraftRound.objects.create(run=run, number=1, draft=FINAL_TEXT, violations=[], clean_text=FINAL_TEXT)
    ToolCallRecord.objects.create(
        run=run,
        position=0,
        name="search_records",
        arguments={"query": "결제 조건"},
        allowed=True,
        duration_ms=7,
        result_summary="결제 조건: 월말 마감 후 익월 10일",
    )
    ToolCallRecord.objects.create(
        run=run,
        position=1,
        name="company_sales_summary",
        arguments={"period": "month"},
        allowed=False,
        blocked_reason="외부 방에서는 회사 전체 도구를 쓸 수 없습니다",
    )
    ToolCallRecord.objects.create(
        run=run,
        round=1,
        position=2,
        name="search_hub",
        arguments={"query": "단가 50,000원"},
        allowed=True,
        forced=True,
        duration_ms=11,
        result_summary="[다른 벤더]와 같은 조건",
    )
    job, _ = send_request_submit(
        room=question.room,
        items=[{"kind": "text", "text": FINAL_TEXT}],
        idempotency_key=f"question:{question.pk}:answer",
        question=question,
        actor="agent",
    )
    run.send_job = job
    run.save(update_fields=["send_job"])
    marker_result_write(question=question, outcome="answered")
    sender, _ = active_device(role=Device.Role.SENDER)
    sender_room_set(device=sender, room=question.room, is_active=True, actor=StaffUserFactory())
    claimed = send_job_claim(device=sender)
    send_job_progress(job=claimed, device=sender, state="sending")
    send_job_report(job=claimed, device=sender, outcome="sent", observed={"texts": 1}, resent={})
    return question


# --- the audit page ----------------------------------------------------------------------------------------


def test_change_page_shows_every_part_of_the_answer(admin_client, delivered_question):
    """Question and room, history and rewritten query, evidence with masks, each round with its violations
    highlighted and the change to the next, tool calls (blocked ones marked), timings, final text, the send job
    with its counts and history, and the result marker — one page."""
    response = admin_client.get(change_url(delivered_question))

    assert response.status_code == 200
    body = response.content.decode()
    assert "그럼 단가는 얼마야?" in body and delivered_question.room.name in body
    assert "결제 조건과 납품 단가는 얼마인가요?" in body and "이력으로 재작성됨" in body
    assert "결제 조건 알려주세요" in body
    assert "record:42" in body and "hub:policies:chunk-ab12" in body and "policies" in body
    assert '<mark class="masked" title="다른 벤더 이름을 가렸습니다">[다른 벤더]</mark>' in body
    assert WRONG_AMOUNT_MARK in body
    assert 'class="violation violation-brand"' in body and "제안: 참이슬" in body
    assert '<del class="diff-del">납품 단가는 50,000원입니다.</del>' in body  # round 0 → round 1, by sentence
    assert "company_sales_summary" in body and "badge-refused" in body
    assert "외부 방에서는 회사 전체 도구를 쓸 수 없습니다" in body
    assert "강제 검색" in body
    assert "도구 호출과 초안" in body and "<svg" in body and "812" in body
    job = SendJob.objects.get(question=delivered_question)
    assert job.state == SendJob.State.SENT
    assert f'발송 작업 <a href="{reverse("admin:delivery_sendjob_change", args=[job.pk])}">#{job.pk}</a>' in body
    assert "도착 확인" in body and "글 1 · 사진 0 · 파일 0" in body
    assert "기기 수령 → <strong>발송 중</strong>" in body and "발송 중 → <strong>발송됨</strong>" in body
    assert '결과: <span class="badge badge-answered">답변됨</span>' in body


def test_change_page_shows_which_evidence_item_each_sentence_of_the_answer_came_from(admin_client):
    """A copied sentence points at the item holding it; a sentence found in no item says so."""
    question = question_in_status(Question.Status.ANSWERED)
    answer_run(question, final_text="결제 조건: 월말 마감 후 익월 10일 현금 결제.\n주말에도 배송합니다.")

    body = admin_client.get(change_url(question)).content.decode()

    sources = body[body.index('id="sentence-sources"') :]
    assert "결제 조건: 월말 마감 후 익월 10일 현금 결제.</td>" in sources
    assert sources.index("<code>record:42</code>") < sources.index("주말에도 배송합니다.")
    assert "근거 항목을 찾지 못했습니다" in sources


def test_change_page_without_a_run_says_so(admin_client):
    question = question_in_status(Question.Status.ACCEPTED)

    response = admin_client.get(change_url(question))

    assert response.status_code == 200
    assert "아직 답변 실행이 없습니다." in response.content.decode()


def test_change_page_shows_an_earlier_attempt_on_request(admin_client):
    """A retried question keeps every attempt; `?run=` shows an earlier one."""
    question = question_in_status(Question.Status.ANSWERED)
    first = answer_run(question, outcome="", final_text="", error="LlmTransientError: timeout")
    answer_run(question)

    latest = admin_client.get(change_url(question)).content.decode()
    earlier = admin_client.get(change_url(question) + f"?run={first.pk}").content.decode()

    assert "답변 실행 (시도 2)" in latest and "LlmTransientError" in latest  # listed among the attempts
    assert "답변 실행 (시도 1)" in earlier and '<pre class="json">LlmTransientError: timeout</pre>' in earlier


def test_a_run_taken_over_after_its_lease_lapsed_reads_as_stopped_with_its_worker(admin_client):
    question = question_in_status(Question.Status.RUNNING)
    stopped = answer_run(
        question, outcome="", final_text="", error="lease lapsed", worker="cs-1:4242", finished_at=timezone.now()
    )
    answer_run(question, outcome="", final_text="", worker="cs-2:77", lease_expires_at=timezone.now())

    latest = admin_client.get(change_url(question)).content.decode()
    earlier = admin_client.get(change_url(question) + f"?run={stopped.pk}").content.decode()

    assert "<td>중단</td>" in latest and "<td>진행 중</td>" in latest  # the attempts table
    assert "cs-2:77 &middot; 리스 만료" in latest
    assert "cs-1:4242" in earlier and "중단" in earlier


def test_list_shows_latest_outcome_delivery_and_latency_and_filters(admin_client, delivered_question):
    held = question_in_status(Question.Status.HELD, text="보류된 질문입니다")
    answer_run(held, outcome=AnswerRun.Outcome.HELD, final_text="")
    waiting = question_in_status(Question.Status.ANSWERED, text="검토 대기 질문입니다")
    answer_run(waiting, awaiting_review=True)
    internal = question_in_status(
        Question.Status.ACCEPTED, text="내부 방 질문입니다", message__room=RoomFactory(kind=Room.Kind.INTERNAL)
    )
    AnswerReview.objects.create(question=internal, action=AnswerReview.Action.MARK_WRONG, reason="틀림")
    url = reverse("admin:conversations_question_changelist")

    body = admin_client.get(url).content.decode()
    assert "✔ 도착 확인" in body and "1.23초" in body and "답변 (검토 대기)" in body and "— 발송 없음" in body

    def listed(query):
        return {q.text for q in admin_client.get(url + query).context["cl"].result_list}

    assert listed("?outcome=held") == {"보류된 질문입니다"}
    assert listed("?awaiting_review=yes") == {"검토 대기 질문입니다"}
    assert listed("?marked_wrong=yes") == {"내부 방 질문입니다"}
    assert listed("?room__kind__exact=internal") == {"내부 방 질문입니다"}
    assert listed("?status__exact=answered") == {"그럼 단가는 얼마야?", "검토 대기 질문입니다"}
    assert listed("?q=보류된") == {"보류된 질문입니다"}


def test_question_admin_stays_read_only(admin_client, delivered_question):
    assert admin_client.get(reverse("admin:conversations_question_add")).status_code == 403
    response = admin_client.post(change_url(delivered_question), {"text": "바꾼 질문"})
    assert response.status_code == 200  # the same read-only page; nothing is saved
    delivered_question.refresh_from_db()
    assert delivered_question.text == "그럼 단가는 얼마야?"


# --- approve and send --------------------------------------------------------------------------------------


def test_approve_a_review_mode_answer_creates_the_send_job_through_the_service(admin_client):
    question = question_in_status(Question.Status.ANSWERED, answer_mode=Vendor.AnswerMode.REVIEW)
    run = answer_run(question, awaiting_review=True)
    page = admin_client.get(change_url(question)).content.decode()
    assert "승인 후 발송" in page and FINAL_TEXT in page  # the form starts with the answer

    response = admin_client.post(approve_url(question), {"text": FINAL_TEXT, "override_reason": ""})

    assert response.status_code == 302 and response.url == change_url(question)
    job = SendJob.objects.get(question=question)
    assert job.idempotency_key == f"question:{question.pk}:answer"
    assert [item.text for item in job.items.all()] == [FINAL_TEXT]
    run.refresh_from_db()
    assert run.send_job_id == job.pk and not run.awaiting_review
    review = AnswerReview.objects.get(question=question)
    assert review.action == AnswerReview.Action.APPROVE and review.violations == []
    assert AuditEvent.objects.filter(action="answer.approve", target_id=str(question.pk)).exists()
    followed = admin_client.get(response.url).content.decode()
    assert f"승인하여 발송을 요청했습니다 (발송 작업 #{job.pk})." in followed
    assert "승인해서 보낼 답변이 없습니다" in followed  # nothing left to approve


def test_edited_text_with_a_wrong_amount_shows_the_violation_and_is_not_sent(admin_client):
    question = question_in_status(Question.Status.HELD)
    answer_run(question, outcome=AnswerRun.Outcome.HELD, final_text="")
    edited = "납품 단가는 50,000원입니다."

    response = admin_client.post(approve_url(question), {"text": edited, "override_reason": ""})

    assert response.status_code == 200
    body = response.content.decode()
    assert "검증 위반이 남아 있습니다. 그대로 보내려면 사유를 입력하세요." in body
    assert 'id="approve-violations"' in body
    assert WRONG_AMOUNT_MARK in body
    assert not SendJob.objects.filter(question=question).exists()
    assert not AnswerReview.objects.filter(question=question).exists()


def test_override_with_a_reason_sends_and_is_recorded_as_override(admin_client):
    question = question_in_status(Question.Status.HELD)
    run = answer_run(question, outcome=AnswerRun.Outcome.HELD, final_text="")
    edited = "납품 단가는 50,000원입니다."

    response = admin_client.post(
        approve_url(question), {"text": edited, "override_reason": "이번 달 특가로 영업팀 확인 완료"}
    )

    assert response.status_code == 302
    job = SendJob.objects.get(question=question)
    assert [item.text for item in job.items.all()] == [edited]
    review = AnswerReview.objects.get(question=question)
    assert review.action == AnswerReview.Action.OVERRIDE
    assert review.reason == "이번 달 특가로 영업팀 확인 완료"
    assert [violation["kind"] for violation in review.violations] == ["amount"]
    run.refresh_from_db()
    assert run.send_job_id == job.pk and run.final_text == edited
    followed = admin_client.get(response.url).content.decode()
    assert "검증 위반 1건을 무시하고 발송을 요청했습니다" in followed and "검증 무시 발송" in followed


def test_held_answer_form_offers_the_evidence_not_the_failing_draft(admin_client):
    """A held run has no safe text left: the form starts empty (never the draft that failed verification) and
    offers the evidence sentences to insert."""
    question = question_in_status(Question.Status.HELD)
    run = answer_run(question, outcome=AnswerRun.Outcome.HELD, final_text="")
    DraftRound.objects.create(run=run, number=0, draft="가온상사와 같은 단가입니다.", clean_text="")

    response = admin_client.get(change_url(question))

    assert response.context["approve_form"].initial["text"] == ""
    inserts = response.context["evidence_inserts"]
    assert inserts[0]["sentences"] == ["결제 조건: 월말 마감 후 익월 10일 현금 결제.", "납품 단가 30,000원."]
    body = response.content.decode()
    assert 'data-insert="납품 단가 30,000원."' in body and 'data-target="id_text"' in body


def test_approving_twice_is_refused_by_the_service(admin_client):
    question = question_in_status(Question.Status.ANSWERED, answer_mode=Vendor.AnswerMode.REVIEW)
    answer_run(question, awaiting_review=True)
    admin_client.post(approve_url(question), {"text": FINAL_TEXT})

    response = admin_client.post(approve_url(question), {"text": FINAL_TEXT})

    assert response.status_code == 200
    assert "이미 발송되었거나 답변 실행이 없는 질문입니다." in response.content.decode()
    assert SendJob.objects.filter(question=question).count() == 1
    assert AnswerReview.objects.filter(question=question).count() == 1


def test_actions_are_post_only(admin_client):
    question = question_in_status(Question.Status.HELD)
    answer_run(question, outcome=AnswerRun.Outcome.HELD, final_text="")

    assert admin_client.get(approve_url(question)).status_code == 405
    assert admin_client.get(mark_wrong_url(question)).status_code == 405


# --- mark wrong and the attention list ---------------------------------------------------------------------


def test_mark_wrong_records_a_review_and_the_question_needs_attention(admin_client, delivered_question):
    response = admin_client.post(mark_wrong_url(delivered_question), {"reason": "단가가 지난달 기준입니다"})

    assert response.status_code == 302
    review = AnswerReview.objects.get(question=delivered_question)
    assert review.action == AnswerReview.Action.MARK_WRONG and review.reason == "단가가 지난달 기준입니다"
    assert review.text == FINAL_TEXT
    assert AuditEvent.objects.filter(action="answer.mark_wrong", target_id=str(delivered_question.pk)).exists()
    attention = admin_client.get(reverse("agent_admin:attention")).content.decode()
    assert "오답 표시: 단가가 지난달 기준입니다" in attention
    assert change_url(delivered_question) in attention


def test_mark_wrong_needs_a_reason(admin_client, delivered_question):
    response = admin_client.post(mark_wrong_url(delivered_question), {"reason": ""})

    assert response.status_code == 200
    assert "필수 항목입니다" in response.content.decode()
    assert not AnswerReview.objects.exists()


def test_attention_list_has_held_no_evidence_failed_and_waiting_but_not_answered(admin_client):
    held = question_in_status(Question.Status.HELD, text="보류 질문", outcome_reason="검증 통과 문장 없음")
    no_evidence = question_in_status(Question.Status.NO_EVIDENCE, text="근거 없는 질문")
    failed = question_in_status(Question.Status.FAILED, text="실패 질문", outcome_reason="stuck running")
    waiting = question_in_status(Question.Status.ANSWERED, text="승인 대기 질문")
    answer_run(waiting, awaiting_review=True)
    answered = question_in_status(Question.Status.ANSWERED, text="잘 답한 질문")
    answer_run(answered)
    blocked = question_in_status(Question.Status.BLOCKED, text="차단된 방 질문", outcome_reason="room_blocked:id_typo")

    assert list(questions_needing_attention()) == [blocked, waiting, failed, no_evidence, held]  # newest first
    body = admin_client.get(reverse("agent_admin:attention")).content.decode()
    assert "보류: 검증 통과 문장 없음" in body and "근거 없음" in body and "실패: stuck running" in body
    assert "승인 대기 (검토 후 발송 벤더)" in body
    assert "차단: 방 매칭 차단: 방 이름의 (코드)와 이름이 서로 다른 벤더를 가리킵니다 (코드 오타 의심)" in body
    assert "room_blocked:id_typo" not in body
    assert "잘 답한 질문" not in body


def test_attention_list_shows_open_questions_and_an_approval_closes_one(admin_client):
    """Approving and sending a held answer marks its question done: the default (open) view hides it, the done and
    all views show it with the staff action."""
    handled = question_in_status(Question.Status.HELD, text="처리한 보류 질문")
    answer_run(handled, outcome=AnswerRun.Outcome.HELD, final_text="")
    admin_client.post(approve_url(handled), {"text": FINAL_TEXT})
    question_in_status(Question.Status.FAILED, text="아직 아무도 안 본 질문")

    open_only = admin_client.get(reverse("agent_admin:attention")).content.decode()
    everything = admin_client.get(reverse("agent_admin:attention") + "?state=").content.decode()
    done = admin_client.get(reverse("agent_admin:attention") + "?state=done").content.decode()

    assert "처리한 보류 질문" in everything and "승인 후 발송" in everything
    assert "처리한 보류 질문" not in open_only and "아직 아무도 안 본 질문" in open_only
    assert "처리한 보류 질문" in done and "아직 아무도 안 본 질문" not in done


# --- access ------------------------------------------------------------------------------------------------


@pytest.fixture
def non_staff_client(client):
    client.force_login(get_user_model().objects.create_user("vendor-user", password="x"))
    return client


def test_non_staff_are_sent_to_the_login_page(non_staff_client, delivered_question):
    for url in (
        change_url(delivered_question),
        reverse("agent_admin:attention"),
        reverse("agent_admin:statistics"),
        reverse("admin:conversations_question_changelist"),
    ):
        response = non_staff_client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("admin:login")), url
    response = non_staff_client.post(approve_url(delivered_question), {"text": "x"})
    assert response.status_code == 302 and response.url.startswith(reverse("admin:login"))
    response = non_staff_client.post(mark_wrong_url(delivered_question), {"reason": "x"})
    assert response.status_code == 302 and not AnswerReview.objects.exists()


def test_staff_who_may_only_view_questions_see_the_page_but_cannot_act(client):
    viewer = StaffUserFactory()
    viewer.user_permissions.add(Permission.objects.get(codename="view_question"))
    client.force_login(viewer)
    question = question_in_status(Question.Status.HELD)
    answer_run(question, outcome=AnswerRun.Outcome.HELD, final_text="")

    page = client.get(change_url(question))
    assert page.status_code == 200 and 'id="actions"' not in page.content.decode()
    assert client.get(reverse("agent_admin:attention")).status_code == 200
    assert client.post(approve_url(question), {"text": FINAL_TEXT, "override_reason": "x"}).status_code == 403
    assert client.post(mark_wrong_url(question), {"reason": "x"}).status_code == 403
    assert not SendJob.objects.filter(question=question).exists() and not AnswerReview.objects.exists()


def test_staff_without_question_permission_cannot_open_attention_or_statistics(client):
    client.force_login(StaffUserFactory())

    assert client.get(reverse("agent_admin:attention")).status_code == 403
    assert client.get(reverse("agent_admin:statistics")).status_code == 403


def test_admin_index_links_to_attention_and_statistics(admin_client):
    body = admin_client.get(reverse("admin:index")).content.decode()

    assert f'href="{reverse("agent_admin:attention")}"' in body
    assert f'href="{reverse("agent_admin:statistics")}"' in body
    assert 'id="content-main"' in body  # the default app list is still there


# --- with a run the real pipeline stored ---------------------------------------------------------------------


def test_a_review_mode_run_from_the_pipeline_is_audited_and_approved_from_the_page(admin_client, knowledge_stores):
    """The scripted model calls a company tool (refused in a vendor room), searches, writes a wrong amount and a
    misspelt brand, and rewrites after the re-search. The page shows what the pipeline stored; the vendor is in
    review mode, so nothing went out until staff approved it here."""
    vendor = VendorFactory(code="1001", name="대한물산", answer_mode=Vendor.AnswerMode.REVIEW)
    VendorRecordFactory(vendor=vendor, title="대한물산 결제 조건", body="월말 마감 후 익월 10일에 현금으로 결제합니다.")
    ProductFactory(vendor=vendor, brand=BrandFactory(name="한빛식품"), name="한빛식품 참기름 1L", unit_price=15000)
    question = QuestionFactory(message__room=RoomFactory(vendor=vendor), text="참기름 단가 알려주세요")
    right = "한빛식품 참기름 1L 단가는 15,000원입니다."
    steps = [
        {
            "tool_calls": [
                {"name": "company_sales_summary", "arguments": {"days": 30}},
                {"name": "search_records", "arguments": {"query": "참기름 단가"}},
            ]
        },
        {"content": "한빚식품 참기름 1L 단가는 16,000원입니다."},
        {"content": right},
    ]
    run = question_process(question.pk, provider=ScriptedProvider(steps))
    assert run.awaiting_review and not SendJob.objects.filter(question=question).exists()

    body = admin_client.get(change_url(question)).content.decode()

    assert "company_sales_summary" in body and "badge-refused" in body
    assert 'class="violation violation-number" title="' in body and "16,000원<sup>" in body
    assert 'class="violation violation-brand"' in body and "한빚식품<sup>" in body
    assert '<del class="diff-del">한빚식품' in body and '<ins class="diff-ins">한빛식품' in body
    assert "강제 검색" in body  # the re-search after the violations
    assert "답변 (검토 대기)" in admin_client.get(reverse("admin:conversations_question_changelist")).content.decode()
    assert "승인 대기 (검토 후 발송 벤더)" in admin_client.get(reverse("agent_admin:attention")).content.decode()

    admin_client.post(approve_url(question), {"text": admin_client.get(change_url(question)).context["approve_text"]})

    job = SendJob.objects.get(question=question)
    assert [item.text for item in job.items.all()] == [right]
    assert AnswerReview.objects.get(question=question).action == AnswerReview.Action.APPROVE


def test_the_audit_page_reads_a_fixed_number_of_queries_however_long_the_run(
    admin_client, delivered_question, django_assert_num_queries
):
    """No query per evidence item, round, tool call or send-job event."""
    with CaptureQueriesContext(connection) as short_run:
        admin_client.get(change_url(delivered_question))
    run = delivered_question.runs.get()
    for position in range(10, 30):
        RunEvidence.objects.create(run=run, position=position, source_kind="faq", reference=f"faq:{position}", text="t")
        ToolCallRecord.objects.create(run=run, position=position, name="search_faq", allowed=True)
    for number in range(2, 6):
        DraftRound.objects.create(run=run, number=number, draft=f"초안 {number}", violations=[violation_of("amount")])

    with django_assert_num_queries(len(short_run)):
        admin_client.get(change_url(delivered_question))


def violation_of(kind):
    return {"kind": kind, "value": None, "text": "초안", "span": [0, 2], "reason": kind, "suggestion": None}
