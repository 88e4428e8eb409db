"""room_resolve: the outcome is stored on the room, audited when it changes, and follows vendor changes."""

import pytest

from conversations.models import Room
from conversations.room_services import room_resolve
from monitoring.models import AuditEvent
from vendors.services import vendor_upsert
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.django_db


def room_with_name(name: str, key: str = "room-1") -> Room:
    return Room.objects.create(stable_key=key, name=name)


def resolve_audits(room: Room):
    return AuditEvent.objects.filter(action="room.resolve", target_type="conversations.room", target_id=str(room.pk))


def test_matched_room_row_is_updated():
    """A matched room gets status, vendor, reason, candidates, the name used and the time."""
    vendor = VendorFactory(code="1234", name="대한물산")
    room = room_with_name("(1234) 대한물산 발주방")

    resolved = room_resolve(room=room)

    stored = Room.objects.get(pk=room.pk)
    assert stored.resolution_status == Room.ResolutionStatus.MATCHED
    assert stored.vendor == vendor
    assert stored.resolution_reason == "id"
    assert stored.resolution_candidates == [{"code": "1234", "name": "대한물산", "score": 1.0}]
    assert stored.resolved_name == "(1234) 대한물산 발주방"
    assert stored.resolved_at is not None
    assert resolved.pk == room.pk
    assert resolved.vendor_id == vendor.pk


def test_id_typo_is_blocked_without_a_vendor():
    """An ID whose name part points better at another vendor blocks the room and stores no vendor."""
    VendorFactory(code="1234", name="가온상사")
    VendorFactory(code="1001", name="대한물산")
    room = room_with_name("(1234) 대한물산")

    resolved = room_resolve(room=room)

    assert resolved.resolution_status == Room.ResolutionStatus.BLOCKED
    assert resolved.vendor is None
    assert resolved.resolution_reason == "id_typo"
    assert resolved.resolution_candidates[0]["code"] == "1001"


def test_audit_row_only_when_the_outcome_changes():
    """The first resolution is audited with who acted; resolving again to the same outcome adds no row."""
    VendorFactory(code="1234", name="대한물산")
    room = room_with_name("(1234) 대한물산")

    room_resolve(room=room, actor_kind="staff", actor_id=7)
    room_resolve(room=room)

    audit = resolve_audits(room).get()
    assert (audit.actor_kind, audit.actor_id) == ("staff", "7")
    assert audit.data["status"] == "matched"
    assert audit.data["vendor_code"] == "1234"
    assert audit.data["previous"] == {"status": "unresolved", "vendor_code": None, "reason": ""}


def test_re_resolve_follows_a_vendor_change():
    """After a vendor gains an alias the room name contains, re-resolving matches it and audits the change."""
    VendorFactory(code="2001", name="가온상사")
    VendorFactory(code="2002", name="가온상회")
    room = room_with_name("가온 발주방")
    assert room_resolve(room=room).resolution_reason == "no_match"

    vendor_upsert(code="2002", name="가온상회", aliases=["가온 발주"])
    resolved = room_resolve(room=room)

    assert resolved.resolution_status == Room.ResolutionStatus.MATCHED
    assert resolved.vendor.code == "2002"
    assert resolved.resolution_reason == "containment"
    latest = resolve_audits(room).order_by("-id").first()
    assert latest.data["previous"] == {"status": "unresolved", "vendor_code": None, "reason": "no_match"}
    assert resolve_audits(room).count() == 2


def test_deactivated_vendor_no_longer_matches():
    """An inactive vendor is not in the index: its ID becomes unknown and the matched room is blocked."""
    VendorFactory(code="1234", name="대한물산")
    room = room_with_name("(1234) 대한물산")
    assert room_resolve(room=room).resolution_status == Room.ResolutionStatus.MATCHED

    vendor_upsert(code="1234", name="대한물산", is_active=False)
    resolved = room_resolve(room=room)

    assert (resolved.resolution_status, resolved.vendor, resolved.resolution_reason) == ("blocked", None, "unknown_id")


def test_renamed_room_is_resolved_by_its_stored_name():
    """The name saved on the row is what gets resolved, and it is recorded as resolved_name."""
    VendorFactory(code="1001", name="대한물산")
    VendorFactory(code="3001", name="한빛유통")
    room = room_with_name("대한물산")
    room_resolve(room=room)

    Room.objects.filter(pk=room.pk).update(name="한빛유통 정산방")
    resolved = room_resolve(room=room)

    assert (resolved.vendor.code, resolved.resolution_reason) == ("3001", "containment")
    assert resolved.resolved_name == "한빛유통 정산방"


def test_vendor_writes_are_seen_without_waiting():
    """A vendor created after the index was built is matched by the very next resolution."""
    VendorFactory(code="1001", name="대한물산")
    room = room_with_name("세림식품")
    assert room_resolve(room=room).resolution_reason == "no_match"

    VendorFactory(code="4001", name="세림식품")

    assert room_resolve(room=room).vendor.code == "4001"
