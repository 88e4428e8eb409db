"""Health checks of the server's dependencies: one table read by `GET /api/v1/health` and the admin health page.

Each check returns a dict with `status` (`ok` or `degraded`), a `reason` when degraded and whatever details help
staff (paths, hosts, counts). Those details map the deployment, so the API shows them only to a caller with the
health token; anyone else gets the status words (`health_summary`).
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from agent.knowledge.faq_index import faq_collection_name, faq_index_vector_count
from agent.models import FaqEntry

logger = logging.getLogger(__name__)


def _check_database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"status": "ok"}


def _check_redis() -> dict:
    if not settings.REDIS_URL:
        return {"status": "ok", "detail": "not configured (in-process cache and tasks)"}
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    finally:
        client.close()
    return {"status": "ok"}


def _check_faq_index() -> dict:
    vectors = faq_index_vector_count()
    active = FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE).count()
    unindexed = FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE, indexed_at__isnull=True).count()
    check = {
        "status": "ok",
        "backend": "server" if settings.QDRANT_URL else "local",
        "collection": faq_collection_name(),
        "vector_count": vectors,
        "active_entries": active,
        "unindexed_entries": unindexed,
    }
    if unindexed or vectors != active:
        check["status"] = "degraded"
        check["reason"] = (
            f"FAQ index out of sync: {vectors} vectors for {active} active entries, {unindexed} not indexed "
            "(run `manage.py rebuild_faq_index`)"
        )
    return check


def _check_hub() -> dict:
    try:
        from agent.knowledge.hub import hub_status
    except ImportError:
        return {"status": "ok", "detail": "not installed"}
    return hub_status()


@dataclass(frozen=True)
class HealthCheck:
    name: str  # the component's key in the API answer
    label: str  # what staff read on the admin page
    run: Callable[[], dict]


# One entry per component; the API and the admin page both read this table.
HEALTH_CHECKS = [
    HealthCheck("database", "데이터베이스", _check_database),
    HealthCheck("redis", "Redis (캐시·작업 큐)", _check_redis),
    HealthCheck("faq_index", "FAQ 색인 (Qdrant)", _check_faq_index),
    HealthCheck("hub", "지식 허브 (LightRAG)", _check_hub),
]
HEALTH_STATUSES = ("ok", "degraded")


def health_report() -> dict:
    """Run every check; one failing check degrades the whole report with its reason, it never raises.

    `{"status", "checks": {name: {"status", "reason"?, ...details}}, "reasons": ["name: reason", ...]}`.
    """
    checks, reasons = {}, []
    for check in HEALTH_CHECKS:
        try:
            result = check.run()
        except Exception as error:  # a health check reports a failure, it never raises
            logger.warning("health check %s failed: %s", check.name, error)
            result = {"status": "degraded", "reason": f"{type(error).__name__}: {error}"}
        checks[check.name] = result
        if result.get("status") != "ok":
            reasons.append(f"{check.name}: {result.get('reason') or 'degraded'}")
    return {"status": "degraded" if reasons else "ok", "checks": checks, "reasons": reasons}


def health_summary(report: dict) -> dict:
    """The report as status words only: `{"status", "checks": {name: "ok" | "degraded"}}`."""
    return {
        "status": report["status"],
        "checks": {
            name: "ok" if result.get("status") == "ok" else "degraded" for name, result in report["checks"].items()
        },
    }


def health_labelled(report: dict) -> list[dict]:
    """The report's checks in table order with their labels, for the admin page."""
    labels = {check.name: check.label for check in HEALTH_CHECKS}
    rows = []
    for name, result in report["checks"].items():
        details = {key: value for key, value in result.items() if key not in ("status", "reason")}
        rows.append(
            {
                "name": name,
                "label": labels.get(name, name),
                "ok": result.get("status") == "ok",
                "reason": result.get("reason", ""),
                "details": details,
            }
        )
    return rows
