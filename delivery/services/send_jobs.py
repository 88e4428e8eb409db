"""Writes for send jobs: submission with exact idempotency, leases for sender devices, results, staff resolution.

A job moves `queued → claimed → sending → verifying → sent`, or ends `failed` or `unknown`. Every move goes
through `_transition`: a compare-and-set on the current state, checked against `ALLOWED_TRANSITIONS`, with an
audit row (`send_job.<to_state>`) in the same transaction. Alerts start only after the commit.

Retries of a request with the same idempotency key look at the real state (PRODUCT.md 3.5): a job in progress
or sent is returned as it is, only a failed one is queued again, and an unknown one is an error, never success.

A lease that lapses moves the job to `unknown`, never back to `queued`: the device may have sent the message
before it went silent, and in a 70-person room a message twice is worse than staff checking once.
"""

import hashlib
import json
import logging
import unicodedata
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from conversations.models import Room
from delivery import selectors
from delivery.models import Device, SenderRoom, SendJob, SendJobItem
from monitoring.models import Alert, AuditEvent
from monitoring.services import alert_close, alert_raise, audit_record

logger = logging.getLogger(__name__)

State = SendJob.State

ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    State.QUEUED: frozenset({State.CLAIMED}),
    # A device may report a result without announcing every step; a restarted device verifies before it sends.
    State.CLAIMED: frozenset({State.SENDING, State.VERIFYING, State.SENT, State.FAILED, State.UNKNOWN}),
    State.SENDING: frozenset({State.VERIFYING, State.SENT, State.FAILED, State.UNKNOWN}),
    # Back to sending: the check found missing items and the device resends only those.
    State.VERIFYING: frozenset({State.SENDING, State.SENT, State.FAILED, State.UNKNOWN}),
    State.SENT: frozenset(),
    # Only a new submission under the same idempotency key re-queues a failed job.
    State.FAILED: frozenset({State.QUEUED}),
    # Only staff leave `unknown`, after checking the room.
    State.UNKNOWN: frozenset({State.SENT, State.QUEUED}),
}
DEVICE_OUTCOMES = (State.SENT, State.FAILED, State.UNKNOWN)
PROGRESS_STATES = (State.SENDING, State.VERIFYING)
COUNT_KEYS = ("texts", "photos", "files")
IDEMPOTENCY_KEY_MAX_LENGTH = 200
NAME_MAX_LENGTH = 200
NOTE_MAX_LENGTH = 500
LEASE_SWEEP_ACTOR = "lease_sweep"
REPORT_RESOLUTION = timedelta(minutes=1)

# Leading bytes of the image formats a KakaoTalk client sends as a photo.
_IMAGE_SIGNATURES = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"BM")
_HEIF_BRANDS = (b"heic", b"heix", b"hevc", b"heif", b"mif1", b"msf1", b"avif")


class SendJobError(Exception):
    """A refusal of this module; `code` is the machine-readable error of the API."""

    code = "SEND_JOB_ERROR"


class SendRequestInvalid(SendJobError):
    """The request cannot become a job (bad items, key, room/question mismatch); nothing was stored."""

    code = "INVALID_SEND_REQUEST"

    def __init__(self, message: str, *, index: int | None = None, field: str = ""):
        super().__init__(message)
        self.message = message
        self.index = index
        self.field = field


class IdempotencyKeyReused(SendJobError):
    """The key already names a job with a different body."""

    code = "IDEMPOTENCY_KEY_REUSED"

    def __init__(self, job: SendJob):
        super().__init__(f"Idempotency key {job.idempotency_key!r} already names send job {job.pk}.")
        self.job = job


class SendStateUnknown(SendJobError):
    """The job under this key is `unknown`: it may or may not have arrived, so a retry can be neither."""

    code = "SEND_STATE_UNKNOWN"

    def __init__(self, job: SendJob):
        super().__init__(f"Send job {job.pk} is in state unknown.")
        self.job = job


class LeaseNotHeld(SendJobError):
    """The calling device does not hold the job's lease."""

    code = "LEASE_NOT_HELD"

    def __init__(self, job: SendJob):
        super().__init__(f"Send job {job.pk} is not leased to this device.")
        self.job = job


