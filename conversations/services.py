"""Writes of the conversations app: ingesting uploaded batches, rooms, tagged questions."""

from collections import defaultdict
from dataclasses import asdict, dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from agent.services import question_dispatch_on_commit
from conversations.models import Message, Question, Room, UploadBatch
from conversations.question_services import question_create
from conversations.resend import KeyOccurrences, first_occurrences_resent, resend_key_hash
from monitoring.services import audit_record
from vendors.services import room_resolve


@dataclass(frozen=True)
class IncomingMessage:
    room_key: str
    room_name: str
    sender_name: str
    sent_by_me: bool
    text: str
    sent_at: datetime
    unread_count: int
    client_message_id: str | None = None
    photo_count: int = 0
    file_count: int = 0


@dataclass(frozen=True)
class UploadResult:
    batch_id: str
    received: int
    stored: int
    dropped_resends: int
    duplicates: int
    questions: int
    replayed: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


def upload_batch_ingest(*, device, batch_id: str, messages: list[IncomingMessage]) -> UploadResult:
    """Store one uploaded batch exactly once.

    The same batch_id from the same device returns the first result. Resends are dropped, messages whose client
    id is already stored are counted as duplicates, tagged messages become questions — all in one transaction.
    """
    replay = _upload_result_replay(device=device, batch_id=batch_id)
    if replay:
        return replay
    try:
        return _upload_batch_store(device=device, batch_id=batch_id, messages=messages)
    except IntegrityError:
        # A concurrent request committed the same batch, or the same client message id, first. Our transaction
        # is gone; what the other one stored is now visible, so the second attempt replays or skips it.
        replay = _upload_result_replay(device=device, batch_id=batch_id)
        if replay:
            return replay
        return _upload_batch_store(device=device, batch_id=batch_id, messages=messages)


def _upload_result_replay(*, device, batch_id: str) -> UploadResult | None:
    batch = UploadBatch.objects.filter(device=device, batch_id=batch_id).first()
    if batch is None:
        return None
    return UploadResult(
        batch_id=batch.batch_id,
        received=batch.message_count,
        stored=batch.stored_count,
        dropped_resends=batch.resend_count,
        duplicates=batch.duplicate_count,
        questions=batch.question_count,
        replayed=True,
    )


@transaction.atomic
def _upload_batch_store(*, device, batch_id: str, messages: list[IncomingMessage]) -> UploadResult:
    batch = UploadBatch.objects.create(device=device, batch_id=batch_id, message_count=len(messages))
    rooms = _rooms_for_batch(messages)
    fresh, duplicates = _drop_known_client_ids(messages, rooms)
    kept, resends_by_room = _drop_resends(batch_id, fresh, rooms)

    tags = settings.BOT_TAGS
    rows = [
        Message(
            room=rooms[m.room_key],
            batch=batch,
            sender_name=m.sender_name,
            sent_by_me=m.sent_by_me,
            text=m.text,
            sent_at=m.sent_at,
            unread_count=m.unread_count,
            client_message_id=m.client_message_id,
            photo_count=m.photo_count,
            file_count=m.file_count,
            is_tagged=message_has_tag(m.text, tags),
        )
        for m in kept
    ]
    _messages_insert(rows, batch=batch)
    for room_id, dropped in resends_by_room.items():
        Room.objects.filter(pk=room_id).update(resend_dropped_count=F("resend_dropped_count") + dropped)

    questions = [question_record(message=row, tags=tags) for row in rows if row.is_tagged]

    batch.stored_count = len(rows)
    batch.resend_count = sum(resends_by_room.values())
    batch.duplicate_count = duplicates
    batch.question_count = len(questions)
    batch.save(update_fields=["stored_count", "resend_count", "duplicate_count", "question_count"])
    return UploadResult(
        batch_id=batch_id,
        received=len(messages),
        stored=batch.stored_count,
        dropped_resends=batch.resend_count,
        duplicates=duplicates,
        questions=len(questions),
    )


_COPY_COLUMNS = (
    "room_id",
    "batch_id",
    "sender_name",
    "sent_by_me",
    "text",
    "sent_at",
    "unread_count",
    "client_message_id",
    "photo_count",
    "file_count",
    "is_tagged",
    "created_at",
)


def _messages_insert(rows: list[Message], *, batch: UploadBatch) -> None:
    """Insert a batch's messages and give the instances their ids.

    On PostgreSQL one COPY: the ORM compiling a 500-row INSERT was half of an upload's time. Ids come from the
    sequence in row order, so reading them back ordered by id pairs them with the rows. Elsewhere bulk_create.
    """
    if not rows:
        return
    if connection.vendor != "postgresql":
        Message.objects.bulk_create(rows, batch_size=500)
        return
    now = timezone.now()
    table = Message._meta.db_table
    with connection.wrap_database_errors, connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {table} ({', '.join(_COPY_COLUMNS)}) FROM STDIN") as copy:
            for row in rows:
                row.created_at = now
                copy.write_row([getattr(row, column) for column in _COPY_COLUMNS])
        cursor.execute(f"SELECT id FROM {table} WHERE batch_id = %s ORDER BY id", [batch.pk])
        ids = [pk for (pk,) in cursor.fetchall()]
    for row, pk in zip(rows, ids, strict=True):
        row.pk = pk


