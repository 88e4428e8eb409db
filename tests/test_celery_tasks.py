"""Every task is declared with the one decorator: explicit name, queue, time limits; transient errors retried with
a bound, terminal ones never; without a broker the retry runs in the caller instead of raising `Retry` at it. A
lower app finds a higher app's task by its name, in any process."""

import os
import subprocess
import sys
import textwrap

import pytest
from django.conf import settings
from django.db import IntegrityError, OperationalError

import agent.tasks
import delivery.tasks
import monitoring.tasks
from agent.llm.base import LlmPermanentError, LlmTransientError
from config.celery import TASK_QUEUES, AppTask, app, is_transient, task, task_by_name
from conversations.question_services import PROCESS_QUESTION_TASK

APP_TASKS = {
    "agent.process_question": "agent",
    "agent.sweep_questions": "agent",
    "agent.training_job_run": "default",
    "delivery.expire_send_leases": "delivery",
    "monitoring.run_monitor": "monitoring",
    "monitoring.notify_alerts": "monitoring",
}
calls: list[str] = []


@task("tests.flaky", queue="default", soft_time_limit=5, time_limit=10, max_retries=2)
def flaky(failures: list[str]) -> str:
    """Raises the named errors one per call (a shared list), then answers."""
    calls.append("call")
    if len(calls) <= len(failures):
        raise {"operational": OperationalError, "llm": LlmTransientError, "integrity": IntegrityError}[
            failures[len(calls) - 1]
        ]("injected")
    return "done"


@task("tests.no_retry", queue="default", soft_time_limit=5, time_limit=10, retry_transient=False)
def no_retry() -> None:
    calls.append("call")
    raise OperationalError("injected")


@pytest.fixture(autouse=True)
def _reset_calls():
    calls.clear()


def test_every_task_of_the_apps_is_declared_with_the_decorator():
    apps = {"agent", "delivery", "monitoring"}
    declared = {name: app.tasks[name] for name in app.tasks if name.split(".")[0] in apps}
    assert set(declared) == set(APP_TASKS)
    modules = {agent.tasks, delivery.tasks, monitoring.tasks}
    assert {registered.__module__ for registered in declared.values()} == {module.__name__ for module in modules}
    for name, registered in declared.items():
        assert isinstance(registered, AppTask), name
        assert 0 < registered.soft_time_limit < registered.time_limit, name
        assert TASK_QUEUES[name] == APP_TASKS[name]
        assert app.amqp.router.route({}, name)["queue"].name == APP_TASKS[name]
    # Only tasks safe to deliver twice: the question run claims its question by compare-and-set, the training job
    # takes its pending rows under SKIP LOCKED.
    assert sorted(name for name, registered in declared.items() if registered.acks_late) == [
        "agent.process_question",
        "agent.training_job_run",
    ]


def test_conversations_names_the_task_the_agent_declares():
    assert task_by_name(PROCESS_QUESTION_TASK).run is agent.tasks.process_question.run


def test_a_task_is_found_by_name_in_a_process_that_never_imported_its_module():
    """A web process has not imported `agent.tasks` when it accepts its first questions, perhaps in several threads
    at once (runserver's); dispatching by name must still find the task in each (conversations cannot import the
    agent to make sure it is registered). Celery's discovery is slowed down so that the threads meet in it."""
    code = textwrap.dedent(
        """
        import sys, threading, time, django
        django.setup()
        import celery.loaders.base as loaders
        from config.celery import task_by_name
        from conversations.question_services import PROCESS_QUESTION_TASK
        assert "agent.tasks" not in sys.modules
        find_related_module = loaders.find_related_module
        loaders.find_related_module = lambda *args: time.sleep(0.02) or find_related_module(*args)
        barrier, found = threading.Barrier(8), []
        def look_up():
            barrier.wait()
            found.append(task_by_name(PROCESS_QUESTION_TASK).run.__module__)
        threads = [threading.Thread(target=look_up) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(len(found), *sorted(set(found)))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=settings.BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "8 agent.tasks", result.stderr


def test_a_transient_error_is_retried_in_the_caller_without_a_broker():
    assert flaky.delay(["operational", "llm"]).get() == "done"
    assert len(calls) == 3


def test_retries_are_bounded_and_then_the_error_is_raised():
    with pytest.raises(OperationalError):
        flaky.delay(["operational"] * 5)
    assert len(calls) == 3  # the first call and max_retries=2


def test_a_terminal_error_is_never_retried():
    with pytest.raises(IntegrityError):
        flaky.delay(["integrity"])
    assert len(calls) == 1


def test_a_task_can_opt_out_of_retries():
    with pytest.raises(OperationalError):
        no_retry.delay()
    assert len(calls) == 1


def test_the_transient_terminal_split():
    assert is_transient(OperationalError()) and is_transient(LlmTransientError())
    assert not any(is_transient(error) for error in (LlmPermanentError(), IntegrityError(), ValueError()))


def test_a_soft_limit_must_be_below_the_hard_one():
    with pytest.raises(ValueError):
        task("tests.bad_limits", queue="default", soft_time_limit=10, time_limit=10)
