"""Writes for edge devices: registration, pairing codes, pairing, token checks, revocation, liveness.

A pairing code is a short, human-typed secret, so it is kept only as a keyed hash, shown once, lives for
`PAIRING_CODE_TTL_MINUTES` and is redeemed by one compare-and-set UPDATE (a read followed by a write would let
one code pair twice). Every failure is the same `PairingCodeInvalid`, so the outside cannot tell an unknown code
from an expired or used one. A wrong code cannot be tied to the code it was meant for, so it changes no row;
guessing is bounded by the failure limits per client address and in total (`pairing_limits`), which refuse an
attempt before its code is looked at.

Re-pairing: an active device may get a new code. Its current token keeps working until the new code is
redeemed; the redeem replaces the token hash in the same UPDATE, so from then on only the new token works.
A revoked device is final: it gets no new code (register a new device instead).

Tokens: a token lives `DEVICE_TOKEN_TTL_DAYS` from its issue (0: no expiry); past it every call is refused
like an unknown token. The device rotates its own token (`device_token_rotate`): the new one is held as
`pending_token_hash` and replaces the current one at its first use, so a device whose answer got lost keeps
its working token, and a device that stored the new one switches over by using it. Rotation is due in the
last third of a token's life, or when staff ask for it (`device_token_rotation_request`).
"""

import hashlib
import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.crypto import salted_hmac

from delivery.models import Device
from delivery.services.pairing_limits import client_address_scope, pairing_attempt_begin
from monitoring.models import AuditEvent
from monitoring.services import audit_record

logger = logging.getLogger(__name__)

# No 0 O 1 I L: misread characters make pairing fail for reasons nobody can see on screen.
PAIRING_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
PAIRING_CODE_LENGTH = 6
# last_seen_at is a liveness signal, not a log: one write a minute per device is precise enough.
LAST_SEEN_RESOLUTION = timedelta(seconds=60)
_CODE_HASH_SALT = "delivery.device.pairing_code"
# A fresh code colliding with another row's stored hash is a one-in-a-billion event; a few draws settle it.
_CODE_ISSUE_DRAWS = 5


class PairingCodeInvalid(Exception):
    """The one error of every failed redeem: unknown, expired, already used, too many attempts, malformed."""


class DeviceRevoked(Exception):
    """The device is revoked; it cannot get a pairing code or be revoked again."""


class DeviceNotPaired(Exception):
    """The device holds no token (pending or revoked): there is nothing to rotate."""


def pairing_code_normalise(code: str) -> str:
    """What a person types, as stored: upper case, without spaces or dashes."""
    return "".join(code.split()).replace("-", "").upper()


def _pairing_code_hash(code: str) -> str:
    # Keyed with SECRET_KEY: whoever reads the table cannot test the small code space offline.
    return salted_hmac(_CODE_HASH_SALT, code, algorithm="sha256").hexdigest()


def _token_hash(token: str) -> str:
    # The token has 256 random bits, so a plain digest cannot be reversed by guessing.
    return hashlib.sha256(token.encode()).hexdigest()


def _live_code_filter(now) -> Q:
    return Q(
        pairing_code_hash__isnull=False,
        pairing_expires_at__gt=now,
        status__in=[Device.Status.PENDING, Device.Status.ACTIVE],
    )


def device_register(*, name: str, role: str, actor) -> Device:
    """Create a pending device for staff; it can do nothing until a pairing code is issued and redeemed."""
    if role not in Device.Role.values:
        raise ValueError(f"Unknown device role {role!r}.")
    with transaction.atomic():
        device = Device.objects.create(name=name, role=role, created_by=actor)
        audit_record(
            actor_kind=AuditEvent.ActorKind.STAFF,
            actor_id=actor.pk,
            action="device.register",
            target=device,
            data={"name": name, "role": role},
        )
    return device