class SendJobStateConflict(SendJobError):
    """The job's current state does not allow the requested move."""

    code = "SEND_JOB_STATE_CONFLICT"

    def __init__(self, job: SendJob, to_state: str):
        super().__init__(f"Send job {job.pk} cannot move from {job.state} to {to_state}.")
        self.job = job
        self.to_state = to_state


class SubmitOutcome(StrEnum):
    CREATED = "created"
    REPLAYED = "replayed"
    REQUEUED = "requeued"


class UnknownResolution(StrEnum):
    MARK_SENT = "mark_sent"
    REQUEUE = "requeue"


@dataclass(frozen=True)
class _PreparedItem:
    kind: str
    text: str = ""
    name: str = ""
    content: bytes = b""
    sha256: str = ""

    def fingerprint_part(self) -> dict:
        if self.kind == SendJobItem.Kind.TEXT:
            return {"kind": self.kind, "text": self.text}
        return {"kind": self.kind, "name": self.name, "sha256": self.sha256}


# --- submission ---


def send_request_submit(
    *, room: Room, items: list[dict], idempotency_key: str, question=None, actor
) -> tuple[SendJob, SubmitOutcome]:
    """Create the send job named by `idempotency_key`, or answer a retry of it from its real state.

    `items` in sending order: `{"kind": "text", "text": str}` or `{"kind": "photo"|"file", "name": str,
    "content": bytes}`. `actor` is a staff user or a system component's name (e.g. `"agent"`).

    The same key with the same body: `queued`, `claimed`, `sending`, `verifying`, `sent` → the job unchanged
    (`REPLAYED`); `failed` → queued again with `attempt + 1` (`REQUEUED`); `unknown` → `SendStateUnknown`.
    The same key with another body → `IdempotencyKeyReused`. Concurrent identical requests make one job.
    A job for a room no active sender serves stays queued and raises a `SEND_NO_SENDER` alert.
    """
    if not idempotency_key or len(idempotency_key) > IDEMPOTENCY_KEY_MAX_LENGTH:
        raise SendRequestInvalid(
            f"The idempotency key must have 1 to {IDEMPOTENCY_KEY_MAX_LENGTH} characters.", field="idempotency_key"
        )
    if question is not None and question.room_id != room.pk:
        raise SendRequestInvalid("The question belongs to another room.", field="question")
    prepared = _items_prepare(items)
    fingerprint = _request_fingerprint(room=room, question=question, items=prepared)
    with transaction.atomic():
        job = _job_by_key_locked(idempotency_key)
        if job is None:
            job = _job_create(
                room=room,
                question=question,
                items=prepared,
                idempotency_key=idempotency_key,
                fingerprint=fingerprint,
                actor=actor,
            )
            if job is not None:
                return job, SubmitOutcome.CREATED
            # A concurrent request with the same key committed first; answer from its job.
            job = _job_by_key_locked(idempotency_key)
        return _job_replay(job, fingerprint=fingerprint, actor=actor)


def _job_by_key_locked(idempotency_key: str) -> SendJob | None:
    return SendJob.objects.select_for_update().filter(idempotency_key=idempotency_key).first()


def _job_create(*, room, question, items, idempotency_key, fingerprint, actor) -> SendJob | None:
    """Insert the job and its items; None when another transaction holds the key (unique constraint)."""
    stored_names = [_item_content_store(item) for item in items]
    kinds = [item.kind for item in items]
    actor_kind, actor_id, actor_label = _actor_identity(actor)
    try:
        with transaction.atomic():
            job = SendJob.objects.create(
                room=room,
                question=question,
                idempotency_key=idempotency_key,
                request_fingerprint=fingerprint,
                expected_texts=kinds.count(SendJobItem.Kind.TEXT),
                expected_photos=kinds.count(SendJobItem.Kind.PHOTO),
                expected_files=kinds.count(SendJobItem.Kind.FILE),
                created_by=actor_label,
            )
            SendJobItem.objects.bulk_create(
                SendJobItem(
                    job=job,
                    index=index,
                    kind=item.kind,
                    text=item.text,
                    file=stored_name,
                    name=item.name,
                    sha256=item.sha256,
                    size=len(item.content),
                )
                for index, (item, stored_name) in enumerate(zip(items, stored_names, strict=True))
            )
    except IntegrityError:
        if SendJob.objects.filter(idempotency_key=idempotency_key).exists():
            return None
        raise
    audit_record(
        actor_kind=actor_kind,
        actor_id=actor_id,
        action=f"send_job.{State.QUEUED}",
        target=job,
        data={"from": None, "to": State.QUEUED, "device": None, "attempt": 1, "expected": job.expected_counts},
    )
    _alert_if_room_has_no_sender(room)
    return job


