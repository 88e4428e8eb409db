"""Writes of the monitoring app: audit rows and liveness markers. Callers run these inside their transaction."""

from monitoring.models import AuditEvent, LivenessMarker


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
