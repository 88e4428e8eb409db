"""Writes of the conversations app: ingesting uploaded batches, rooms, tagged questions."""

import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from conversations.models import Message, QuarantinedMessage, Question, Room, UploadBatch
from conversations.question_services import question_create, question_dispatch_on_commit
from conversations.resend import KeyOccurrences, first_occurrences_resent, resend_key_hash, resend_owner
from conversations.room_services import room_resolve
from conversations.storable import is_storable, storable_clean, storable_escape, storable_json
from monitoring.services import audit_record

Reason = QuarantinedMessage.Reason

_UNSTORABLE_MESSAGE = "contains a character the database cannot store (NUL or a lone UTF-16 surrogate)"
# Free text is cleaned (its meaning survives); identifiers are refused (a changed one could name another room).
_CLEANED_FIELDS = ("text", "sender_name", "room_name")
_IDENTIFIER_FIELDS = ("room_key", "client_message_id")


@dataclass(slots=True)
class IncomingMessage:
    """One message of an upload that has the contract's shape; it may still be refused or cleaned here.

    Not frozen: a frozen dataclass sets each field through object.__setattr__, which made building a batch's
    messages cost more than validating them. Treat it as read-only (changes go through `dataclasses.replace`).
    """

    index: int  # position in the uploaded batch
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
    raw: object = None  # the message as received, kept if it is quarantined
    cleaning: dict = field(default_factory=dict)  # what storable_clean took out, per field


@dataclass(frozen=True)
class RefusedMessage:
    """One message of an upload refused on its own: kept in the quarantine, its neighbours stored."""

    index: int
    reason: str  # QuarantinedMessage.Reason
    errors: list[dict]  # [{"field", "message"}]
    raw: object = None