def _job_replay(job: SendJob, *, fingerprint: str, actor) -> tuple[SendJob, SubmitOutcome]:
    if job.request_fingerprint != fingerprint:
        raise IdempotencyKeyReused(job)
    if job.state == State.UNKNOWN:
        raise SendStateUnknown(job)
    if job.state != State.FAILED:
        return job, SubmitOutcome.REPLAYED
    _job_requeue(job, actor=actor, data={"previous_reason": job.reason, "previous_observed": job.observed_counts})
    return job, SubmitOutcome.REQUEUED


def _job_requeue(job: SendJob, *, actor, data: dict) -> None:
    _transition(
        job,
        to=State.QUEUED,
        actor=actor,
        changes={
            "attempt": job.attempt + 1,
            "reason": "",
            "observed_counts": {},
            "resent_counts": {},
            "claimed_at": None,
            "finished_at": None,
        },
        data={"attempt": job.attempt + 1, **data},
    )
    _alert_if_room_has_no_sender(job.room)


def _items_prepare(items: list[dict]) -> list[_PreparedItem]:
    max_items = settings.SEND_REQUEST_MAX_ITEMS
    if not items or len(items) > max_items:
        raise SendRequestInvalid(f"A send request has 1 to {max_items} items.", field="items")
    return [_item_prepare(index, item) for index, item in enumerate(items)]


def _item_prepare(index: int, item: dict) -> _PreparedItem:
    kind = item.get("kind")
    if kind == SendJobItem.Kind.TEXT:
        text = item.get("text") or ""
        if not text.strip():
            raise SendRequestInvalid("A text item needs text.", index=index, field="text")
        if len(text) > settings.SEND_TEXT_MAX_CHARS:
            raise SendRequestInvalid(
                f"A text item has at most {settings.SEND_TEXT_MAX_CHARS} characters.", index=index, field="text"
            )
        return _PreparedItem(kind=kind, text=text)
    if kind not in (SendJobItem.Kind.PHOTO, SendJobItem.Kind.FILE):
        raise SendRequestInvalid("An item's kind is text, photo or file.", index=index, field="kind")
    name = _item_name_check(index, item.get("name") or "")
    content = item.get("content") or b""
    if not content:
        raise SendRequestInvalid("A photo or file item needs content.", index=index, field="content")
    if len(content) > settings.SEND_ITEM_MAX_BYTES:
        raise SendRequestInvalid(
            f"An item has at most {settings.SEND_ITEM_MAX_BYTES} bytes.", index=index, field="content"
        )
    if kind == SendJobItem.Kind.PHOTO and not _looks_like_image(content):
        raise SendRequestInvalid(
            "A photo item must be an image (JPEG, PNG, GIF, BMP, HEIF).", index=index, field="content"
        )
    return _PreparedItem(kind=kind, name=name, content=content, sha256=hashlib.sha256(content).hexdigest())


def _item_name_check(index: int, name: str) -> str:
    """The name the device gives the file when it sends it: a plain file name, nothing path-like."""
    plain = (
        name
        and len(name) <= NAME_MAX_LENGTH
        and name not in (".", "..")
        and not name.startswith(".")
        and not any(c in name for c in "/\\")
        and not any(unicodedata.category(c).startswith("C") for c in name)
    )
    if not plain:
        raise SendRequestInvalid(
            f"A photo or file needs a plain file name of at most {NAME_MAX_LENGTH} characters.",
            index=index,
            field="name",
        )
    return name


def _looks_like_image(content: bytes) -> bool:
    if content.startswith(_IMAGE_SIGNATURES):
        return True
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return True
    return content[4:8] == b"ftyp" and content[8:12] in _HEIF_BRANDS


