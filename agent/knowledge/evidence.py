"""One question, one counterpart, one call: the evidence the agent may use (issue 4 section 5).

Sources, each with its own budget (settings EVIDENCE_BUDGET_RECORDS / _HUB / _FAQ):
- the counterpart's records and products (vendors.records; scoped to the counterpart in SQL),
- the FAQ store (agent.knowledge.faq),
- the LightRAG hub (agent.knowledge.hub; it routes the question to its workspaces).

Order: by source — records, then FAQ, then hub — and by score within a source. Scores of different sources are
on different scales, so they are never compared with each other; the counterpart's own records come first
because they are the most specific, curated FAQ answers before graph context.

Every item is masked (other vendors' names → `[다른 벤더]`, counted in mask_count); records too, since a record
body may name another vendor. Masking runs before de-duplication, so items are compared as the model sees them.
Two items are one when they share a reference, or when their normalised texts are at least
EVIDENCE_DEDUP_SIMILARITY alike and carry the same numbers (two prices differing by one digit stay two items);
the earlier one in the order is kept.

A source that raises is logged and named in `failed_sources`; the others still answer. A masking failure is not
a source failure: it propagates, because unmasked evidence must never be returned.
"""

import logging
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from rapidfuzz import fuzz

from agent.knowledge.masking import mask_evidence
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


def _record_search(question: str, counterpart, limit: int) -> list[EvidenceItem]:
    from vendors.records import vendor_records_search

    return vendor_records_search(vendor=counterpart, query=question, limit=limit)


def _faq_search(question: str, counterpart, limit: int) -> list[EvidenceItem]:
    from agent.knowledge.faq import faq_search

    return faq_search(question, limit=limit)


def _hub_search(question: str, counterpart, limit: int) -> list[EvidenceItem]:
    from agent.knowledge.hub import hub_search

    return hub_search(question, limit=limit)


_SEARCHES: dict[str, Callable[[str, object, int], list[EvidenceItem]]] = {
    "record": _record_search,
    "faq": _faq_search,
    "hub": _hub_search,
}


def evidence_for(question: str, counterpart, *, budget: EvidenceBudget | None = None) -> EvidenceResult:
    """Ordered, masked, de-duplicated evidence for `question` asked by `counterpart` (the resolved Vendor)."""
    budget = budget or EvidenceBudget.from_settings()
    limits = {"record": budget.records, "faq": budget.faq, "hub": budget.hub}
    collected: list[EvidenceItem] = []
    failed: list[str] = []
    timings: dict[str, float] = {}
    for source in SOURCE_ORDER:
        limit = limits[source]
        if limit <= 0:
            continue
        started = time.perf_counter()
        try:
            items = _SEARCHES[source](question, counterpart, limit)
        except Exception:
            logger.warning("Evidence source %s failed; answering from the others.", source, exc_info=True)
            failed.append(source)
            items = []
        timings[source] = round((time.perf_counter() - started) * 1000, 2)
        # The budget holds even if a source returns more than it was asked for.
        collected.extend(sorted(items, key=lambda item: -item.score)[:limit])
    started = time.perf_counter()
    masked = mask_evidence(collected, counterpart=counterpart)
    timings["mask"] = round((time.perf_counter() - started) * 1000, 2)
    return EvidenceResult(items=_deduplicate(masked), failed_sources=failed, timings_ms=timings)


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
