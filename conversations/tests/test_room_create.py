"""room_create: a room no upload brought, resolved as an uploaded one is, in one audited transaction."""

import pytest

from conversations import room_services
from conversations.models import Room
from conversations.room_services import room_create
from monitoring.models import AuditEvent
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.django_db


def audits(room_pk: int) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(target_type="conversations.room", target_id=str(room_pk)).order_by("pk"))


def test_the_room_is_created_resolved_and_audited_with_who_acted():
    vendor = VendorFactory(code="1234", name="대한물산")

    room = room_create(
        stable_key="world-1234", name="(1234) 대한물산", kind=Room.Kind.INTERNAL, actor_kind="test", actor_id="w"
    )

    stored = Room.objects.get(stable_key="world-1234")
    assert stored == room
    assert (stored.name, stored.kind, stored.resolution_status, stored.vendor) == (
        "(1234) 대한물산",
        Room.Kind.INTERNAL,
        Room.ResolutionStatus.MATCHED,
        vendor,
    )
    assert (stored.resolution_reason, stored.resolved_name) == ("id", "(1234) 대한물산")
    created, resolved = audits(room.pk)
    assert (created.action, created.actor_kind, created.actor_id) == ("room.create", "test", "w")
    assert created.data == {"stable_key": "world-1234", "room_name": "(1234) 대한물산", "kind": "internal"}
    assert (resolved.action, resolved.actor_kind, resolved.data["vendor_code"]) == ("room.resolve", "test", "1234")


def test_a_name_that_matches_no_vendor_leaves_the_room_unresolved():
    room = room_create(stable_key="world-x", name="아무 방")

    assert room.kind == Room.Kind.EXTERNAL
    assert room.resolution_status == Room.ResolutionStatus.UNRESOLVED
    assert room.vendor is None
    assert room.resolution_reason == "no_match"
    assert [event.action for event in audits(room.pk)] == ["room.create", "room.resolve"]


def test_an_unknown_kind_is_refused_and_nothing_is_written():
    with pytest.raises(ValueError, match="unknown room kind"):
        room_create(stable_key="world-1", name="방", kind="lobby")

    assert not Room.objects.exists()
    assert not AuditEvent.objects.exists()


def test_a_failed_resolution_leaves_neither_room_nor_audit_row(monkeypatch):
    def refuse(name):
        raise room_services.RoomResolutionStale("the vendor vanished")

    monkeypatch.setattr(room_services, "room_name_resolve", refuse)

    with pytest.raises(room_services.RoomResolutionStale):
        room_create(stable_key="world-1", name="(1234) 대한물산")

    assert not Room.objects.exists()
    assert not AuditEvent.objects.exists()
