"""Reads of the conversations app for other apps and the admin."""

from vendors.resolution import REASON_LABELS

_ROOM_STATUS_LABELS = {"blocked": "방 매칭 차단", "unresolved": "방 벤더 미확정"}


def question_reason_label(outcome_reason: str) -> str:
    """A blocked question's reason (`room_blocked:id_typo`, `room_unresolved:no_match`, or `room_unresolved` when the
    room was re-resolved away from its vendor) in words for staff; any other reason as it is."""
    status, _, reason = outcome_reason.partition(":")
    if not status.startswith("room_") or status[5:] not in _ROOM_STATUS_LABELS:
        return outcome_reason
    label = _ROOM_STATUS_LABELS[status[5:]]
    if not reason:
        return f"{label}: 답변 전에 방의 벤더 매칭이 풀렸습니다"
    return f"{label}: {REASON_LABELS.get(reason, reason)}"