class UploadBatchInvalid(Exception):
    """The batch itself cannot be stored (its envelope): nothing of it is."""

    def __init__(self, *, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class UploadResult:
    batch_id: str
    received: int
    stored: int
    dropped_resends: int
    duplicates: int
    rejected: int
    cleaned: int
    questions: int
    replayed: bool = False
    rejections: list[dict] = field(default_factory=list)  # [{"index", "reason", "errors"}], by index

    def as_dict(self) -> dict:
        return asdict(self)


def upload_batch_ingest(
    *, device, batch_id: str, messages: list[IncomingMessage], refused: list[RefusedMessage] = ()
) -> UploadResult:
    """Store one uploaded batch exactly once; the unit of rejection is the message, not the batch.

    The same batch_id from the same device returns the first result. Each message that cannot be stored is
    refused with its reason and kept in the quarantine (with `refused`, those the API already found malformed);
    the rest are stored: resends dropped, messages whose client id is already stored counted as duplicates,
    tagged messages turned into questions — all in one transaction.
    """
    if not is_storable(batch_id):
        raise UploadBatchInvalid(field="batch_id", message=_UNSTORABLE_MESSAGE)
    replay = _upload_result_replay(device=device, batch_id=batch_id)
    if replay:
        return replay
    accepted, refused = _messages_screen(messages, refused)
    try:
        return _upload_batch_store(device=device, batch_id=batch_id, messages=accepted, refused=refused)
    except IntegrityError:
        # A concurrent request committed the same batch, or the same client message id, first. Our transaction
        # is gone; what the other one stored is now visible, so the second attempt replays or skips it.
        replay = _upload_result_replay(device=device, batch_id=batch_id)
        if replay:
            return replay
        return _upload_batch_store(device=device, batch_id=batch_id, messages=accepted, refused=refused)


def uploaded_message_prepare(raw) -> tuple[object, dict, list[dict]]:
    """A message as received, before its shape is checked: `(fields, cleaning, identifier errors)`.

    Free text loses what the database cannot hold (counted per field in `cleaning`); an identifier holding such
    a character is an error, since removing it could make it another room or message. This runs before the shape
    check because the validator refuses lone surrogates outright, which would refuse text that can be cleaned.
    """
    if not isinstance(raw, dict):
        return raw, {}, []
    fields, cleaning = dict(raw), {}
    for name in _CLEANED_FIELDS:
        if isinstance(fields.get(name), str):
            fields[name], removed = storable_clean(fields[name])
            if removed:
                cleaning[name] = removed
    return fields, cleaning, _identifier_errors(fields)


def _identifier_errors(fields: dict) -> list[dict]:
    return [
        {"field": name, "message": _UNSTORABLE_MESSAGE}
        for name in _IDENTIFIER_FIELDS
        if isinstance(fields.get(name), str) and not is_storable(fields[name])
    ]


def _messages_screen(
    messages: list[IncomingMessage], refused: list[RefusedMessage]
) -> tuple[list[IncomingMessage], list[RefusedMessage]]:
    """Refuse absurd times and (for callers that did not prepare the messages) unstorable identifiers; clean
    free text of what the database cannot hold."""
    window = SentAtWindow.from_settings()
    accepted, refused = [], list(refused)
    for message in messages:
        fields = (
            message.room_key,
            message.client_message_id or "",
            message.text,
            message.sender_name,
            message.room_name,
        )
        if not is_storable(*fields):  # rare: look at each field only then
            if errors := _identifier_errors({name: getattr(message, name) for name in _IDENTIFIER_FIELDS}):
                refused.append(RefusedMessage(message.index, Reason.UNSTORABLE_IDENTIFIER, errors, message.raw))
                continue
            message = _message_clean(message)
        if problem := window.problem(message.sent_at):
            errors = [{"field": "sent_at", "message": problem}]
            refused.append(RefusedMessage(message.index, Reason.TIME_OUT_OF_RANGE, errors, message.raw))
            continue
        accepted.append(message)
    refused.sort(key=lambda item: item.index)
    return accepted, refused


def _message_clean(message: IncomingMessage) -> IncomingMessage:
    changes, cleaning = {}, dict(message.cleaning)
    for name in _CLEANED_FIELDS:
        value, removed = storable_clean(getattr(message, name))
        if removed:
            changes[name], cleaning[name] = value, removed
    return replace(message, **changes, cleaning=cleaning) if changes else message


@dataclass(frozen=True)
class SentAtWindow:
    """The message times taken: an offset within `max_offset` and a UTC instant within the years configured.

    PostgreSQL refuses UTC offsets past ±15:59 and Python cannot hold a UTC year 0 or 10000 (such times were
    stored and then broke every page that read them), so anything outside a believable window is refused.
    """

    max_offset: timedelta
    earliest_year: int
    latest_year: int

    @classmethod
    def from_settings(cls) -> "SentAtWindow":
        return cls(
            max_offset=timedelta(minutes=settings.UPLOAD_SENT_AT_MAX_OFFSET_MINUTES),
            earliest_year=settings.UPLOAD_SENT_AT_EARLIEST_YEAR,
            latest_year=settings.UPLOAD_SENT_AT_LATEST_YEAR,
        )

    def problem(self, sent_at: datetime) -> str | None:
        """Why the time is outside the window, or None."""
        offset = sent_at.utcoffset()
        if offset is None:
            return "time has no UTC offset"
        if abs(offset) > self.max_offset:
            return f"UTC offset {_offset_text(offset)} is outside ±{_offset_text(self.max_offset).lstrip('+')}"
        if self.earliest_year < sent_at.year < self.latest_year:
            return None  # with an offset under a day, the UTC year is inside too
        outside = f"time is outside the years {self.earliest_year}–{self.latest_year} (UTC)"
        if not self.earliest_year - 1 <= sent_at.year <= self.latest_year + 1:
            return outside
        try:
            utc_year = sent_at.astimezone(UTC).year
        except OverflowError:  # only with a window reaching the years 1 or 9999
            return outside
        return None if self.earliest_year <= utc_year <= self.latest_year else outside


def _offset_text(offset: timedelta) -> str:
    minutes = int(offset.total_seconds() // 60)
    return f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _upload_result_replay(*, device, batch_id: str) -> UploadResult | None:
    batch = UploadBatch.objects.filter(device=device, batch_id=batch_id).first()
    if batch is None:
        return None
    rejections = []
    if batch.rejected_count:
        quarantined = batch.quarantined_messages.order_by("index").values("index", "reason", "errors")
        rejections = [_rejection(item["index"], item["reason"], item["errors"]) for item in quarantined]
    return UploadResult(
        batch_id=batch.batch_id,
        received=batch.message_count,
        stored=batch.stored_count,
        dropped_resends=batch.resend_count,
        duplicates=batch.duplicate_count,
        rejected=batch.rejected_count,
        cleaned=batch.cleaned_count,
        questions=batch.question_count,
        replayed=True,
        rejections=rejections,
    )


def _rejection(index: int, reason: str, errors: list[dict]) -> dict:
    return {"index": index, "reason": reason, "errors": errors}


@transaction.atomic
def _upload_batch_store(
    *, device, batch_id: str, messages: list[IncomingMessage], refused: list[RefusedMessage]
) -> UploadResult:
    batch = UploadBatch.objects.create(device=device, batch_id=batch_id, message_count=len(messages) + len(refused))
    rooms = _rooms_for_batch(messages)
    fresh, duplicates = _drop_known_client_ids(messages, rooms)
    kept, resends_by_room = _drop_resends(resend_owner(device_id=device.pk, batch_id=batch_id), fresh, rooms)

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
            cleaning=m.cleaning,
        )
        for m in kept
    ]
    _messages_insert(rows, batch=batch)
    for room_id, dropped in resends_by_room.items():
        Room.objects.filter(pk=room_id).update(resend_dropped_count=F("resend_dropped_count") + dropped)

    questions = [question_record(message=row, tags=tags) for row in rows if row.is_tagged]
    if refused:
        _messages_quarantine(device=device, batch=batch, refused=refused, rooms=rooms)
    cleaned = [row for row in rows if row.cleaning]
    if cleaned:
        audit_record(
            actor_kind="device",
            actor_id=device.pk,
            action="upload.messages_cleaned",
            target=batch,
            data={"message_ids": [row.pk for row in cleaned]},
        )

    batch.stored_count = len(rows)
    batch.resend_count = sum(resends_by_room.values())
    batch.duplicate_count = duplicates
    batch.question_count = len(questions)
    batch.rejected_count = len(refused)
    batch.cleaned_count = len(cleaned)
    batch.save(
        update_fields=[
            "stored_count",
            "resend_count",
            "duplicate_count",
            "question_count",
            "rejected_count",
            "cleaned_count",
        ]
    )
    return UploadResult(
        batch_id=batch_id,
        received=batch.message_count,
        stored=batch.stored_count,
        dropped_resends=batch.resend_count,
        duplicates=duplicates,
        rejected=batch.rejected_count,
        cleaned=batch.cleaned_count,
        questions=len(questions),
        rejections=[_rejection(item.index, item.reason, item.errors) for item in refused],
    )


