"""gunicorn settings of the web process (compose `web`, systemd `vcs-web.service`).

Sync workers: a request is one upload, one admin page or one health check, all short; `GUNICORN_WORKERS` sets how
many (docs/deployment.md "Memory per process"). Each worker builds the name indexes once after the fork and
freezes them out of the garbage collector's generations (`agent.warmup`).
"""

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
worker_class = "sync"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
max_requests = 2000  # recycle a worker now and then; jitter keeps them from restarting together
max_requests_jitter = 200
accesslog = "-"
errorlog = "-"


def post_worker_init(worker):
    from django.db import connections

    from agent.warmup import process_warm

    try:
        process_warm()
    except Exception:  # the first request then builds what is missing itself
        worker.log.exception("warming up the web worker failed")
    finally:
        connections.close_all()
