"""Reads of the conversations app for other apps and the admin."""

from collections.abc import Iterator
from datetime import date, datetime, tzinfo

from django.db.models import Count, Exists, Max, Q, QuerySet
from django.db.models.functions import TruncDate

from conversations.models import Message, Question, Room
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


def room_with_vendor_get(*, room_id: int) -> Room:
    """The room with its vendor loaded; raises `Room.DoesNotExist` when it is gone."""
    return Room.objects.select_related("vendor").get(pk=room_id)


def question_with_room_get(*, question_id: int) -> Question:
    """The question with its room and vendor loaded; raises `Question.DoesNotExist` when it is gone."""
    return Question.objects.select_related("room", "vendor").get(pk=question_id)


def questions_by_ids(question_ids) -> list[Question]:
    """The questions of `question_ids` that exist, by id (the order rows are locked in when a caller changes each)."""
    return list(Question.objects.filter(pk__in=list(question_ids)).order_by("pk"))


def room_messages_before(*, room: Room, before: Message, since: datetime, limit: int) -> list[Message]:
    """At most `limit` of the room's messages with text sent from `since` up to `before` (itself left out), newest
    first (by time, then id: messages sent in the same second keep their upload order)."""
    return list(
        Message.objects.filter(room=room, sent_at__gte=since, sent_at__lte=before.sent_at)
        .exclude(pk=before.pk)
        .exclude(text="")
        .order_by("-sent_at", "-pk")[:limit]
    )


def question_ids_untouched(*, status: str, untouched_since: datetime, limit: int) -> list[int]:
    """At most `limit` ids of questions in `status` nothing has changed since `untouched_since`, oldest first."""
    return list(
        Question.objects.filter(status=status, updated_at__lt=untouched_since)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )


def question_ids_without(*, status: str, exists: Exists, limit: int) -> list[int]:
    """At most `limit` ids of questions in `status` for which `exists` (a subquery on the question, `OuterRef("pk")`,
    over a higher app's rows) finds nothing, oldest first."""
    return list(
        Question.objects.filter(status=status).filter(~exists).order_by("pk").values_list("pk", flat=True)[:limit]
    )


def questions_newest_without(*, statuses: tuple[str, ...], exists: Exists, limit: int) -> list[Question]:
    """At most `limit` questions in one of `statuses` for which `exists` (as in `question_ids_without`) finds
    nothing, newest first, with their room and vendor."""
    return list(
        Question.objects.filter(status__in=statuses)
        .filter(~exists)
        .select_related("room", "vendor")
        .order_by("-created_at", "-pk")[:limit]
    )


def questions_all() -> QuerySet[Question]:
    """Every question, for a higher app to annotate with its own rows."""
    return Question.objects.all()


def questions_created_between(*, start: datetime, end: datetime, vendor_id: int | None = None) -> QuerySet[Question]:
    """The questions asked from `start` (included) to `end` (excluded), of one vendor when `vendor_id` is given."""
    queryset = Question.objects.filter(created_at__gte=start, created_at__lt=end)
    return queryset if vendor_id is None else queryset.filter(vendor_id=vendor_id)


def questions_count_between(
    *, start: datetime, end: datetime, vendor_id: int | None = None, status: str | None = None
) -> int:
    """How many questions `questions_created_between` finds, only those in `status` when it is given."""
    queryset = questions_created_between(start=start, end=end, vendor_id=vendor_id)
    return (queryset if status is None else queryset.filter(status=status)).count()


def question_counts_by_day(
    *, start: datetime, end: datetime, vendor_id: int | None = None, statuses: tuple[str, ...], tz: tzinfo
) -> dict[date, dict[str, int]]:
    """Per day in `tz` of the questions `questions_created_between` finds: how many were asked (`total`) and how
    many are in each of `statuses` (keyed by the status value). Only days with a question have a row."""
    rows = (
        questions_created_between(start=start, end=end, vendor_id=vendor_id)
        .order_by()
        .annotate(day=TruncDate("created_at", tzinfo=tz))
        .values("day")
        .annotate(total=Count("pk"), **{status: Count("pk", filter=Q(status=status)) for status in statuses})
    )
    return {row.pop("day"): row for row in rows}


def question_texts_counted(
    *, start: datetime, end: datetime, vendor_id: int | None = None
) -> Iterator[tuple[str, int, datetime]]:
    """`(text, how many times asked, when last asked)` per distinct text of the questions `questions_created_between`
    finds, in no order; streamed in chunks, as a window can hold many wordings."""
    return (
        questions_created_between(start=start, end=end, vendor_id=vendor_id)
        .order_by()
        .values("text")
        .annotate(asked=Count("pk"), last_asked=Max("created_at"))
        .values_list("text", "asked", "last_asked")
        .iterator(chunk_size=2000)
    )