def _item_content_store(item: _PreparedItem) -> str:
    """Store a photo or file by its content hash (a retried request reuses the stored bytes); "" for text."""
    if item.kind == SendJobItem.Kind.TEXT:
        return ""
    path = f"send_items/{item.sha256[:2]}/{item.sha256}"
    if default_storage.exists(path):
        return path
    return default_storage.save(path, ContentFile(item.content))


def _request_fingerprint(*, room: Room, question, items: list[_PreparedItem]) -> str:
    canonical = json.dumps(
        {
            "room": room.pk,
            "question": question.pk if question is not None else None,
            "items": [item.fingerprint_part() for item in items],
        },
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


# --- sender devices ---


def send_job_claim(*, device: Device) -> SendJob | None:
    """Lease the oldest queued job of a room this device serves to it; None when there is none.

    Rows locked by a concurrent claim are skipped, so two devices never lease one job and neither waits.
    """
    if device.role != Device.Role.SENDER or device.status != Device.Status.ACTIVE:
        return None
    served_rooms = SenderRoom.objects.filter(device=device, is_active=True).values("room_id")
    with transaction.atomic():
        job = (
            SendJob.objects.select_for_update(skip_locked=True)
            .filter(state=State.QUEUED, room_id__in=served_rooms)
            .order_by("pk")
            .first()
        )
        if job is None:
            return None
        now = timezone.now()
        _transition(
            job,
            to=State.CLAIMED,
            actor=device,
            changes={
                "lease_holder": device,
                "lease_expires_at": now + _lease_duration(),
                "claimed_by": device,
                "claimed_at": now,
            },
            data={"attempt": job.attempt},
        )
    return job


def send_job_heartbeat(*, job: SendJob, device: Device) -> SendJob:
    """Extend the lease by `SEND_LEASE_SECONDS` from now. Raises `LeaseNotHeld`.

    Not audited: the lease deadline is a liveness signal, not a state; the audit log keeps the transitions.
    """
    with transaction.atomic():
        locked = _job_locked(job)
        _lease_require(locked, device)
        expires_at = timezone.now() + _lease_duration()
        SendJob.objects.filter(pk=locked.pk, lease_holder=device, state__in=SendJob.LEASED_STATES).update(
            lease_expires_at=expires_at
        )
        locked.lease_expires_at = expires_at
    return locked


def send_job_progress(*, job: SendJob, device: Device, state: str, note: str = "") -> SendJob:
    """The lease holder reports that it is sending or verifying. Reporting the current state again is a no-op
    (a retried call). Raises `LeaseNotHeld` or `SendJobStateConflict`."""
    if state not in PROGRESS_STATES:
        raise ValueError(f"Progress state is sending or verifying, not {state!r}.")
    with transaction.atomic():
        locked = _job_locked(job)
        _lease_require(locked, device)
        if locked.state == state:
            return locked
        _transition(locked, to=state, actor=device, data={"note": note[:NOTE_MAX_LENGTH]})
    return locked


def send_job_report(
    *, job: SendJob, device: Device, outcome: str, observed: dict, resent: dict, reason: str = ""
) -> SendJob:
    """The lease holder reports how the send ended, with the counts it observed in its client DB.

    Ends the lease. `sent` with fewer observed texts, photos or files than the job has is recorded as
    `unknown` ("sent" is written only when true). `unknown` raises a `SEND_UNKNOWN` alert. The same report
    again from the same device after the lease ended (a retry after a lost answer) returns the job unchanged.
    Raises `LeaseNotHeld` or `SendJobStateConflict`.
    """
    if outcome not in DEVICE_OUTCOMES:
        raise ValueError(f"Outcome is sent, failed or unknown, not {outcome!r}.")
    observed, resent = _counts_normalise(observed), _counts_normalise(resent)
    with transaction.atomic():
        locked = _job_locked(job)
        if _is_repeated_report(locked, device=device, observed=observed, resent=resent):
            return locked
        _lease_require(locked, device)
        to_state, recorded_reason = outcome, reason[:NOTE_MAX_LENGTH]
        shortfall = {key: locked.expected_counts[key] - observed[key] for key in COUNT_KEYS}
        shortfall = {key: missing for key, missing in shortfall.items() if missing > 0}
        if outcome == State.SENT and shortfall:
            to_state = State.UNKNOWN
            recorded_reason = f"발송됨으로 보고됐지만 도착 확인 수가 모자랍니다: {_counts_text(shortfall)}"
        now = timezone.now()
        _transition(
            locked,
            to=to_state,
            actor=device,
            changes={
                "lease_holder": None,
                "lease_expires_at": None,
                "observed_counts": observed,
                "resent_counts": resent,
                "reason": recorded_reason,
                "finished_at": now if to_state != State.UNKNOWN else None,
            },
            data={
                "reported_outcome": outcome,
                "observed": observed,
                "resent": resent,
                "reason": reason[:NOTE_MAX_LENGTH],
            },
        )
        if to_state == State.UNKNOWN:
            _alert_unknown_on_commit(locked)
    return locked


def _is_repeated_report(job: SendJob, *, device: Device, observed: dict, resent: dict) -> bool:
    return (
        job.lease_holder_id is None
        and job.claimed_by_id == device.pk
        and job.state in DEVICE_OUTCOMES
        and job.observed_counts == observed
        and job.resent_counts == resent
    )


def _counts_normalise(counts: dict | None) -> dict:
    counts = counts or {}
    normalised = {key: counts.get(key, 0) for key in COUNT_KEYS}
    for key, value in normalised.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"Count {key!r} must be a non-negative integer, not {value!r}.")
    return normalised


