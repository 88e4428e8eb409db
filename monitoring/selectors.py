"""Reads of the monitoring app other apps call: how many alerts are open, and a question's liveness markers."""

from django.db.models import QuerySet

from monitoring.models import Alert, LivenessMarker


def alerts_open_count() -> int:
    """How many alerts are open: raised, and not yet acknowledged or closed."""
    return Alert.objects.filter(status=Alert.Status.OPEN).count()


def liveness_markers_for_question(*, question) -> QuerySet[LivenessMarker]:
    """The question's liveness markers, oldest first."""
    return LivenessMarker.objects.filter(question=question).order_by("created_at", "pk")
