"""Staff admin for rooms, messages, batches and questions: read-only records, actions through services."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.contrib.messages.storage.cookie import CookieStorage
from django.test import RequestFactory
from django.urls import reverse

from conversations.admin import RoomAdmin
from conversations.models import Room
from conversations.tests.factories import MessageFactory, QuestionFactory, RoomFactory
from monitoring.models import AuditEvent
from vendors.tests.factories import VendorFactory


@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_superuser("lead", password="pw-12345678")
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_room_can_be_marked_internal_with_an_audit_row(staff_client):
    room = RoomFactory()
    response = staff_client.post(
        reverse("admin:conversations_room_changelist"),
        {"action": "mark_internal", "_selected_action": [room.pk]},
        follow=True,
    )
    assert response.status_code == 200
    room.refresh_from_db()
    assert room.kind == Room.Kind.INTERNAL
    assert AuditEvent.objects.filter(action="room.kind_set", target_id=str(room.pk)).count() == 1


@pytest.mark.django_db
def test_re_resolve_action_matches_a_room_after_the_vendor_appears(staff_client):
    room = RoomFactory(vendor=None, name="(4321) 새벽유통", resolution_status=Room.ResolutionStatus.BLOCKED)
    VendorFactory(code="4321", name="새벽유통", aliases=[])
    staff_client.post(
        reverse("admin:conversations_room_changelist"),
        {"action": "re_resolve", "_selected_action": [room.pk]},
    )
    room.refresh_from_db()
    assert room.resolution_status == Room.ResolutionStatus.MATCHED
    assert room.vendor.code == "4321"


@pytest.mark.django_db
def test_re_resolve_action_resolves_each_room_and_reports_counts(admin_user):
    """The action re-resolves every selected room as the staff user and reports matched/blocked/unresolved."""
    VendorFactory(code="1001", name="대한물산")
    VendorFactory(code="1234", name="가온상사")
    Room.objects.create(stable_key="a", name="(1001) 대한물산")
    Room.objects.create(stable_key="b", name="(1234) 대한물산")
    Room.objects.create(stable_key="c", name="나래상사")
    request = RequestFactory().post("/admin/conversations/room/")
    request.user = admin_user
    request._messages = CookieStorage(request)

    RoomAdmin(Room, admin.site).re_resolve(request, Room.objects.all())

    statuses = dict(Room.objects.values_list("stable_key", "resolution_status"))
    assert statuses == {"a": "matched", "b": "blocked", "c": "unresolved"}
    assert AuditEvent.objects.filter(action="room.resolve", actor_kind="staff").count() == 3
    texts = [str(m) for m in get_messages(request)]
    assert texts[0] == "방 3개를 다시 매칭했습니다: 매칭 1, 차단 1, 미확정 1 (결과가 바뀐 방 3개)."
    assert "답변하지 않는 방이 2개" in texts[1]


@pytest.mark.django_db
def test_room_detail_shows_candidates_and_allows_no_edits(staff_client):
    room = RoomFactory(resolution_candidates=[{"code": "1001", "name": "대한물산", "score": 0.93}])
    page = staff_client.get(reverse("admin:conversations_room_change", args=[room.pk]))
    assert page.status_code == 200
    assert "대한물산 — 0.93" in page.content.decode()
    assert b'name="name"' not in page.content


@pytest.mark.django_db
@pytest.mark.parametrize("model", ["message", "uploadbatch", "question"])
def test_audit_records_are_read_only(staff_client, model):
    question = QuestionFactory()
    MessageFactory(room=question.room)
    assert staff_client.get(reverse(f"admin:conversations_{model}_changelist")).status_code == 200
    assert staff_client.get(reverse(f"admin:conversations_{model}_add")).status_code == 403