def _messages_quarantine(*, device, batch: UploadBatch, refused: list[RefusedMessage], rooms: dict[str, Room]):
    """Keep refused messages for staff: the raw fields as JSON text the database can hold, the reason, the room
    when the message names one that exists."""
    room_keys = [_raw_room_key(item.raw) for item in refused]
    unknown = {key for key in room_keys if key and key not in rooms and is_storable(key)}
    known = {**{room.stable_key: room for room in Room.objects.filter(stable_key__in=unknown)}, **rooms}
    rows = QuarantinedMessage.objects.bulk_create(
        QuarantinedMessage(
            batch=batch,
            device=device,
            room=known.get(room_key),
            room_key=storable_escape(room_key),
            index=item.index,
            reason=item.reason,
            errors=[{"field": e["field"], "message": storable_escape(e["message"])} for e in item.errors],
            raw=storable_json(item.raw),
        )
        for item, room_key in zip(refused, room_keys, strict=True)
    )
    audit_record(
        actor_kind="device",
        actor_id=device.pk,
        action="upload.messages_quarantined",
        target=batch,
        data={
            "quarantined_ids": [row.pk for row in rows],
            "reasons": dict(Counter(item.reason for item in refused)),
        },
    )


def _raw_room_key(raw) -> str:
    """The room key as the uploader sent it, when it sent a string (trimmed like the API trims it)."""
    value = raw.get("room_key") if isinstance(raw, dict) else None
    return value.strip() if isinstance(value, str) else ""


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
        columns = ", ".join((*_COPY_COLUMNS, "cleaning", "created_at"))
        with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                row.created_at = now
                cleaning = json.dumps(row.cleaning) if row.cleaning else "{}"  # COPY text: jsonb is parsed from text
                copy.write_row([*(getattr(row, column) for column in _COPY_COLUMNS), cleaning, now])
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


def _drop_resends(owner: str, messages: list[IncomingMessage], rooms: dict[str, Room]):
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
    # Within the batch: every occurrence after a key's first is judged against the one before it.
    first_seen: dict[tuple[int, str], datetime] = {}
    last_seen: dict[tuple[int, str], datetime] = {}
    repeat_verdicts: list[bool | None] = []  # None for a key's first occurrence: the shared window judges it
    repeats_dropped: set[tuple[int, str]] = set()
    for m, room_id, key_hash in keyed:
        ident = (room_id, key_hash)
        previous = last_seen.get(ident)
        if previous is None:
            first_seen[ident] = m.sent_at
            repeat_verdicts.append(None)
        else:
            is_resend = abs((m.sent_at - previous).total_seconds()) <= window
            repeat_verdicts.append(is_resend)
            if is_resend:
                repeats_dropped.add(ident)
        last_seen[ident] = m.sent_at if previous is None else max(previous, m.sent_at)
    occurrences = [
        KeyOccurrences(
            room_id=ident[0],
            key_hash=ident[1],
            first_at=first_at,
            last_at=last_seen[ident],
            repeats_dropped=ident in repeats_dropped,
        )
        for ident, first_at in first_seen.items()
    ]
    resent_first = first_occurrences_resent(owner=owner, occurrences=occurrences)

    kept: list[IncomingMessage] = []
    resends_by_room: dict[int, int] = defaultdict(int)
    for (m, room_id, key_hash), verdict in zip(keyed, repeat_verdicts, strict=True):
        is_resend = (room_id, key_hash) in resent_first if verdict is None else verdict
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
