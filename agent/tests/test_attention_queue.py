"""No dead ends for staff: a question in a blocked or unresolved room reaches the attention list with its reason in
Korean and raises an alert; staff assign the room a vendor (its candidates as buttons, audited, holding until the
room's name changes) and have the question answered. The attention list is a work queue (owner, state, age in
business time against the SLA, filters, bulk actions)."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from agent.llm.scripted import ScriptedProvider
from agent.models import AttentionItem
from agent.services import question_process
from agent.tests.test_admin_questions import answer_run, change_url, question_in_status
from conversations.models import Question, Room
from conversations.question_services import question_dispatch
from conversations.room_services import room_resolve
from delivery.tests.factories import StaffUserFactory, active_device
from monitoring.business_hours import business_seconds_between
from monitoring.models import Alert, AuditEvent, LivenessMarker
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import VendorRecordFactory

pytestmark = pytest.mark.django_db

KST = ZoneInfo("Asia/Seoul")
ATTENTION = "agent_admin:attention"


def upload(client, batch_id, *, text, room_name, room_key="chat-1"):
    body = {
        "room_key": room_key,
        "room_name": room_name,
        "sender_name": "김대리",
        "sent_by_me": False,
        "text": text,
        "sent_at": timezone.now().isoformat(),
        "unread_count": 1,
        "attachments": {"photos": 0, "files": 0},
    }
    response = client.post("/api/v1/uploads", {"batch_id": batch_id, "messages": [body]}, format="json")
    assert response.status_code in (200, 201), response.content
    return response


@pytest.fixture
def uploader():
    _, token = active_device(role="uploader", name="1층 CS PC")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def typo_room_question(uploader, django_capture_on_commit_callbacks):
    """A question in a room whose (code) names 가온상사 but whose name says 대한물산: blocked as an ID typo."""
    VendorFactory(code="1234", name="대한물산", aliases=[])
    VendorFactory(code="5678", name="가온상사", aliases=[])
    with django_capture_on_commit_callbacks(execute=True):
        upload(uploader, "b-1", text="@봇 결제 조건 알려주세요", room_name="(5678) 대한물산")
    return Question.objects.get()


def assign_url(question):
    return reverse("agent_admin:room_assign", args=[question.room_id]) + f"?question={question.pk}"


# --- blocked and unresolved rooms ---------------------------------------------------------------------------


def test_a_blocked_question_raises_an_alert_and_is_on_the_attention_list_in_korean(typo_room_question, admin_client):
    question = typo_room_question
    assert question.status == Question.Status.BLOCKED

    alert = Alert.objects.get(kind=Alert.Kind.ROOM_UNANSWERED)
    assert alert.key == f"room:{question.room_id}" and "(5678) 대한물산" in alert.message
    assert "코드 오타 의심" in alert.message and "id_typo" not in alert.message

    body = admin_client.get(reverse(ATTENTION)).content.decode()
    assert "결제 조건 알려주세요" in body
    assert "방 매칭 차단: 방 이름의 (코드)와 이름이 서로 다른 벤더를 가리킵니다 (코드 오타 의심)" in body
    assert "room_blocked:id_typo" not in body
    assert f'href="{reverse("agent_admin:room_assign", args=[question.room_id])}?question={question.pk}"' in body


def test_a_second_question_in_the_same_room_keeps_one_alert(
    typo_room_question, uploader, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        upload(uploader, "b-2", text="@봇 정산일 언제예요?", room_name="(5678) 대한물산")
    assert Question.objects.filter(status=Question.Status.BLOCKED).count() == 2
    assert Alert.objects.filter(kind=Alert.Kind.ROOM_UNANSWERED).count() == 1


def test_staff_assign_the_room_from_its_candidates_and_the_question_is_answered(
    typo_room_question, admin_client, admin_user, django_capture_on_commit_callbacks, knowledge_stores
):
    """The candidates are buttons with their scores; choosing one matches the room (audited with the score),
    closes the alert, reopens the blocked question with the vendor and hands it to the agent."""
    question = typo_room_question
    page = admin_client.get(assign_url(question))
    assert page.status_code == 200
    body = page.content.decode()
    candidates = question.room.resolution_candidates
    assert {c["code"] for c in candidates} >= {"1234", "5678"}
    for candidate in candidates:
        assert f'name="vendor_code" value="{candidate["code"]}"' in body
        assert f"{candidate['score']:.0%}" in body
    assert "코드 오타 의심" in body

    dispatched = []
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_client.post(assign_url(question), {"vendor_code": "1234", "reanswer": [question.pk]})
    assert response.status_code == 302 and response.url == change_url(question)
    for callback in callbacks:
        if getattr(callback, "func", None) is question_dispatch:
            dispatched.append(callback)
        else:
            callback()

    room = Room.objects.select_related("vendor").get(pk=question.room_id)
    assert (room.resolution_status, room.vendor.code, room.resolution_reason) == ("matched", "1234", "staff_assigned")
    audit = AuditEvent.objects.get(action="room.assign")
    assert audit.actor_id == str(admin_user.pk) and audit.data["vendor_code"] == "1234"
    assert audit.data["score"] == next(c["score"] for c in candidates if c["code"] == "1234")
    assert audit.data["previous"]["reason"] == "id_typo"
    assert Alert.objects.get(kind=Alert.Kind.ROOM_UNANSWERED).status == Alert.Status.CLOSED

    question.refresh_from_db()
    assert question.status == Question.Status.ACCEPTED and question.vendor.code == "1234"
    assert AuditEvent.objects.filter(action="question.reopen", target_id=str(question.pk)).exists()
    assert list(question.markers.values_list("kind", flat=True)) == [LivenessMarker.Kind.ACCEPTED]
    assert len(dispatched) == 1  # handed to the agent after the commit

    VendorRecordFactory(
        vendor=question.vendor, title="대한물산 결제 조건", body="월말 마감 후 익월 10일 현금 결제입니다."
    )
    steps = [
        {"tool_calls": [{"name": "search_records", "arguments": {"query": "결제 조건"}}]},
        {"content": "월말 마감 후 익월 10일 현금 결제입니다."},
    ]
    run = question_process(question.pk, provider=ScriptedProvider(steps))
    assert run is not None and run.outcome == "answered"


def test_the_assignment_holds_until_the_room_is_renamed(typo_room_question, admin_client, uploader):
    question = typo_room_question
    admin_client.post(assign_url(question), {"use_typed": "1", "vendor_code_typed": "1234"})
    room = Room.objects.get(pk=question.room_id)

    assert room_resolve(room=room).resolution_reason == "staff_assigned"  # re-resolution keeps it
    upload(uploader, "b-2", text="@봇 배송 언제 와요?", room_name="(5678) 대한물산")
    assert Question.objects.get(text="배송 언제 와요?").status == Question.Status.ACCEPTED

    upload(uploader, "b-3", text="안녕하세요", room_name="(5678) 가온상사")  # renamed: resolved again
    room.refresh_from_db()
    assert (room.resolution_reason, room.vendor.code) == ("id", "5678")


def test_a_typed_code_of_no_vendor_is_refused(typo_room_question, admin_client):
    response = admin_client.post(assign_url(typo_room_question), {"use_typed": "1", "vendor_code_typed": "0000"})
    assert response.status_code == 302
    assert Room.objects.get().resolution_status == Room.ResolutionStatus.BLOCKED
    assert not AuditEvent.objects.filter(action="room.assign").exists()


def test_the_audit_page_of_a_blocked_question_offers_the_assignment_then_reanswer(typo_room_question, admin_client):
    question = typo_room_question
    body = admin_client.get(change_url(question)).content.decode()
    assert 'id="question-room-assign"' in body and "코드 오타 의심" in body

    admin_client.post(assign_url(question), {"vendor_code": "1234"})  # assigned without re-answering
    body = admin_client.get(change_url(question)).content.decode()
    assert 'id="question-reanswer"' in body

    response = admin_client.post(reverse("admin:conversations_question_reanswer", args=[question.pk]))
    assert response.status_code == 302
    question.refresh_from_db()
    assert question.status == Question.Status.ACCEPTED


def test_assigning_needs_the_room_change_permission(typo_room_question, client):
    staff = StaffUserFactory()
    staff.user_permissions.add(Permission.objects.get(codename="view_question"))
    client.force_login(staff)
    assert client.get(assign_url(typo_room_question)).status_code == 403
    assert client.post(assign_url(typo_room_question), {"vendor_code": "1234"}).status_code == 403


# --- the work queue -------------------------------------------------------------------------------------------


def test_bulk_take_done_and_reopen_with_an_audit_row_each(admin_client, admin_user):
    first = question_in_status(Question.Status.HELD, text="첫 보류 질문")
    second = question_in_status(Question.Status.FAILED, text="둘째 실패 질문")
    bulk = reverse("agent_admin:attention_bulk")

    admin_client.post(bulk, {"bulk_action": "take", "question": [first.pk, second.pk]})
    mine = admin_client.get(reverse(ATTENTION) + "?owner=me").content.decode()
    assert "첫 보류 질문" in mine and "둘째 실패 질문" in mine and admin_user.get_username() in mine

    admin_client.post(bulk, {"bulk_action": "done", "question": [first.pk]})
    open_now = admin_client.get(reverse(ATTENTION)).content.decode()
    assert "첫 보류 질문" not in open_now and "둘째 실패 질문" in open_now
    assert AttentionItem.objects.get(question=first).done_at is not None

    admin_client.post(bulk, {"bulk_action": "reopen", "question": [first.pk]})
    assert "첫 보류 질문" in admin_client.get(reverse(ATTENTION)).content.decode()

    other = StaffUserFactory(username="이상담")
    admin_client.post(bulk, {"bulk_action": "assign", "owner_id": other.pk, "question": [second.pk]})
    assert AttentionItem.objects.get(question=second).owner == other
    admin_client.post(bulk, {"bulk_action": "release", "question": [second.pk]})
    assert "둘째 실패 질문" in admin_client.get(reverse(ATTENTION) + "?owner=none").content.decode()

    audits = AuditEvent.objects.filter(action="attention.update")
    assert audits.count() == 6  # take ×2, done, reopen, assign, release
    assert all(audit.actor_id == str(admin_user.pk) for audit in audits)


def test_filters_by_vendor_reason_and_age(admin_client):
    held = question_in_status(Question.Status.HELD, text="오래된 보류 질문")
    Question.objects.filter(pk=held.pk).update(created_at=timezone.now() - timedelta(days=4))
    failed = question_in_status(Question.Status.FAILED, text="방금 실패한 질문")

    def shown(query):
        return admin_client.get(reverse(ATTENTION) + query).content.decode()

    assert "오래된 보류 질문" in shown("?reason=held") and "방금 실패한 질문" not in shown("?reason=held")
    assert "방금 실패한 질문" not in shown("?age=72") and "오래된 보류 질문" in shown("?age=72")
    by_vendor = shown(f"?vendor={failed.vendor_id}")
    assert "방금 실패한 질문" in by_vendor and "오래된 보류 질문" not in by_vendor
    over = shown("?sla=over")
    assert "오래된 보류 질문" in over and "SLA 초과" in over and "방금 실패한 질문" not in over


def test_a_question_staff_mark_wrong_is_open_again():
    question = question_in_status(Question.Status.ANSWERED)
    answer_run(question)
    AttentionItem.objects.create(question=question, state=AttentionItem.State.DONE)
    from agent.services import answer_mark_wrong

    answer_mark_wrong(question=question, actor=StaffUserFactory(), reason="단가가 틀렸습니다")
    assert AttentionItem.objects.get(question=question).state == AttentionItem.State.OPEN


# --- business time -------------------------------------------------------------------------------------------


def test_business_time_counts_only_weekday_hours_outside_public_holidays(settings):
    settings.BUSINESS_HOURS_START, settings.BUSINESS_HOURS_END = "09:00", "18:00"
    friday_evening = datetime(2025, 3, 14, 17, 0, tzinfo=KST)
    monday_morning = datetime(2025, 3, 17, 10, 0, tzinfo=KST)
    assert business_seconds_between(friday_evening, monday_morning) == 2 * 3600  # 17–18 Fri, 9–10 Mon

    # 2025-03-03 was a substitute public holiday in Korea (for 삼일절 on a Saturday).
    before, after = datetime(2025, 2, 28, 17, 0, tzinfo=KST), datetime(2025, 3, 4, 9, 30, tzinfo=KST)
    assert business_seconds_between(before, after) == 3600 + 1800
    assert business_seconds_between(after, before) == 0
    assert business_seconds_between(friday_evening, monday_morning, at_most=1800) == 3600  # stops early


def test_the_alert_closes_when_the_room_resolves_on_its_own(
    typo_room_question, uploader, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        upload(uploader, "b-2", text="안녕하세요", room_name="(5678) 가온상사")
    assert Room.objects.get().resolution_status == Room.ResolutionStatus.MATCHED
    assert Alert.objects.get(kind=Alert.Kind.ROOM_UNANSWERED).status == Alert.Status.CLOSED


def test_the_room_page_links_to_the_assignment(typo_room_question, admin_client):
    body = admin_client.get(reverse("admin:conversations_room_change", args=[typo_room_question.room_id])).content
    assert reverse("agent_admin:room_assign", args=[typo_room_question.room_id]) in body.decode()
