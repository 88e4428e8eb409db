"""Health checks of the server's dependencies, reported by `GET /api/v1/health`."""

import logging

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


CHECKS = {"database": _check_database, "redis": _check_redis, "faq_index": _check_faq_index, "hub": _check_hub}


def health_report() -> dict:
    """Run every check; one failing check degrades the whole report with its reason, it never raises."""
    checks, reasons = {}, []
    for name, check in CHECKS.items():
        try:
            result = check()
        except Exception as error:  # a health check reports a failure, it never raises
            logger.warning("health check %s failed: %s", name, error)
            result = {"status": "degraded", "reason": f"{type(error).__name__}: {error}"}
        checks[name] = result
        if result.get("status") != "ok":
            reasons.append(f"{name}: {result.get('reason') or 'degraded'}")
    return {"status": "degraded" if reasons else "ok", "checks": checks, "reasons": reasons}