def device_pairing_code_issue(*, device: Device, actor) -> str:
    """Give the device a fresh one-time code and return it in plain text; this is the only time it exists.

    Replaces any earlier code on the same row (never adds a row). An active device keeps its current token
    until the new code is redeemed. Raises `DeviceRevoked` for a revoked device.
    """
    expires_at = timezone.now() + timedelta(minutes=settings.PAIRING_CODE_TTL_MINUTES)
    not_revoked = Device.objects.filter(pk=device.pk).exclude(status=Device.Status.REVOKED)
    with transaction.atomic():
        for _ in range(_CODE_ISSUE_DRAWS):
            code = "".join(secrets.choice(PAIRING_CODE_ALPHABET) for _ in range(PAIRING_CODE_LENGTH))
            try:
                with transaction.atomic():
                    stored = not_revoked.update(
                        pairing_code_hash=_pairing_code_hash(code), pairing_expires_at=expires_at
                    )
                break
            except IntegrityError:
                continue
        else:
            raise RuntimeError("Could not draw a pairing code that no other device holds.")
        if not stored:
            raise DeviceRevoked(device.pk)
        audit_record(
            actor_kind=AuditEvent.ActorKind.STAFF,
            actor_id=actor.pk,
            action="device.pairing_code_issue",
            target=device,
            data={"expires_at": expires_at.isoformat()},
        )
    device.refresh_from_db()
    return code


def device_pair_attempt(*, code: str | None, client_name: str | None, client_address: str) -> tuple[Device, str]:
    """An anonymous redeem from `client_address`: the failure limits first, then `device_pair`.

    `code` or `client_name` None stands for a request that named no usable value: a failure like a wrong code.
    Raises `PairingRateLimited` (nothing looked at) or `PairingCodeInvalid` (counted as a failure).
    """
    attempt = pairing_attempt_begin(client_address=client_address)
    try:
        if code is None or client_name is None:
            raise PairingCodeInvalid()
        paired = device_pair(code=code, client_name=client_name)
    except PairingCodeInvalid:
        logger.warning("Failed pairing attempt from %s.", client_address_scope(client_address))
        raise
    attempt.succeeded()
    return paired


def device_pair(*, code: str, client_name: str) -> tuple[Device, str]:
    """Redeem a pairing code; return the device and its new token (shown once, stored only as a hash).

    The redeem is one compare-and-set UPDATE over the code's hash and its expiry, so two concurrent redeems of
    one code give exactly one success. A failure writes nothing. Every failure raises `PairingCodeInvalid`.
    """
    normalised = pairing_code_normalise(code)
    token = secrets.token_urlsafe(32)
    token_hash = _token_hash(token)
    now = timezone.now()
    with transaction.atomic():
        redeemable = Device.objects.filter(_live_code_filter(now), pairing_code_hash=_pairing_code_hash(normalised))
        redeemed = redeemable.update(
            status=Device.Status.ACTIVE,
            token_hash=token_hash,
            paired_at=now,
            client_name=client_name,
            pairing_code_hash=None,
            pairing_expires_at=None,
            **_fresh_token_fields(now),
        )
        if not redeemed:
            raise PairingCodeInvalid()
        device = Device.objects.get(token_hash=token_hash)
        audit_record(
            actor_kind=AuditEvent.ActorKind.DEVICE,
            actor_id=device.pk,
            action="device.pair",
            target=device,
            data={"client_name": client_name},
        )
    return device, token


def device_revoke(*, device: Device, actor) -> None:
    """Revoke the device: its token and any pairing code stop working with the commit, for good.

    Raises `DeviceRevoked` if it already was.
    """
    now = timezone.now()
    with transaction.atomic():
        revoked = (
            Device.objects.filter(pk=device.pk)
            .exclude(status=Device.Status.REVOKED)
            .update(
                status=Device.Status.REVOKED,
                revoked_at=now,
                token_hash=None,
                pending_token_hash=None,
                pairing_code_hash=None,
                pairing_expires_at=None,
            )
        )
        if not revoked:
            raise DeviceRevoked(device.pk)
        audit_record(actor_kind=AuditEvent.ActorKind.STAFF, actor_id=actor.pk, action="device.revoke", target=device)
    device.refresh_from_db()


