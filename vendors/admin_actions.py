"""Admin actions other apps' admins wire in (the rooms admin lives in conversations)."""

from collections import Counter

from django.contrib import admin, messages

from conversations.models import Room
from vendors.services import room_resolve


@admin.action(description="선택한 방 다시 매칭", permissions=["change"])
def rooms_re_resolve(modeladmin, request, queryset):
    """Resolve each selected room again with the current vendors and report the outcome counts."""
    statuses, changed = Counter(), 0
    for room in queryset.order_by("pk"):
        before = (room.resolution_status, room.vendor_id, room.resolution_reason)
        resolved = room_resolve(room=room, actor_kind="staff", actor_id=request.user.pk)
        statuses[resolved.resolution_status] += 1
        changed += before != (resolved.resolution_status, resolved.vendor_id, resolved.resolution_reason)
    matched = statuses[Room.ResolutionStatus.MATCHED]
    blocked = statuses[Room.ResolutionStatus.BLOCKED]
    unresolved = statuses[Room.ResolutionStatus.UNRESOLVED]
    modeladmin.message_user(
        request,
        f"방 {statuses.total()}개를 다시 매칭했습니다: 매칭 {matched}, 차단 {blocked}, 미확정 {unresolved} "
        f"(결과가 바뀐 방 {changed}개).",
        messages.SUCCESS,
    )
    if blocked or unresolved:
        modeladmin.message_user(
            request,
            f"답변하지 않는 방이 {blocked + unresolved}개 있습니다. 방 이름의 (코드)나 벤더 별칭을 확인하세요.",
            messages.WARNING,
        )
