"""One question, one counterpart, one call: the evidence the agent may use (issue 4 section 5).

Sources, each with its own budget (settings EVIDENCE_BUDGET_RECORDS / _HUB / _FAQ):
- the counterpart's records and products (agent.knowledge.records over vendors.selectors; scoped to the counterpart
  in SQL),
- the FAQ store (agent.knowledge.faq),
- the LightRAG hub (agent.knowledge.hub; it routes the question to its workspaces).

Order: by source — records, then FAQ, then hub — and by score within a source. Scores of different sources are
on different scales, so they are never compared with each other; the counterpart's own records come first
because they are the most specific, curated FAQ answers before graph context.

Every item is masked (other vendors' names → `[다른 벤더]`, counted in mask_count); records too, since a record
body may name another vendor. Masking runs before de-duplication, so items are compared as the model sees them.
Two items are one when they share a reference, or when their normalised texts are at least
EVIDENCE_DEDUP_SIMILARITY alike and carry the same numbers (two prices differing by one digit stay two items);
the earlier one in the order is kept. Then two values for one subject are reconciled (`reconcile`): the
vendor's own record over shared knowledge, the newer over the older; the losing statement is not returned.

A source that raises is logged and named in `failed_sources`; the others still answer. A masking failure is not
a source failure: it propagates, because unmasked evidence must never be returned.
"""

import datetime
import logging
import re
import time
import unicodedata
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from rapidfuzz import fuzz

from agent.knowledge.masking import mask_evidence
from agent.knowledge.reconcile import evidence_reconcile
from agent.knowledge.types import EvidenceItem

logger = logging.getLogger(__name__)

SOURCE_ORDER = ("record", "faq", "hub")


@dataclass(frozen=True)
class EvidenceBudget:
    """How many items each source may contribute; 0 leaves a source out."""

    records: int
    hub: int
    faq: int

    @classmethod
    def from_settings(cls) -> "EvidenceBudget":
        return cls(
            records=settings.EVIDENCE_BUDGET_RECORDS, hub=settings.EVIDENCE_BUDGET_HUB, faq=settings.EVIDENCE_BUDGET_FAQ
        )


@dataclass(frozen=True)
class EvidenceResult:
    items: list[EvidenceItem]
    failed_sources: list[str] = field(default_factory=list)  # source kinds that raised, e.g. ["hub"]
    timings_ms: dict[str, float] = field(default_factory=dict)  # per source, and "mask"

    @property
    def mask_count(self) -> int:
        return sum(item.mask_count for item in self.items)

    def as_dict(self) -> dict:
        return {
            "items": [item.as_dict() for item in self.items],
            "failed_sources": list(self.failed_sources),
            "mask_count": self.mask_count,
            "timings_ms": dict(self.timings_ms),
        }


def _record_search(question: str, counterpart, limit: int, on) -> Callable[[], list[EvidenceItem]]:
    from agent.knowledge.records import vendor_records_search

    return lambda: vendor_records_search(vendor=counterpart, query=question, limit=limit, on=on)


def _faq_search(question: str, counterpart, limit: int, on) -> Callable[[], list[EvidenceItem]]:
    from agent.knowledge.faq import faq_search

    return lambda: faq_search(question, limit=limit)


def _hub_search(question: str, counterpart, limit: int, on) -> Callable[[], list[EvidenceItem]]:
    from agent.knowledge.hub import hub_search_start

    return hub_search_start(question, limit=limit, on=on)  # already running on the hub's loop thread


# Each source is started, then finished. The hub starts first: its search runs on its own loop thread while the
# records and the FAQ are searched in this one, so a call costs about the slower of the two, not their sum.
_STARTS: dict[str, Callable[..., Callable[[], list[EvidenceItem]]]] = {
    "hub": _hub_search,
    "record": _record_search,
    "faq": _faq_search,
}


def evidence_for(
    question: str, counterpart, *, budget: EvidenceBudget | None = None, on: datetime.date | None = None
) -> EvidenceResult:
    """Ordered, masked, de-duplicated evidence for `question` asked by `counterpart` (the resolved Vendor).

    `timings_ms` per source is the time it held this thread (starting it and waiting for it), so the hub's time
    is only what its search added after the records and the FAQ were done.
    """
    budget = budget or EvidenceBudget.from_settings()
    limits = {"record": budget.records, "faq": budget.faq, "hub": budget.hub}
    failed: list[str] = []
    timings: dict[str, float] = {}
    running: dict[str, Callable[[], list[EvidenceItem]]] = {}
    for source, start in _STARTS.items():
        if limits[source] > 0:
            with _held(timings, source):
                finish = _guarded(source, failed, start, question, counterpart, limits[source], on)
            if finish is not None:
                running[source] = finish
    collected: list[EvidenceItem] = []
    for source in SOURCE_ORDER:
        if source in running:
            with _held(timings, source):
                items = _guarded(source, failed, running[source]) or []
            collected.extend(sorted(items, key=lambda item: -item.score)[: limits[source]])  # the budget holds
    with _held(timings, "mask"):
        masked = mask_evidence(collected, counterpart=counterpart)
    items, _ = evidence_reconcile(_deduplicate(masked))
    return EvidenceResult(items=items, failed_sources=failed, timings_ms=timings)


@contextmanager
def _held(timings: dict[str, float], name: str):
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = round(timings.get(name, 0.0) + (time.perf_counter() - started) * 1000, 2)


def _guarded(source: str, failed: list[str], call, *arguments):
    """`call(*arguments)`, or None when it raises: the source is logged and named as failed, the others answer."""
    try:
        return call(*arguments)
    except Exception:
        logger.warning("Evidence source %s failed; answering from the others.", source, exc_info=True)
        failed.append(source)
        return None


_NON_WORD = re.compile(r"[\W_]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _comparable(text: str) -> tuple[str, tuple[str, ...]]:
    folded = unicodedata.normalize("NFKC", text).lower()
    numbers = tuple(number.replace(",", "") for number in _NUMBER.findall(folded))
    return _NON_WORD.sub("", folded), numbers


def _is_near_copy(form: tuple[str, tuple[str, ...]], kept_forms: list, threshold: float) -> bool:
    text, numbers = form
    return any(
        numbers == kept_numbers and fuzz.ratio(text, kept_text) >= threshold for kept_text, kept_numbers in kept_forms
    )


def _deduplicate(items: list[EvidenceItem]) -> list[EvidenceItem]:
    threshold = settings.EVIDENCE_DEDUP_SIMILARITY * 100
    kept: list[EvidenceItem] = []
    kept_forms: list[tuple[str, tuple[str, ...]]] = []
    seen_references: set[str] = set()  # of every item met, kept or dropped: one object is one item
    for item in items:
        form = _comparable(item.text)
        duplicate = item.reference in seen_references or _is_near_copy(form, kept_forms, threshold)
        seen_references.add(item.reference)
        if duplicate:
            continue
        kept.append(item)
        kept_forms.append(form)
    return kept