def _counts_text(counts: dict) -> str:
    labels = {"texts": "글", "photos": "사진", "files": "파일"}
    return ", ".join(f"{labels[key]} {value}개" for key, value in counts.items())


def _job_locked(job: SendJob) -> SendJob:
    return SendJob.objects.select_for_update().get(pk=job.pk)


def send_job_lease_check(*, job: SendJob, device: Device) -> None:
    """Raise `LeaseNotHeld` unless `device` holds the job's lease (for reads such as item downloads)."""
    _lease_require(job, device)


def _lease_require(job: SendJob, device: Device) -> None:
    # The holder keeps its lease until the sweep takes it (a late call before the sweep is still honest).
    if job.lease_holder_id != device.pk or job.state not in SendJob.LEASED_STATES:
        raise LeaseNotHeld(job)


def _lease_duration() -> timedelta:
    return timedelta(seconds=settings.SEND_LEASE_SECONDS)


def sender_rooms_report(*, device: Device, rooms: list[dict]) -> None:
    """Record the rooms a sender's client DB holds (from its heartbeat): `[{"room_key": ..., ...}]`.

    The list is the device's full set: reported rooms missing from it stop being served. Unknown room keys
    (no upload has named the room yet) are ignored. Rows staff set in the admin keep their `is_active`.
    An empty or missing list says nothing and changes nothing; other roles' reports are ignored.
    """
    if device.role != Device.Role.SENDER or not rooms:
        return
    keys = {room["room_key"] for room in rooms if room.get("room_key")}
    now = timezone.now()
    with transaction.atomic():
        reported_ids = set(Room.objects.filter(stable_key__in=keys).values_list("pk", flat=True))
        links = {link.room_id: link for link in SenderRoom.objects.select_for_update().filter(device=device)}
        added_ids = reported_ids - links.keys()
        SenderRoom.objects.bulk_create(
            [SenderRoom(device=device, room_id=room_id, last_reported_at=now) for room_id in added_ids],
            ignore_conflicts=True,
        )
        reactivated_ids = {
            room_id
            for room_id, link in links.items()
            if room_id in reported_ids and link.source == SenderRoom.Source.REPORTED and not link.is_active
        }
        dropped_ids = {
            room_id
            for room_id, link in links.items()
            if room_id not in reported_ids and link.source == SenderRoom.Source.REPORTED and link.is_active
        }
        # A liveness mark, not a log: refresh it at most once per REPORT_RESOLUTION, not on every heartbeat.
        SenderRoom.objects.filter(device=device, room_id__in=reported_ids).filter(
            Q(last_reported_at__isnull=True) | Q(last_reported_at__lt=now - REPORT_RESOLUTION)
        ).update(last_reported_at=now)
        SenderRoom.objects.filter(device=device, room_id__in=reactivated_ids).update(is_active=True)
        SenderRoom.objects.filter(device=device, room_id__in=dropped_ids).update(is_active=False)
        if added_ids or reactivated_ids or dropped_ids:
            audit_record(
                actor_kind=AuditEvent.ActorKind.DEVICE,
                actor_id=device.pk,
                action="sender_rooms.report",
                target=device,
                data={"served": sorted(added_ids | reactivated_ids), "dropped": sorted(dropped_ids)},
            )
        if device.status == Device.Status.ACTIVE:
            newly_served_keys = [_no_sender_alert_key(room_id) for room_id in added_ids | reactivated_ids]
            live_alerts = Alert.objects.exclude(status=Alert.Status.CLOSED).filter(
                kind=Alert.Kind.SEND_NO_SENDER, key__in=newly_served_keys
            )
            for key in live_alerts.values_list("key", flat=True):
                _alert_no_sender_close_on_commit(key)
        for room in Room.objects.filter(pk__in=dropped_ids):
            _alert_if_room_has_no_sender(room)


