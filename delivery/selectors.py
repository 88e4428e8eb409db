"""Reads of the delivery app: send jobs, their history, and which sender devices serve which rooms."""

from django.db.models import QuerySet
from django.utils import timezone

from conversations.models import Question, Room
from delivery.models import Device, SendJob, SendJobItem
from monitoring.models import AuditEvent


def send_job_get(*, job_id: int) -> SendJob | None:
    """The job with its room and items loaded, or None."""
    return SendJob.objects.select_related("room").prefetch_related("items").filter(pk=job_id).first()


def sender_job_get(*, job_id: int, device: Device) -> SendJob | None:
    """The job if `device` claimed it last (it holds the lease, or held it until it ended or lapsed), else None.

    Another device's job, or one nobody gave this device, is answered exactly like a missing one: a sender cannot
    learn which job ids exist. Its own job stays visible so it can be told its lease is gone.
    """
    return SendJob.objects.select_related("room").prefetch_related("items").filter(pk=job_id, claimed_by=device).first()


def send_job_item_get(*, job: SendJob, index: int) -> SendJobItem | None:
    return SendJobItem.objects.filter(job=job, index=index).first()


def send_jobs_for_question(*, question) -> QuerySet[SendJob]:
    """The jobs that carry answers to `question`, oldest first."""
    return SendJob.objects.filter(question=question).order_by("pk")


def send_jobs_by_key(*, idempotency_keys) -> QuerySet[SendJob]:
    """The jobs created under any of `idempotency_keys` (a key missing has no job yet)."""
    return SendJob.objects.filter(idempotency_key__in=list(idempotency_keys))


def send_job_sent(*, idempotency_key: str) -> bool:
    """Whether the job under `idempotency_key` exists and was sent."""
    return SendJob.objects.filter(idempotency_key=idempotency_key, state=SendJob.State.SENT).exists()


def send_jobs_unsent_count() -> int:
    """How many jobs are not (yet) delivered: waiting, on their way, failed or of unknown state."""
    return SendJob.objects.exclude(state=SendJob.State.SENT).count()


def send_job_history(*, job: SendJob) -> QuerySet[AuditEvent]:
    """The job's audit rows (`send_job.<state>` transitions), oldest first."""
    return AuditEvent.objects.filter(target_type=SendJob._meta.label_lower, target_id=str(job.pk)).order_by(
        "created_at", "id"
    )


def device_names(*, device_ids) -> dict[str, str]:
    """Device names by id (as text, the way audit rows name their device actor)."""
    ids = {int(device_id) for device_id in device_ids if str(device_id).isdigit()}
    if not ids:
        return {}
    return {str(pk): name for pk, name in Device.objects.filter(pk__in=ids).values_list("pk", "name")}


def device_token_rotation_due(*, device: Device, now=None) -> bool:
    """Whether the device should rotate its token now: staff asked for it, or the token is in the last third
    of its life."""
    if device.token_rotation_requested_at is not None:
        return True
    if device.token_expires_at is None or device.token_issued_at is None:
        return False
    now = now or timezone.now()
    lifetime = device.token_expires_at - device.token_issued_at
    return now >= device.token_expires_at - lifetime / 3


def sender_devices_for_room(*, room: Room) -> QuerySet[Device]:
    """Active sender devices that serve `room`."""
    return Device.objects.filter(
        role=Device.Role.SENDER,
        status=Device.Status.ACTIVE,
        sender_rooms__room=room,
        sender_rooms__is_active=True,
    ).order_by("pk")


def device_leases(device: Device) -> QuerySet[SendJob]:
    """The jobs whose lease `device` holds right now."""
    return SendJob.objects.filter(lease_holder=device, state__in=SendJob.LEASED_STATES).select_related("room")


def send_request_room_get(*, room_key: str) -> Room | None:
    """The room a send request names by its stable key (the key the edge devices use)."""
    return Room.objects.filter(stable_key=room_key).first()


def send_request_question_get(*, question_id: int) -> Question | None:
    """The question a send request answers."""
    return Question.objects.filter(pk=question_id).first()
