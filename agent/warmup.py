"""Per-process start-up of a worker: the name indexes built before the first task, then `gc.freeze()`.

A Celery prefork child (and a gunicorn worker, `deploy/gunicorn.conf.py`) would otherwise build the vendor
resolution index, the masker, the hub's proper-noun lexicon and the verification name indexes inside its first
question. Built here, they are then moved out of the garbage collector's generations with `gc.freeze()`: tens of
thousands of long-lived objects that a full collection would otherwise walk again and again (~60 ms pauses with
10,000 vendors, docs/benchmarks.md "Verification engine"). The indexes stay revision-checked as before — a rebuilt
one is an ordinary object again.

The morphological analyser is loaded one step earlier, in the main process of a worker that answers questions,
before it forks the pool (`celery_worker_init`): ~500 MB that every child then shares copy-on-write instead of
loading its own copy for seconds inside its first question (docs/benchmarks.md "Analyser preload").
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


def celery_worker_init(sender, **kwargs) -> None:
    """`worker_init`: runs in a worker's main process before it creates the prefork pool. A worker consuming the
    queue questions are answered on loads the morphological analyser here (AGENT_PRELOAD_ANALYSER): its children,
    and every child forked later to replace one (`--max-tasks-per-child`), start with it loaded and share its
    pages. A delivery or monitoring worker never reads a question and does not load it. A failed load is logged,
    never fatal: each child then loads the analyser on its first question, as without the preload.

    Then every worker freezes what its main process holds: a child's collections (its warm-up's first) would
    otherwise write to the header of each object inherited from the parent and so copy its page, ~50 MB per child
    (docs/benchmarks.md "Analyser preload")."""
    from django.conf import settings

    from agent.llm import morphology
    from agent.tasks import process_question
    from config.celery import TASK_QUEUES

    if settings.AGENT_PRELOAD_ANALYSER and TASK_QUEUES[process_question.name] in sender.app.amqp.queues.consume_from:
        started = time.perf_counter()
        try:
            morphology.analyser_load()
        except Exception:
            logger.exception("loading the morphological analyser before the fork failed")
        else:
            logger.info("morphological analyser loaded before the fork in %.1f s", time.perf_counter() - started)
    gc.collect()
    gc.freeze()
