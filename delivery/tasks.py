"""Thin Celery entry points of the delivery app."""

from celery import shared_task
from django.db import OperationalError

from delivery.services import send_jobs_expire_leases


@shared_task(
    name="delivery.expire_send_leases",
    soft_time_limit=50,
    time_limit=60,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=3,
)
def expire_send_leases() -> int:
    """Move send jobs whose lease lapsed to `unknown`; idempotent, so a retry or an overlapping run is safe."""
    return send_jobs_expire_leases()
