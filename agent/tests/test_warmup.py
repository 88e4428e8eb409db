"""Worker start-up: the analyser loaded before the fork, name indexes built before the first task, then the garbage
collector's view frozen."""

import gc
from types import SimpleNamespace

import pytest
from celery import Celery
from celery.signals import worker_init, worker_process_init

from agent import apps, warmup
from agent.knowledge import masking
from agent.llm import morphology
from vendors import selectors
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def unfrozen():
    yield
    gc.unfreeze()


def test_warming_a_process_builds_the_name_indexes_and_freezes_them(unfrozen):
    VendorFactory(code="1001", name="대한물산")
    selectors._cached_index = None
    masking._masker_cached = None

    timings = warmup.process_warm()

    assert set(timings) == {"resolution_index", "masker", "hub_lexicon", "verification_names"}
    assert selectors._cached_index is not None and masking._masker_cached is not None
    assert selectors.vendor_index_get().resolve("(1001) 대한물산", typo_threshold=0.8, candidate_limit=3).vendor_code
    assert gc.get_freeze_count() > 0


def test_every_celery_prefork_child_warms_up_after_the_fork():
    receivers = [receiver() for _, receiver in worker_process_init.receivers]
    assert warmup.celery_process_init in receivers


def test_every_celery_worker_runs_the_preload_in_its_main_process_after_the_configuration_check():
    receivers = [receiver() for _, receiver in worker_init.receivers]
    assert warmup.celery_worker_init in receivers
    assert receivers.index(warmup.celery_worker_init) > receivers.index(apps._worker_configuration_require)


def _worker(queues: list[str]):
    """What `worker_init` passes: the worker, whose app consumes the queues of its `-Q`."""
    app = Celery("probe", set_as_current=False)
    app.amqp.queues.select(queues)
    return SimpleNamespace(app=app)


@pytest.fixture
def loads(monkeypatch):
    calls = []
    monkeypatch.setattr(morphology, "analyser_load", lambda: calls.append("load"))
    return calls


@pytest.mark.parametrize("queues", [["agent"], ["default", "agent", "delivery", "monitoring"]])
def test_a_worker_consuming_the_agent_queue_loads_the_analyser_before_the_fork(queues, loads, settings, unfrozen):
    settings.AGENT_PRELOAD_ANALYSER = True

    warmup.celery_worker_init(sender=_worker(queues))

    assert loads == ["load"]
    assert gc.get_freeze_count() > 0


@pytest.mark.parametrize("queues", [["delivery"], ["default", "monitoring"]])
def test_a_worker_that_answers_no_question_does_not_load_it(queues, loads, settings, unfrozen):
    settings.AGENT_PRELOAD_ANALYSER = True

    warmup.celery_worker_init(sender=_worker(queues))

    assert loads == []
    assert gc.get_freeze_count() > 0  # what the main process holds is frozen all the same


def test_the_preload_can_be_turned_off(loads, settings, unfrozen):
    settings.AGENT_PRELOAD_ANALYSER = False

    warmup.celery_worker_init(sender=_worker(["agent"]))

    assert loads == []


def test_a_failed_preload_leaves_the_worker_starting(monkeypatch, settings, unfrozen):
    def broken():
        raise OSError("model file missing")

    monkeypatch.setattr(morphology, "analyser_load", broken)
    settings.AGENT_PRELOAD_ANALYSER = True

    warmup.celery_worker_init(sender=_worker(["agent"]))

    assert gc.get_freeze_count() > 0