def device_authenticate(token: str) -> Device | None:
    """The active device holding this token, or None. Read from the database every time, so a revoke takes
    effect on the very next request; an expired token is None like an unknown one.

    One indexed query. A device's rotated token (see `device_token_rotate`) also matches, and its first use
    makes it the device's only token.
    """
    if not token:
        return None
    presented = _token_hash(token)
    now = timezone.now()
    device = (
        Device.objects.filter(Q(token_hash=presented) | Q(pending_token_hash=presented), status=Device.Status.ACTIVE)
        .filter(Q(token_expires_at__isnull=True) | Q(token_expires_at__gt=now))
        .first()
    )
    if device is None or device.token_hash == presented:
        return device
    return _pending_token_promote(device, presented=presented, now=now)


def _pending_token_promote(device: Device, *, presented: str, now) -> Device | None:
    """The rotated token was used: it becomes the device's token (compare-and-set), with a fresh expiry."""
    fresh = _fresh_token_fields(now)
    with transaction.atomic():
        promoted = Device.objects.filter(
            pk=device.pk, pending_token_hash=presented, status=Device.Status.ACTIVE
        ).update(token_hash=presented, **fresh)
        if not promoted:
            # A revoke or another rotation won the race; a concurrent first use of the same token promoted it.
            return Device.objects.filter(pk=device.pk, token_hash=presented, status=Device.Status.ACTIVE).first()
        audit_record(
            actor_kind=AuditEvent.ActorKind.DEVICE,
            actor_id=device.pk,
            action="device.token_rotate",
            target=device,
            data={"expires_at": fresh["token_expires_at"].isoformat() if fresh["token_expires_at"] else None},
        )
    device.token_hash = presented
    for name, value in fresh.items():
        setattr(device, name, value)
    return device


def device_token_rotate(*, device: Device) -> str:
    """Give the device a new token and return it in plain text (shown once, stored only as a hash).

    The current token keeps working until the new one is first used; rotating again before that replaces the
    new one. An unused new token is refused once the current token has expired. Raises `DeviceNotPaired`
    for a device without a token.
    """
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        stored = Device.objects.filter(pk=device.pk, status=Device.Status.ACTIVE, token_hash__isnull=False).update(
            pending_token_hash=_token_hash(token)
        )
        if not stored:
            raise DeviceNotPaired(device.pk)
        audit_record(
            actor_kind=AuditEvent.ActorKind.DEVICE,
            actor_id=device.pk,
            action="device.token_rotation_begin",
            target=device,
        )
    return token


def device_token_rotation_request(*, device: Device, actor) -> None:
    """Staff ask the device to rotate its token; it learns so from its token status and rotates on its next
    run. Raises `DeviceNotPaired` for a device without a token."""
    now = timezone.now()
    with transaction.atomic():
        requested = Device.objects.filter(pk=device.pk, status=Device.Status.ACTIVE, token_hash__isnull=False).update(
            token_rotation_requested_at=now
        )
        if not requested:
            raise DeviceNotPaired(device.pk)
        audit_record(
            actor_kind=AuditEvent.ActorKind.STAFF,
            actor_id=actor.pk,
            action="device.token_rotation_request",
            target=device,
        )
    device.token_rotation_requested_at = now


def _fresh_token_fields(now) -> dict:
    ttl_days = settings.DEVICE_TOKEN_TTL_DAYS
    return {
        "token_issued_at": now,
        "token_expires_at": now + timedelta(days=ttl_days) if ttl_days else None,
        "token_rotation_requested_at": None,
        "pending_token_hash": None,
    }


def device_touch(*, device: Device) -> None:
    """Record that the device was heard from; at most one write per `LAST_SEEN_RESOLUTION`."""
    now = timezone.now()
    stale_before = now - LAST_SEEN_RESOLUTION
    if device.last_seen_at and device.last_seen_at > stale_before:
        return
    # Conditional so that concurrent requests of one device write once, not once each.
    Device.objects.filter(pk=device.pk).filter(Q(last_seen_at__isnull=True) | Q(last_seen_at__lte=stale_before)).update(
        last_seen_at=now
    )
    device.last_seen_at = now


def device_heartbeat(*, device: Device, rooms: list[dict]) -> None:
    """A device reports that it is alive, with the rooms its local client holds (a sender serves those rooms).

    `rooms` items are `{"room_key": str, "room_name": str}`.
    """
    from delivery.services.send_jobs import sender_rooms_report

    device_touch(device=device)
    sender_rooms_report(device=device, rooms=rooms)
