"""Worker start-up: name indexes built before the first task, then the garbage collector's view frozen."""

import gc

import pytest
from celery.signals import worker_process_init

from agent import warmup
from agent.knowledge import masking
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
