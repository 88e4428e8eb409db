"""The liveness monitor: looks only at what the processing path itself wrote, never guesses from outside.

Each check raises at most one live alert per subject (the partial unique constraint on Alert) and closes it when
the condition is gone, so a run every minute does not pile up alerts. Checks that concern people being at work
(stalled questions, silent devices, upload gaps) run only in business hours; alerts close at any time.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, Max, OuterRef
from django.utils import timezone

from conversations.models import UploadBatch
from delivery.models import Device, SendJob
from monitoring.business_hours import is_business_time
from monitoring.models import Alert, LivenessMarker
from monitoring.services import alert_close, alert_raise

ACTIVE_SEND_STATES = (
    SendJob.State.QUEUED,
    SendJob.State.CLAIMED,
    SendJob.State.SENDING,
    SendJob.State.VERIFYING,
)


@dataclass
class MonitorReport:
    business_time: bool
    raised: list[str] = field(default_factory=list)
    closed: int = 0


def monitor_run(*, now: datetime | None = None) -> MonitorReport:
    now = now or timezone.now()
    report = MonitorReport(business_time=is_business_time(now))
    report.closed += _close_answered_questions()
    report.closed += _close_settled_send_jobs(now)
    report.closed += _close_live_devices(now)
    if report.business_time:
        report.raised += _stalled_questions(now)
        report.raised += _silent_devices(now)
        report.raised += _upload_gaps(now)
    report.raised += _stuck_send_jobs(now)
    report.raised += _unknown_send_jobs()
    return report


def _raise(kind: str, key: str, message: str, data: dict) -> list[str]:
    _, created = alert_raise(kind=kind, key=key, message=message, data=data)
    return [f"{kind}:{key}"] if created else []


def _live_alert_keys(kind: str) -> list[str]:
    return list(Alert.objects.exclude(status=Alert.Status.CLOSED).filter(kind=kind).values_list("key", flat=True))


def _stalled_questions(now: datetime) -> list[str]:
    threshold = now - timedelta(minutes=settings.MONITOR_QUESTION_RESULT_MINUTES)
    has_result = LivenessMarker.objects.filter(question=OuterRef("question"), kind=LivenessMarker.Kind.RESULT)
    stalled = (
        LivenessMarker.objects.filter(kind=LivenessMarker.Kind.ACCEPTED, created_at__lt=threshold)
        .filter(~Exists(has_result))
        .select_related("question__room")
        .order_by("created_at")[: settings.MONITOR_BATCH_LIMIT]
    )
    raised = []
    for marker in stalled:
        question = marker.question
        raised += _raise(
            Alert.Kind.QUESTION_STALLED,
            f"question:{question.pk}",
            f"태그된 질문에 {settings.MONITOR_QUESTION_RESULT_MINUTES}분 넘게 결과가 없습니다: "
            f"[{question.room.name}] {question.text[:80]}",
            {"question_id": question.pk, "accepted_at": marker.created_at.isoformat()},
        )
    return raised


def _close_answered_questions() -> int:
    keys = _live_alert_keys(Alert.Kind.QUESTION_STALLED)
    ids = [int(key.split(":", 1)[1]) for key in keys]
    answered = LivenessMarker.objects.filter(question_id__in=ids, kind=LivenessMarker.Kind.RESULT)
    return sum(
        alert_close(kind=Alert.Kind.QUESTION_STALLED, key=f"question:{question_id}", reason="result marker written")
        for question_id in answered.values_list("question_id", flat=True)
    )


def _stuck_send_jobs(now: datetime) -> list[str]:
    limit = now - timedelta(minutes=settings.MONITOR_SEND_STUCK_MINUTES)
    stuck = (
        SendJob.objects.filter(state__in=ACTIVE_SEND_STATES, state_changed_at__lt=limit)
        .select_related("room")
        .order_by("pk")[: settings.MONITOR_BATCH_LIMIT]
    )
    raised = []
    for job in stuck:
        raised += _raise(
            Alert.Kind.SEND_STUCK,
            f"send_job:{job.pk}",
            f"발송 작업 #{job.pk}이(가) '{job.get_state_display()}' 상태로 "
            f"{settings.MONITOR_SEND_STUCK_MINUTES}분 넘게 멈춰 있습니다: {job.room.name}",
            {"job_id": job.pk, "state": job.state},
        )
    return raised


def _unknown_send_jobs() -> list[str]:
    raised = []
    unknown = SendJob.objects.filter(state=SendJob.State.UNKNOWN).select_related("room")
    for job in unknown[: settings.MONITOR_BATCH_LIMIT]:
        raised += _raise(
            Alert.Kind.SEND_UNKNOWN,
            f"send_job:{job.pk}",
            f"발송 작업 #{job.pk}의 도착 여부를 알 수 없습니다. "
            f"방을 확인한 뒤 관리자 화면에서 처리해 주세요: {job.room.name}",
            {"job_id": job.pk},
        )
    return raised


def _close_settled_send_jobs(now: datetime) -> int:
    limit = now - timedelta(minutes=settings.MONITOR_SEND_STUCK_MINUTES)
    closed = 0
    for kind, still_bad in (
        (Alert.Kind.SEND_STUCK, lambda job: job.state in ACTIVE_SEND_STATES and job.state_changed_at < limit),
        (Alert.Kind.SEND_UNKNOWN, lambda job: job.state == SendJob.State.UNKNOWN),
    ):
        keys = _live_alert_keys(kind)
        jobs = SendJob.objects.in_bulk([int(key.split(":", 1)[1]) for key in keys])
        for key in keys:
            job = jobs.get(int(key.split(":", 1)[1]))
            if job is None or not still_bad(job):
                closed += alert_close(kind=kind, key=key, reason="job moved on")
    return closed


def _silent_devices(now: datetime) -> list[str]:
    limit = now - timedelta(minutes=settings.MONITOR_DEVICE_SILENT_MINUTES)
    silent = Device.objects.filter(status=Device.Status.ACTIVE, last_seen_at__lt=limit)
    raised = []
    for device in silent:
        raised += _raise(
            Alert.Kind.DEVICE_SILENT,
            f"device:{device.pk}",
            f"기기 '{device.name}'({device.get_role_display()})이(가) "
            f"{settings.MONITOR_DEVICE_SILENT_MINUTES}분 넘게 접속하지 않았습니다.",
            {"device_id": device.pk, "last_seen_at": device.last_seen_at.isoformat()},
        )
    return raised


def _close_live_devices(now: datetime) -> int:
    limit = now - timedelta(minutes=settings.MONITOR_DEVICE_SILENT_MINUTES)
    keys = _live_alert_keys(Alert.Kind.DEVICE_SILENT)
    devices = Device.objects.in_bulk([int(key.split(":", 1)[1]) for key in keys])
    closed = 0
    for key in keys:
        device = devices.get(int(key.split(":", 1)[1]))
        if device is None or device.status != Device.Status.ACTIVE or (device.last_seen_at or now) >= limit:
            closed += alert_close(kind=Alert.Kind.DEVICE_SILENT, key=key, reason="device seen again")
    return closed


def _upload_gaps(now: datetime) -> list[str]:
    """An active uploader that has posted before but nothing for the gap limit (its PC may be off or stuck)."""
    limit = now - timedelta(minutes=settings.MONITOR_UPLOAD_GAP_MINUTES)
    last_batches = (
        UploadBatch.objects.filter(device__status=Device.Status.ACTIVE, device__role=Device.Role.UPLOADER)
        .values("device_id", "device__name")
        .annotate(last=Max("received_at"))
    )
    raised = []
    live_keys = set(_live_alert_keys(Alert.Kind.UPLOAD_GAP))
    for row in last_batches:
        key = f"device:{row['device_id']}"
        if row["last"] < limit:
            raised += _raise(
                Alert.Kind.UPLOAD_GAP,
                key,
                f"업로더 '{row['device__name']}'에서 {settings.MONITOR_UPLOAD_GAP_MINUTES}분 넘게 업로드가 없습니다.",
                {"device_id": row["device_id"], "last_upload_at": row["last"].isoformat()},
            )
        elif key in live_keys:
            alert_close(kind=Alert.Kind.UPLOAD_GAP, key=key, reason="uploads resumed")
    return raised
