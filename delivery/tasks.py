"""Thin Celery entry points of the delivery app."""

from config.celery import task
from delivery.services import send_jobs_expire_leases


@task("delivery.expire_send_leases", queue="delivery", soft_time_limit=50, time_limit=60)
def expire_send_leases() -> int:
    """Move send jobs whose lease lapsed to `unknown`; idempotent, so a retry or an overlapping run is safe."""
    return send_jobs_expire_leases()
