"""Domain-term counts: each document's nouns are counted once, when its text or state changes, and the counts always
equal a full recount over the stored documents (retired ones not counted)."""

from collections import Counter

import pytest

from agent.knowledge import hub_terms
from agent.knowledge.hub import (
    hub_document_delete,
    hub_document_ingest,
    hub_document_replace,
    hub_document_restore,
    hub_document_retire,
)
from agent.knowledge.hub_runtime import runtime_reset
from agent.knowledge.hub_terms import document_nouns, domain_terms_get
from agent.models import KnowledgeDocument, KnowledgeTermCount
from agent.tests.conftest import hub_storage_use

pytestmark = pytest.mark.django_db

SETTLEMENT = "# 정산 일정\n\n정산서는 매월 3일에 확정되고 세금계산서는 5일까지 발행합니다.\n"
TAX_INVOICE = "# 세금계산서\n\n세금계산서 금액이 정산서와 다르면 반려됩니다.\n"
RETURNS = "# 반품\n\n반품 회수는 목요일에 출발합니다.\n"
RETURNS_WITH_INVOICE = "# 반품\n\n반품 금액은 세금계산서와 별도로 정산서에서 차감합니다.\n"


@pytest.fixture
def hub_files(settings, tmp_path):
    yield hub_storage_use(settings, tmp_path, "files")
    runtime_reset()


def _recount() -> dict[str, int]:
    """What the counts must be: every stored, not retired document's nouns, counted again from its text."""
    counts: Counter = Counter()
    for document in KnowledgeDocument.objects.exclude(status=KnowledgeDocument.Status.RETIRED):
        counts.update(document_nouns(document.content))
    return dict(counts)


def _kept() -> dict[str, int]:
    return dict(KnowledgeTermCount.objects.filter(document_count__gt=0).values_list("name", "document_count"))


def test_a_noun_two_documents_share_is_a_domain_term_and_one_of_a_single_document_is_not(hub_files):
    hub_document_ingest(workspace="settlement", title="정산", content=SETTLEMENT)
    hub_document_ingest(workspace="settlement", title="세금계산서", content=TAX_INVOICE)

    terms = domain_terms_get()

    assert {"정산서", "세금계산서"} <= terms
    assert "확정" not in terms  # in one document only
    assert _kept() == _recount()


def test_the_counts_follow_replace_retire_restore_and_delete(hub_files):
    settlement = hub_document_ingest(workspace="settlement", title="정산", content=SETTLEMENT)
    returns = hub_document_ingest(workspace="returns", title="반품", content=RETURNS)
    assert "반품" not in domain_terms_get() and "세금계산서" not in domain_terms_get()

    returns = hub_document_replace(document=returns, content=RETURNS_WITH_INVOICE)
    assert _kept() == _recount()
    assert "세금계산서" in domain_terms_get()  # the corrected text shares it with the settlement document

    hub_document_retire(document=settlement)
    assert _kept() == _recount()
    assert "세금계산서" not in domain_terms_get()  # a retired document counts no noun

    settlement = hub_document_restore(document=KnowledgeDocument.objects.get(pk=settlement.pk))
    assert _kept() == _recount()
    assert "세금계산서" in domain_terms_get()

    hub_document_delete(document=returns)
    assert _kept() == _recount()
    assert "세금계산서" not in domain_terms_get()


def test_an_ingest_extracts_only_its_own_text(hub_files, monkeypatch):
    hub_document_ingest(workspace="settlement", title="정산", content=SETTLEMENT)
    hub_document_ingest(workspace="settlement", title="세금계산서", content=TAX_INVOICE)
    domain_terms_get()  # the (empty) catalogue is read once
    extracted = []
    real = hub_terms.terms_extract
    monkeypatch.setattr(hub_terms, "terms_extract", lambda text, *args: extracted.append(text) or real(text, *args))

    hub_document_ingest(workspace="returns", title="반품", content=RETURNS)

    assert len(extracted) == 1 and "반품 회수는 목요일" in extracted[0]


def test_documents_stored_before_the_counts_existed_are_counted_once(hub_files):
    hub_document_ingest(workspace="settlement", title="정산", content=SETTLEMENT)
    hub_document_ingest(workspace="settlement", title="세금계산서", content=TAX_INVOICE)
    KnowledgeDocument.objects.update(counted_terms=None)  # as the migration leaves existing rows
    KnowledgeTermCount.objects.all().delete()

    assert "세금계산서" in domain_terms_get()
    assert "세금계산서" in domain_terms_get()  # asking again counts nothing twice
    assert _kept() == _recount()
