"""Celery application: JSON only, time limits on every task, beat schedules from the database."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("vendor_cs_agent")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
