"""Thin Celery entry points of the monitor; both are idempotent and safe to run at any moment."""

from config.celery import task
from monitoring.monitor import monitor_run
from monitoring.services import NOTIFY_ALERTS_TASK
from monitoring.webhook import alerts_notify


@task("monitoring.run_monitor", queue="monitoring", soft_time_limit=50, time_limit=60)
def run_monitor() -> dict:
    report = monitor_run()
    return {"business_time": report.business_time, "raised": report.raised, "closed": report.closed}


@task(NOTIFY_ALERTS_TASK, queue="monitoring", soft_time_limit=50, time_limit=60)
def notify_alerts() -> dict:
    return alerts_notify()
