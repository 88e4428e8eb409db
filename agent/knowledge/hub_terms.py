"""Domain terms of the local extractor: the common nouns at least two hub documents share, or a product name holds.

Each document's nouns are extracted once, when its text or state changes, and kept on the row
(`KnowledgeDocument.counted_terms`); `KnowledgeTermCount` holds per noun the number of documents counting it. So
an ingest reads one indexed table instead of extracting every stored document again (which made loading N
documents cost N² extractions). A retired document counts no noun; a deleted one gives its counts back.
"""

import threading

from django.db import transaction
from django.db.models import F

from agent.knowledge.korean_terms import PROPER_NOUN_KINDS, terms_extract
from agent.models import KnowledgeDocument, KnowledgeTermCount
from vendors.selectors import product_names, product_table_revision

MIN_DOCUMENTS = 2
_NAME_LIMIT = KnowledgeTermCount._meta.get_field("name").max_length
_BATCH = 500  # names per IN (…) list: far below any database's parameter limit


def document_nouns(content: str) -> list[str]:
    """The common nouns of a text (no vendor or brand names: those are entities anyway), sorted."""
    return sorted(
        {
            term.name
            for term in terms_extract(content)
            if term.kind not in PROPER_NOUN_KINDS and len(term.name) <= _NAME_LIMIT
        }
    )


def document_terms_count(document: KnowledgeDocument, *, counted: bool) -> None:
    """Make the counts hold the document's current nouns (`counted`) or none (retired, about to be deleted).

    The caller holds the document's row lock or created the row in its transaction, so two changes of one
    document never interleave; counts of a noun other documents change at the same time are row updates
    (`F() ± 1`), which the database serialises."""
    nouns = document_nouns(document.content) if counted else []
    before = set(document.counted_terms or [])
    _counts_change(added=set(nouns) - before, removed=before - set(nouns))
    document.counted_terms = nouns
    KnowledgeDocument.objects.filter(pk=document.pk).update(counted_terms=nouns)


def _counts_change(*, added: set[str], removed: set[str]) -> None:
    added_names, removed_names = sorted(added), sorted(removed)
    for start in range(0, len(added_names), _BATCH):
        batch = added_names[start : start + _BATCH]
        KnowledgeTermCount.objects.bulk_create([KnowledgeTermCount(name=name) for name in batch], ignore_conflicts=True)
        KnowledgeTermCount.objects.filter(name__in=batch).update(document_count=F("document_count") + 1)
    for start in range(0, len(removed_names), _BATCH):
        batch = removed_names[start : start + _BATCH]
        KnowledgeTermCount.objects.filter(name__in=batch, document_count__gt=0).update(
            document_count=F("document_count") - 1
        )


def uncounted_documents_count() -> int:
    """Count the documents stored before the counts existed (their `counted_terms` is null); returns how many.

    Compare-and-set per row: a document another process counted in the meantime is not counted twice."""
    counted = 0
    pending = KnowledgeDocument.objects.filter(counted_terms__isnull=True).values_list("pk", "content", "status")
    for pk, content, status in pending.iterator():
        nouns = [] if status == KnowledgeDocument.Status.RETIRED else document_nouns(content)
        with transaction.atomic():
            if KnowledgeDocument.objects.filter(pk=pk, counted_terms__isnull=True).update(counted_terms=nouns):
                _counts_change(added=set(nouns), removed=set())
                counted += 1
    return counted


_catalogue_lock = threading.Lock()
_catalogue_state = {"signature": None, "terms": frozenset()}


def catalogue_terms() -> frozenset[str]:
    """The common nouns of the catalogue's product names, extracted again only when the products change."""
    signature = product_table_revision()
    with _catalogue_lock:
        if _catalogue_state["signature"] != signature:
            _catalogue_state["terms"] = frozenset(noun for name in product_names() for noun in document_nouns(name))
            _catalogue_state["signature"] = signature
        return _catalogue_state["terms"]


def domain_terms_get() -> frozenset[str]:
    """The common nouns the local extractor may make entities of: those found in at least two stored documents
    (any workspace, retired ones not counted) or in a product name of the catalogue. A word of one document only
    is rarely a thing (`정확`, `다른`), a word two documents share usually is (`세금계산서`, `물류센터`). Only
    ingestion asks for it."""
    uncounted_documents_count()
    shared = KnowledgeTermCount.objects.filter(document_count__gte=MIN_DOCUMENTS).values_list("name", flat=True)
    return frozenset(shared) | catalogue_terms()