def _rooms_for_batch(messages: list[IncomingMessage]) -> dict[str, Room]:
    """Rooms by client key; new rooms and renamed rooms are (re)resolved to their counterpart."""
    latest_name: dict[str, str] = {}
    for m in messages:
        latest_name[m.room_key] = m.room_name
    rooms = {room.stable_key: room for room in Room.objects.filter(stable_key__in=latest_name)}
    missing = [Room(stable_key=key, name=name) for key, name in latest_name.items() if key not in rooms]
    if missing:
        Room.objects.bulk_create(missing, ignore_conflicts=True)
        rooms = {room.stable_key: room for room in Room.objects.filter(stable_key__in=latest_name)}
    for key, name in latest_name.items():
        room = rooms[key]
        if room.name != name:
            room.name = name
            room.save(update_fields=["name", "updated_at"])
        if room.resolved_name != room.name or room.resolved_at is None:
            rooms[key] = room_resolve(room=room)
    return rooms


def _drop_known_client_ids(messages: list[IncomingMessage], rooms: dict[str, Room]) -> tuple[list, int]:
    """A message with a client id is stored once, whenever it comes (also twice within one batch)."""
    wanted = {(rooms[m.room_key].pk, m.client_message_id) for m in messages if m.client_message_id}
    known = set()
    if wanted:
        # One query for the whole batch; the (room, id) pairs are matched here.
        candidates = Message.objects.filter(
            room_id__in={room_id for room_id, _ in wanted},
            client_message_id__in={client_id for _, client_id in wanted},
        ).values_list("room_id", "client_message_id")
        known = set(candidates) & wanted
    fresh, duplicates = [], 0
    for m in messages:
        if m.client_message_id:
            ident = (rooms[m.room_key].pk, m.client_message_id)
            if ident in known:
                duplicates += 1
                continue
            known.add(ident)
        fresh.append(m)
    return fresh, duplicates


def _drop_resends(batch_id: str, messages: list[IncomingMessage], rooms: dict[str, Room]):
    """Apply the sliding resend window: locally within the batch, against the shared window for the rest."""
    window = settings.RESEND_WINDOW_SECONDS
    keyed = [
        (
            m,
            rooms[m.room_key].pk,
            resend_key_hash(text=m.text, unread_count=m.unread_count, sent_by_me=m.sent_by_me),
        )
        for m in messages
    ]
    first_seen: dict[tuple[int, str], datetime] = {}
    last_seen: dict[tuple[int, str], datetime] = {}
    for m, room_id, key_hash in keyed:
        ident = (room_id, key_hash)
        first_seen.setdefault(ident, m.sent_at)
        last_seen[ident] = max(last_seen.get(ident, m.sent_at), m.sent_at)
    occurrences = [
        KeyOccurrences(room_id=ident[0], key_hash=ident[1], first_at=first_at, last_at=last_seen[ident])
        for ident, first_at in first_seen.items()
    ]
    resent_first = first_occurrences_resent(batch_id=batch_id, occurrences=occurrences)

    kept: list[IncomingMessage] = []
    resends_by_room: dict[int, int] = defaultdict(int)
    window_seen: dict[tuple[int, str], datetime] = {}
    for m, room_id, key_hash in keyed:
        ident = (room_id, key_hash)
        previous = window_seen.get(ident)
        if previous is None:
            is_resend = ident in resent_first
        else:
            is_resend = abs((m.sent_at - previous).total_seconds()) <= window
        window_seen[ident] = m.sent_at if previous is None else max(previous, m.sent_at)
        if is_resend:
            resends_by_room[room_id] += 1
        else:
            kept.append(m)
    return kept, resends_by_room


def message_has_tag(text: str, tags: list[str]) -> bool:
    return any(tag in text for tag in tags)


def question_text_from(text: str, tags: list[str]) -> str:
    for tag in tags:
        text = text.replace(tag, " ")
    return " ".join(text.split())


def question_record(*, message: Message, tags: list[str]) -> Question:
    """Turn a stored tagged message into a question.

    In a matched room it is accepted (with its *accepted* liveness marker, same transaction) and handed to the
    agent once the transaction commits. In a blocked or unresolved room no answer is attempted: the question
    is closed as blocked with its *result* marker, so the liveness monitor never mistakes it for a stalled one.
    """
    room = message.room
    text = question_text_from(message.text, tags)
    if room.resolution_status == Room.ResolutionStatus.MATCHED:
        question = question_create(message=message, room=room, vendor=room.vendor, text=text)
        question_dispatch_on_commit(question)
        return question
    return question_create(
        message=message,
        room=room,
        vendor=None,
        text=text,
        status=Question.Status.BLOCKED,
        reason=f"room_{room.resolution_status}:{room.resolution_reason}",
    )


@transaction.atomic
def room_kind_set(*, room: Room, kind: str, actor) -> Room:
    """Staff mark a room internal (staff-only: company-wide tools allowed later) or external."""
    if kind not in Room.Kind.values:
        raise ValueError(f"unknown room kind: {kind}")
    updated = Room.objects.filter(pk=room.pk).exclude(kind=kind).update(kind=kind)
    if updated:
        audit_record(actor_kind="staff", actor_id=actor.pk, action="room.kind_set", target=room, data={"kind": kind})
        room.kind = kind
    return room
