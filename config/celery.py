"""Celery application and the one task decorator every app's `tasks.py` uses.

JSON only, beat schedules from the database (see settings). `task(...)` declares each task's name, queue, soft and
hard time limits, late acknowledgement and retry policy in one place, and runs the retry the same way with and
without a broker. `task_by_name(name)` finds a task by the name it was declared with, for an app that hands work to
a higher app without importing it. `TRANSIENT_ERRORS` is the one split between failures worth another attempt and
terminal ones.
"""

import logging
import os
import threading

import redis.exceptions
from celery import Celery, Task
from celery.utils.time import get_exponential_backoff_interval
from django.db import InterfaceError, OperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("vendor_cs_agent")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

logger = logging.getLogger(__name__)


class TransientError(Exception):
    """Base of an app's own errors that a later attempt may not repeat (an LLM timeout, a 429, a 5xx)."""


# Transient: the database or Redis was unreachable or gave up on a conflict (connection loss, serialization failure
# and deadlock are all OperationalError), and errors an app marks as TransientError. Everything else is terminal
# and never retried: domain errors, validation, integrity and data errors, bugs.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    OperationalError,
    InterfaceError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    TransientError,
)

# Back-off of a retry: full jitter over 5 s · 2^retries, at most a minute.
RETRY_BACKOFF_SECONDS = 5
RETRY_BACKOFF_MAX_SECONDS = 60
DEFAULT_MAX_RETRIES = 3

# Celery's discovery returns at once, having imported nothing, while another thread of the process is in it.
_TASK_DISCOVERY_LOCK = threading.Lock()

# Queue of each task, filled by `task(...)` and read by `task_route` (Celery's own `queue` task attribute is
# deprecated in favour of routes).
TASK_QUEUES: dict[str, str] = {}


def is_transient(error: BaseException) -> bool:
    return isinstance(error, TRANSIENT_ERRORS)


class AppTask(Task):
    """Retries transient errors with back-off: through the broker in a worker, at once in the caller without one."""

    retry_transient = True

    def __call__(self, *args, **kwargs):
        try:
            return super().__call__(*args, **kwargs)
        except TRANSIENT_ERRORS as error:
            request = self.request
            if not self.retry_transient or request.called_directly or request.retries >= self.max_retries:
                raise
            logger.warning("%s: transient %s, retry %d", self.name, type(error).__name__, request.retries + 1)
            if request.is_eager:
                # In-process tasks (no broker): retry here and now. Celery would raise `Retry` to whoever
                # dispatched the task, and a countdown would stall that caller.
                retried = self.apply(args=args, kwargs=kwargs, retries=request.retries + 1)
                return retried.get(disable_sync_subtasks=False)  # already run: nothing to wait for
            countdown = get_exponential_backoff_interval(
                factor=RETRY_BACKOFF_SECONDS,
                retries=request.retries,
                maximum=RETRY_BACKOFF_MAX_SECONDS,
                full_jitter=True,
            )
            raise self.retry(exc=error, countdown=countdown) from error


def task(
    name: str,
    *,
    queue: str,
    soft_time_limit: int,
    time_limit: int,
    acks_late: bool = False,
    retry_transient: bool = True,
    max_retries: int = DEFAULT_MAX_RETRIES,
):
    """Declare a Celery task: `@task("agent.process_question", queue="agent", soft_time_limit=…, time_limit=…)`.

    `acks_late=True` only for a task that is safe to run twice (it claims its row by compare-and-set): the message
    is acknowledged after the run, so a worker that dies mid-run leaves it to be delivered again. Periodic sweeps
    stay acknowledged early: the next beat tick runs them again, and a redelivery long after would be stale.
    Transient errors are retried up to `max_retries` times unless `retry_transient=False`; terminal ones never are.
    """
    if soft_time_limit >= time_limit:
        raise ValueError(f"{name}: the soft time limit must be below the hard one")

    def register(function):
        TASK_QUEUES[name] = queue
        return app.task(
            function,
            base=AppTask,
            name=name,
            soft_time_limit=soft_time_limit,
            time_limit=time_limit,
            acks_late=acks_late,
            max_retries=max_retries,
            retry_transient=retry_transient,
        )

    return register


def task_by_name(name: str) -> Task:
    """The task declared as `name`, for a caller below the app that declares it (conversations handing a question to
    the agent): the caller names the task instead of importing the task module, which imports the higher app.

    Its `delay()` honours `CELERY_TASK_ALWAYS_EAGER` (run here, in-process, without a broker) as a call on the task
    itself would; `app.send_task` would always go to the broker. A process that has not imported the declaring
    `tasks` module (a web process, a management command) registers every installed app's tasks first: a task is
    registered when its module is imported, and workers import them all at start.
    """
    if name not in app.tasks:
        with _TASK_DISCOVERY_LOCK:
            app.autodiscover_tasks(force=True)
    return app.tasks[name]


def task_route(name, args, kwargs, options, task=None, **extra):
    """Celery router (`CELERY_TASK_ROUTES`): the queue a task was declared with; others go to the default queue."""
    queue = TASK_QUEUES.get(name)
    return {"queue": queue} if queue else None
