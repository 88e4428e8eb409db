"""Alert delivery to a webhook. An alert is marked notified only after a 2xx, so a webhook that is down loses
nothing: the next run tries again."""

import logging

import httpx
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from monitoring.models import Alert

logger = logging.getLogger(__name__)


def alert_payload(alert: Alert) -> dict:
    """Slack-compatible (`text`) with the structured alert beside it for other receivers."""
    return {
        "text": f"[{alert.get_kind_display()}] {alert.message}",
        "alert": {
            "id": alert.pk,
            "kind": alert.kind,
            "key": alert.key,
            "status": alert.status,
            "raised_at": alert.raised_at.isoformat(),
            "data": alert.data,
        },
    }


def alerts_notify(*, limit: int = 100) -> dict:
    """Post every alert not yet delivered. Returns counts of delivered and failed posts."""
    url = settings.ALERT_WEBHOOK_URL
    if not url:
        return {"delivered": 0, "failed": 0, "pending": Alert.objects.filter(notified_at__isnull=True).count()}
    delivered = failed = 0
    pending = Alert.objects.filter(notified_at__isnull=True).order_by("raised_at")[:limit]
    with httpx.Client(timeout=settings.ALERT_WEBHOOK_TIMEOUT_SECONDS) as client:
        for alert in pending:
            try:
                response = client.post(url, json=alert_payload(alert))
                response.raise_for_status()
            except httpx.HTTPError as exc:
                failed += 1
                Alert.objects.filter(pk=alert.pk).update(notify_attempts=F("notify_attempts") + 1)
                logger.warning("alert webhook failed for alert %s: %s", alert.pk, exc)
                continue
            with transaction.atomic():
                Alert.objects.filter(pk=alert.pk, notified_at__isnull=True).update(
                    notified_at=timezone.now(), notify_attempts=F("notify_attempts") + 1
                )
            delivered += 1
    return {"delivered": delivered, "failed": failed}