def sender_room_set(*, device: Device, room: Room, is_active: bool, actor) -> SenderRoom:
    """Staff decide whether a sender serves a room; the device's later reports do not override it."""
    if device.role != Device.Role.SENDER:
        raise ValueError("Only sender devices serve rooms.")
    with transaction.atomic():
        link, _ = SenderRoom.objects.select_for_update().get_or_create(
            device=device, room=room, defaults={"source": SenderRoom.Source.ADMIN, "is_active": is_active}
        )
        SenderRoom.objects.filter(pk=link.pk).update(source=SenderRoom.Source.ADMIN, is_active=is_active)
        link.source, link.is_active = SenderRoom.Source.ADMIN, is_active
        actor_kind, actor_id, _ = _actor_identity(actor)
        audit_record(
            actor_kind=actor_kind,
            actor_id=actor_id,
            action="sender_room.set",
            target=link,
            data={"device": device.pk, "room": room.pk, "is_active": is_active},
        )
        if is_active and device.status == Device.Status.ACTIVE:
            _alert_no_sender_close_on_commit(_no_sender_alert_key(room.pk))
        else:
            _alert_if_room_has_no_sender(room)
    return link


# --- sweeps and staff ---


def send_jobs_expire_leases(*, now=None, batch_size: int = 100) -> int:
    """Move jobs whose lease lapsed to `unknown` (never back to `queued`), in bounded batches; returns how many.

    Each raises a `SEND_UNKNOWN` alert: staff check the room and resolve the job.
    """
    now = now or timezone.now()
    expired = 0
    while True:
        with transaction.atomic():
            jobs = list(
                SendJob.objects.select_for_update(skip_locked=True)
                .filter(state__in=SendJob.LEASED_STATES, lease_expires_at__lte=now)
                .order_by("pk")[:batch_size]
            )
            for job in jobs:
                lapsed_at = job.lease_expires_at
                _transition(
                    job,
                    to=State.UNKNOWN,
                    actor=LEASE_SWEEP_ACTOR,
                    changes={
                        "lease_holder": None,
                        "lease_expires_at": None,
                        "reason": "리스 만료: 발송 기기가 결과를 보고하지 않았습니다. 방을 확인해 주세요.",
                    },
                    data={"lease_expired_at": lapsed_at.isoformat()},
                )
                _alert_unknown_on_commit(job)
        expired += len(jobs)
        if len(jobs) < batch_size:
            return expired


