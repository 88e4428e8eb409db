"""Thin Celery entry points of the monitor; both are idempotent and safe to run at any moment."""

from celery import shared_task

from monitoring.monitor import monitor_run
from monitoring.webhook import alerts_notify


@shared_task(name="monitoring.run_monitor", soft_time_limit=50, time_limit=60)
def run_monitor() -> dict:
    report = monitor_run()
    return {"business_time": report.business_time, "raised": report.raised, "closed": report.closed}


@shared_task(name="monitoring.notify_alerts", soft_time_limit=50, time_limit=60)
def notify_alerts() -> dict:
    return alerts_notify()
