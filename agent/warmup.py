"""Per-process start-up of a worker: the name indexes built before the first task, then `gc.freeze()`.

A Celery prefork child (and a gunicorn worker, `deploy/gunicorn.conf.py`) would otherwise build the vendor
resolution index, the masker, the hub's proper-noun lexicon and the verification name indexes inside its first
question. Built here, they are then moved out of the garbage collector's generations with `gc.freeze()`: tens of
thousands of long-lived objects that a full collection would otherwise walk again and again (~60 ms pauses with
10,000 vendors, docs/benchmarks.md "Verification engine"). The indexes stay revision-checked as before — a rebuilt
one is an ordinary object again.
"""

import gc
import logging
import time

logger = logging.getLogger(__name__)


def process_warm() -> dict[str, float]:
    """Build the name indexes of this process and freeze what is alive; returns the time each step took (ms)."""
    from agent.knowledge.hub import lexicon_get
    from agent.knowledge.masking import vendor_masker
    from agent.pipeline import verification_names
    from vendors.models import Vendor
    from vendors.selectors import vendor_index_get

    timings = {}
    for name, build in (
        ("resolution_index", vendor_index_get),
        ("masker", vendor_masker),
        ("hub_lexicon", lambda: lexicon_get(max_age_seconds=0)),
        ("verification_names", lambda: _other_vendor_check_prepare(verification_names(Vendor(name="", aliases=[])))),
    ):
        started = time.perf_counter()
        build()
        timings[name] = round((time.perf_counter() - started) * 1000, 1)
    gc.collect()
    gc.freeze()
    logger.info("worker warmed up: %s, %s objects frozen", timings, gc.get_freeze_count())
    return timings


def _other_vendor_check_prepare(names) -> None:
    from agent.verification.other_vendors import other_vendor_check_prepare

    other_vendor_check_prepare(names.other_vendors, names.brands.names)


def celery_process_init(**kwargs) -> None:
    """`worker_process_init`: runs in each prefork child after the fork. A failure is logged, never fatal — the
    first task then builds what is missing itself."""
    from django.db import connections

    try:
        process_warm()
    except Exception:
        logger.exception("warming up the worker process failed")
    finally:
        connections.close_all()  # the child's first task opens its own connections