def send_job_resolve_unknown(*, job: SendJob, resolution: str, actor, note: str = "") -> SendJob:
    """Staff settle an `unknown` job after checking the room: `mark_sent`, or `requeue` (attempt + 1).

    Closes the job's `SEND_UNKNOWN` alert. Raises `SendJobStateConflict` when the job is not `unknown`.
    """
    resolution = UnknownResolution(resolution)
    note = note[:NOTE_MAX_LENGTH]
    with transaction.atomic():
        locked = _job_locked(job)
        if locked.state != State.UNKNOWN:
            to_state = State.SENT if resolution == UnknownResolution.MARK_SENT else State.QUEUED
            raise SendJobStateConflict(locked, to_state)
        if resolution == UnknownResolution.MARK_SENT:
            _transition(
                locked,
                to=State.SENT,
                actor=actor,
                changes={"finished_at": timezone.now(), "reason": note},
                data={"resolution": resolution.value, "note": note, "previous_reason": locked.reason},
            )
        else:
            _job_requeue(
                locked,
                actor=actor,
                data={"resolution": resolution.value, "note": note, "previous_reason": locked.reason},
            )
        job_pk = locked.pk
        transaction.on_commit(
            lambda: alert_close(kind=Alert.Kind.SEND_UNKNOWN, key=_unknown_alert_key(job_pk), reason=resolution.value),
            robust=True,
        )
    return locked


# --- shared ---


def _transition(job: SendJob, *, to: str, actor, changes: dict | None = None, data: dict | None = None) -> None:
    """Compare-and-set `job` (locked by the caller) from its state to `to`, and write the audit row."""
    from_state = job.state
    if to not in ALLOWED_TRANSITIONS[from_state]:
        raise SendJobStateConflict(job, to)
    fields = {"state": to, "state_changed_at": timezone.now(), **(changes or {})}
    if not SendJob.objects.filter(pk=job.pk, state=from_state).update(**fields):
        raise SendJobStateConflict(job, to)
    for name, value in fields.items():
        setattr(job, name, value)
    actor_kind, actor_id, _ = _actor_identity(actor)
    device_id = None if to == State.QUEUED else job.claimed_by_id
    audit_record(
        actor_kind=actor_kind,
        actor_id=actor_id,
        action=f"send_job.{to}",
        target=job,
        data={"from": from_state, "to": to, "device": device_id, **(data or {})},
    )


def _actor_identity(actor) -> tuple[str, str | int | None, str]:
    """(audit actor kind, audit actor id, label for `created_by`) of a device, a staff user or a system name."""
    if isinstance(actor, Device):
        return AuditEvent.ActorKind.DEVICE, actor.pk, f"device:{actor.pk}"
    if isinstance(actor, str):
        return AuditEvent.ActorKind.SYSTEM, actor, actor
    return AuditEvent.ActorKind.STAFF, actor.pk, actor.get_username()


def _unknown_alert_key(job_pk: int) -> str:
    return f"send_job:{job_pk}"


def _no_sender_alert_key(room_pk: int) -> str:
    return f"room:{room_pk}"


def _alert_unknown_on_commit(job: SendJob) -> None:
    job_pk, reason = job.pk, job.reason
    transaction.on_commit(
        lambda: alert_raise(
            kind=Alert.Kind.SEND_UNKNOWN,
            key=_unknown_alert_key(job_pk),
            message=f"발송 #{job_pk}의 도착 여부를 알 수 없습니다. 방을 확인한 뒤 발송 작업에서 처리해 주세요.",
            data={"send_job_id": job_pk, "reason": reason},
        ),
        robust=True,
    )


def _alert_if_room_has_no_sender(room: Room) -> None:
    """Raise `SEND_NO_SENDER` after the commit when jobs wait in a room no active sender serves."""
    if selectors.sender_devices_for_room(room=room).exists():
        return
    waiting = SendJob.objects.filter(room=room, state=State.QUEUED).count()
    if not waiting:
        return
    room_pk, room_name = room.pk, room.name
    transaction.on_commit(
        lambda: alert_raise(
            kind=Alert.Kind.SEND_NO_SENDER,
            key=_no_sender_alert_key(room_pk),
            message=f"'{room_name}' 방을 담당하는 발송 기기가 없어 발송 {waiting}건이 대기 중입니다.",
            data={"room_id": room_pk, "queued_jobs": waiting},
        ),
        robust=True,
    )


def _alert_no_sender_close_on_commit(alert_key: str) -> None:
    transaction.on_commit(
        lambda: alert_close(kind=Alert.Kind.SEND_NO_SENDER, key=alert_key, reason="sender"), robust=True
    )
