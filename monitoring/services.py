"""Writes of the monitoring app: audit rows, liveness markers and alerts. Callers run these inside their transaction.

Every app writes these, so this module sits below all of them and imports none; a raised alert reaches the
webhook through the task named `NOTIFY_ALERTS_TASK`, dispatched by name because `monitoring.tasks` also runs the
monitor, which reads every app.
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from config.celery import task_by_name
from monitoring.models import Alert, AuditEvent, LivenessMarker

# The webhook delivery task; `monitoring.tasks` declares it with this name.
NOTIFY_ALERTS_TASK = "monitoring.notify_alerts"


def audit_record(*, actor_kind: str, actor_id: str | int | None, action: str, target, data: dict | None = None):
    return AuditEvent.objects.create(
        actor_kind=actor_kind,
        actor_id="" if actor_id is None else str(actor_id),
        action=action,
        target_type=target._meta.label_lower,
        target_id=str(target.pk),
        data=data or {},
    )


def marker_accepted_write(*, question) -> LivenessMarker:
    return LivenessMarker.objects.create(question=question, kind=LivenessMarker.Kind.ACCEPTED)


def marker_result_write(*, question, outcome: str) -> LivenessMarker:
    """Idempotent: a question has one result marker; a second call keeps the first outcome."""
    marker, _ = LivenessMarker.objects.get_or_create(
        question=question, kind=LivenessMarker.Kind.RESULT, defaults={"outcome": outcome}
    )
    return marker


def alert_raise(*, kind: str, key: str, message: str, data: dict | None = None) -> tuple[Alert, bool]:
    """Open an alert unless one for (kind, key) is already live. Returns (alert, created)."""
    live = Alert.objects.exclude(status=Alert.Status.CLOSED).filter(kind=kind, key=key).first()
    if live:
        return live, False
    try:
        with transaction.atomic():
            alert = Alert.objects.create(kind=kind, key=key, message=message, data=data or {})
            audit_record(actor_kind="system", actor_id=None, action="alert.raise", target=alert, data={"kind": kind})
            transaction.on_commit(_notify_alerts_soon)
    except IntegrityError:
        # A concurrent raise won the partial unique constraint: theirs is the live alert.
        return Alert.objects.exclude(status=Alert.Status.CLOSED).get(kind=kind, key=key), False
    return alert, True


def alert_close(*, kind: str, key: str, reason: str = "") -> int:
    """Close the live alert for (kind, key), if any. Returns how many were closed (0 or 1)."""
    with transaction.atomic():
        alerts = list(Alert.objects.select_for_update().exclude(status=Alert.Status.CLOSED).filter(kind=kind, key=key))
        for alert in alerts:
            alert.status = Alert.Status.CLOSED
            alert.closed_at = timezone.now()
            alert.save(update_fields=["status", "closed_at"])
            audit_record(
                actor_kind="system", actor_id=None, action="alert.close", target=alert, data={"reason": reason}
            )
    return len(alerts)


def alert_acknowledge(*, alert: Alert, actor) -> bool:
    """Staff saw it. Only an open alert can be acknowledged; it stays live until its condition clears."""
    with transaction.atomic():
        updated = Alert.objects.filter(pk=alert.pk, status=Alert.Status.OPEN).update(
            status=Alert.Status.ACKNOWLEDGED, acknowledged_at=timezone.now(), acknowledged_by=actor.get_username()
        )
        if updated:
            audit_record(actor_kind="staff", actor_id=actor.pk, action="alert.acknowledge", target=alert)
    return bool(updated)


def _notify_alerts_soon():
    task_by_name(NOTIFY_ALERTS_TASK).delay()
