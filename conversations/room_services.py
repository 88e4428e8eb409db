"""Writes of a room and its counterpart: creating one, resolving its name to a vendor, staff assigning one,
re-resolving rooms.

The matching itself is vendors' (`vendors.resolution`, pure, read through `vendors.selectors`); the outcome is
stored on the room, which is conversations', so the writes live here, above vendors.
"""

from collections import Counter
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from conversations.models import Room
from monitoring.models import Alert
from monitoring.services import alert_close, audit_record
from vendors.models import Vendor
from vendors.resolution import MATCHED, REASON_STAFF_ASSIGNED, Resolution
from vendors.selectors import room_name_resolve, vendor_get_by_code


class RoomResolutionStale(RuntimeError):
    """The matched vendor vanished twice between building the index and the write."""


class RoomAssignmentInvalid(ValueError):
    """The vendor cannot be assigned to the room; the message is for staff."""


def _resolution_with_vendor(room_name: str) -> tuple[Resolution, Vendor | None]:
    # The index is at the revision read just before; a vendor deleted or deactivated since then changes the
    # revision, so the second attempt resolves against the current vendors.
    for _attempt in range(2):
        resolution = room_name_resolve(room_name)
        if resolution.status != MATCHED:
            return resolution, None
        vendor = vendor_get_by_code(resolution.vendor_code, active_only=True)
        if vendor is not None:
            return resolution, vendor
    raise RoomResolutionStale(f"Vendor {resolution.vendor_code} matched by the index is gone or inactive.")


def room_create(
    *, stable_key: str, name: str, kind: str = Room.Kind.EXTERNAL, actor_kind: str = "system", actor_id=None
) -> Room:
    """A room no upload has brought yet (a test world's, a bench's), resolved to its counterpart as an uploaded room
    is: created and audited (`room.create`), then `room_resolve`d, in one transaction. Returns the resolved room."""
    if kind not in Room.Kind.values:
        raise ValueError(f"unknown room kind: {kind}")
    with transaction.atomic():
        room = Room.objects.create(stable_key=stable_key, name=name, kind=kind)
        audit_record(
            actor_kind=actor_kind,
            actor_id=actor_id,
            action="room.create",
            target=room,
            data={"stable_key": stable_key, "room_name": name, "kind": kind},
        )
        return room_resolve(room=room, actor_kind=actor_kind, actor_id=actor_id)


def room_resolve(*, room: Room, actor_kind: str = "system", actor_id=None) -> Room:
    """Resolve the room's stored name to its counterpart and record the outcome on the room.

    Resolves the name as saved in the database (save a new name first), under a row lock, and returns the
    updated row as a fresh instance. The audit row is written only when status, vendor or reason changed.
    A vendor staff assigned (`room_vendor_assign`) stays while the room keeps the name it was assigned under.
    """
    with transaction.atomic():
        locked = Room.objects.select_for_update().get(pk=room.pk)
        if room_assignment_holds(locked):
            return locked
        resolution, vendor = _resolution_with_vendor(locked.name)
        previous = (locked.resolution_status, locked.vendor_id, locked.resolution_reason)
        previous_vendor_code = locked.vendor.code if locked.vendor_id else None
        _resolution_save(
            locked,
            status=resolution.status,
            vendor=vendor,
            reason=resolution.reason,
            candidates=resolution.candidates,
        )
        if previous[0] != MATCHED and locked.resolution_status == MATCHED:
            _room_unanswered_alert_close_on_commit(locked, reason="room.resolve")
        if previous != (locked.resolution_status, locked.vendor_id, locked.resolution_reason):
            audit_record(
                actor_kind=actor_kind,
                actor_id=actor_id,
                action="room.resolve",
                target=locked,
                data={
                    "room_name": locked.name,
                    "status": resolution.status,
                    "vendor_code": resolution.vendor_code,
                    "reason": resolution.reason,
                    "previous": {"status": previous[0], "vendor_code": previous_vendor_code, "reason": previous[2]},
                },
            )
    return locked


@dataclass(frozen=True)
class RoomsReResolved:
    statuses: Counter  # resolution status → rooms
    changed: int  # rooms whose status, vendor or reason changed


def rooms_re_resolve(*, rooms, actor) -> RoomsReResolved:
    """Resolve each room again with the current vendors, as the staff user `actor` (after vendor names or aliases
    changed, or a vendor appeared): counts by outcome and how many rooms changed."""
    statuses, changed = Counter(), 0
    for room in rooms:
        before = (room.resolution_status, room.vendor_id, room.resolution_reason)
        resolved = room_resolve(room=room, actor_kind="staff", actor_id=actor.pk)
        statuses[resolved.resolution_status] += 1
        changed += before != (resolved.resolution_status, resolved.vendor_id, resolved.resolution_reason)
    return RoomsReResolved(statuses=statuses, changed=changed)


def room_assignment_holds(room: Room) -> bool:
    """Staff assigned the room's vendor under its current name, and the vendor is still active."""
    return (
        room.resolution_reason == REASON_STAFF_ASSIGNED
        and room.resolved_name == room.name
        and room.vendor_id is not None
        and room.vendor.is_active
    )


def room_vendor_assign(*, room: Room, vendor: Vendor, actor) -> Room:
    """Staff set a blocked or unresolved room's vendor (or correct a matched one): the room is matched to `vendor`
    until its name changes, when it is resolved again. Audited with the candidates and the score the vendor had;
    the room's open `room_unanswered` alert closes after the commit."""
    if not vendor.is_active:
        raise RoomAssignmentInvalid(f"사용하지 않는 벤더입니다: ({vendor.code}) {vendor.name}")
    with transaction.atomic():
        locked = Room.objects.select_for_update().get(pk=room.pk)
        previous = {
            "status": locked.resolution_status,
            "vendor_code": locked.vendor.code if locked.vendor_id else None,
            "reason": locked.resolution_reason,
        }
        score = next((c["score"] for c in locked.resolution_candidates if c.get("code") == vendor.code), None)
        _resolution_save(locked, status=Room.ResolutionStatus.MATCHED, vendor=vendor, reason=REASON_STAFF_ASSIGNED)
        audit_record(
            actor_kind="staff",
            actor_id=actor.pk,
            action="room.assign",
            target=locked,
            data={
                "room_name": locked.name,
                "vendor_code": vendor.code,
                "score": score,
                "candidates": locked.resolution_candidates,
                "previous": previous,
            },
        )
        _room_unanswered_alert_close_on_commit(locked, reason="room.assign")
    return locked


def _resolution_save(room: Room, *, status: str, vendor, reason: str, candidates: list | None = None) -> None:
    """Record an outcome on the locked room, under the name it has now; its candidates stay when none are given
    (staff assigning a vendor keep what the matching found)."""
    room.resolution_status, room.vendor, room.resolution_reason = status, vendor, reason
    fields = ["resolution_status", "vendor", "resolution_reason", "resolved_name", "resolved_at", "updated_at"]
    if candidates is not None:
        room.resolution_candidates = candidates
        fields.append("resolution_candidates")
    room.resolved_name = room.name
    room.resolved_at = timezone.now()
    room.save(update_fields=fields)


def _room_unanswered_alert_close_on_commit(room: Room, *, reason: str) -> None:
    """The room has a vendor now: its alert about questions left unanswered closes after the commit."""
    room_id = room.pk
    transaction.on_commit(lambda: alert_close(kind=Alert.Kind.ROOM_UNANSWERED, key=f"room:{room_id}", reason=reason))
