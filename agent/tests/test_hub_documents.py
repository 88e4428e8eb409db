"""Removing and correcting hub documents: retire, restore, replace and delete take a document's chunks, entities
and relations out of LightRAG on every storage, keep what other documents still say, and leave a version history."""

import pytest

from agent.knowledge import hub_runtime
from agent.knowledge.hub import (
    KnowledgeHubError,
    hub_document_delete,
    hub_document_ingest,
    hub_document_replace,
    hub_document_restore,
    hub_document_retire,
    hub_search,
)
from agent.knowledge.hub_runtime import runtime_get, runtime_reset
from agent.models import KnowledgeDocument, KnowledgeDocumentVersion, KnowledgeWorkspace
from monitoring.models import AuditEvent

pytestmark = pytest.mark.django_db

WRONG_FEE = """# 반품 회수비

단순 변심 반품의 회수 택배비는 1건당 7,700원이며 협력사가 부담합니다.
"""
RIGHT_FEE = """# 반품 회수비

단순 변심 반품의 회수 택배비는 1건당 4,400원이며 협력사가 부담합니다.
"""
DEADLINE = """# 반품 기한

반품은 상품 수령 후 7일 이내에 협력사 포털에서 신청해야 합니다.
"""
SHARED_PARAGRAPH = "회수 택배는 평일 오후 2시까지 접수된 건만 당일 수거합니다."


def _texts(question: str) -> str:
    return "\n".join(item.text for item in hub_search(question, workspaces=["returns"], limit=20))


def _stored(slug: str, revision: int) -> dict:
    """Everything the workspace's LightRAG stores hold, as text: chunks, node and edge properties."""
    runtime = runtime_get()

    async def read():
        async with runtime.workspace(slug, revision) as rag:
            graph = rag.chunk_entity_relation_graph
            nodes, edges = await graph.get_all_nodes(), await graph.get_all_edges()
            chunk_ids = {
                source for item in nodes + edges for source in str(item.get("source_id", "")).split("<SEP>") if source
            }
            chunks = [row for row in await rag.text_chunks.get_by_ids(sorted(chunk_ids)) if row]
            return {"nodes": nodes, "edges": edges, "chunks": chunks}

    return runtime.call(read(), timeout=30)


def _revision(slug="returns") -> int:
    return KnowledgeWorkspace.objects.get(slug=slug).revision


def test_replacing_a_document_takes_the_wrong_text_out_of_chunks_entities_and_relations(hub, admin_user):
    """The corrected upload replaces the wrong one: the old amount is no longer evidence anywhere, the new one is;
    the revision moves, the old text stays in the version history and the change is audited."""
    document = hub_document_ingest(workspace="returns", title="반품 회수비", content=WRONG_FEE, actor="test")
    assert "7,700원" in _texts("반품 회수 택배비는 얼마인가요?")

    replaced = hub_document_replace(document=document, content=RIGHT_FEE, actor=admin_user)

    assert replaced.pk == document.pk and replaced.status == KnowledgeDocument.Status.INGESTED
    found = _texts("반품 회수 택배비는 얼마인가요?")
    assert "4,400원" in found and "7,700원" not in found
    stored = _stored("returns", _revision())
    assert "7,700" not in repr(stored), "the replaced text must leave every store"
    assert _revision() == 2
    versions = list(KnowledgeDocumentVersion.objects.filter(document_ref=document.pk).order_by("id"))
    assert [version.reason for version in versions] == ["created", "replaced"]
    assert "7,700원" in versions[0].content and "4,400원" in versions[1].content
    assert versions[1].actor == admin_user.get_username()
    audit = AuditEvent.objects.get(action="knowledge.document.replace")
    assert audit.actor_kind == "staff" and audit.data["before"]["chars"] == len(WRONG_FEE.strip())


def test_retiring_keeps_what_other_documents_say_and_restoring_brings_it_back(hub):
    """Retiring one document removes its sentences, also from entities it shares with another document (`반품`),
    which keep the other document's sentences; restore ingests it again."""
    fee = hub_document_ingest(workspace="returns", title="회수비", content=WRONG_FEE, actor="test")
    hub_document_ingest(workspace="returns", title="반품 기한", content=DEADLINE, actor="test")

    hub_document_retire(document=fee, actor="test")

    fee.refresh_from_db()
    assert fee.status == KnowledgeDocument.Status.RETIRED
    assert "7,700" not in _texts("반품 회수 택배비는 얼마인가요?")
    assert "7일 이내" in _texts("반품 기한은 며칠인가요?")
    stored = _stored("returns", _revision())
    assert "7,700" not in repr(stored)
    shared = next(node for node in stored["nodes"] if node["id"] == "반품")
    assert "7일 이내" in shared["description"] and f"doc-{fee.pk}:" not in shared["file_path"]
    assert hub_document_retire(document=fee, actor="test").status == KnowledgeDocument.Status.RETIRED  # no-op
    assert _revision() == 3

    restored = hub_document_restore(document=fee, actor="test")
    assert restored.status == KnowledgeDocument.Status.INGESTED
    assert "7,700원" in _texts("반품 회수 택배비는 얼마인가요?")
    reasons = list(KnowledgeDocumentVersion.objects.filter(document_ref=fee.pk).values_list("reason", flat=True))
    assert sorted(reasons) == ["created", "restored", "retired"]
    with pytest.raises(KnowledgeHubError):
        hub_document_restore(document=restored, actor="test")


def test_deleting_removes_the_row_and_everything_in_the_hub_but_keeps_the_text_as_a_version(hub):
    document = hub_document_ingest(workspace="returns", title="회수비", content=WRONG_FEE, actor="test")
    pk = document.pk

    hub_document_delete(document=document, actor="test")

    assert not KnowledgeDocument.objects.filter(pk=pk).exists()
    stored = _stored("returns", _revision())
    assert stored == {"nodes": [], "edges": [], "chunks": []}
    assert _texts("반품 회수 택배비") == ""
    version = KnowledgeDocumentVersion.objects.get(document_ref=pk, reason="deleted")
    assert version.reason == "deleted" and "7,700원" in version.content and version.document is None
    assert AuditEvent.objects.filter(action="knowledge.document.delete", target_id=str(pk)).exists()


def test_a_paragraph_two_documents_share_stays_when_one_of_them_goes(hub):
    """The same paragraph in two documents is one LightRAG chunk: removing one document keeps it for the other."""
    first = hub_document_ingest(
        workspace="returns", title="회수 안내 1", content=f"{SHARED_PARAGRAPH}\n\n{WRONG_FEE}", actor="test"
    )
    hub_document_ingest(
        workspace="returns", title="회수 안내 2", content=f"{SHARED_PARAGRAPH}\n\n{DEADLINE}", actor="test"
    )

    hub_document_delete(document=first, actor="test")

    found = _texts("회수 택배 당일 수거 접수 시간")
    assert "오후 2시까지" in found and "7,700" not in found


def test_a_replace_that_would_duplicate_another_document_is_refused_and_changes_nothing(hub):
    fee = hub_document_ingest(workspace="returns", title="회수비", content=WRONG_FEE, actor="test")
    hub_document_ingest(workspace="returns", title="반품 기한", content=DEADLINE, actor="test")

    with pytest.raises(KnowledgeHubError):
        hub_document_replace(document=fee, content=DEADLINE, actor="test")

    assert "7,700원" in _texts("반품 회수 택배비는 얼마인가요?")
    assert _revision() == 2


SCRIPTED_EXTRACTION = "\n".join(
    [
        "entity<|#|>회수 택배비<|#|>concept<|#|>단순 변심 반품의 회수 택배비는 1건당 7,700원",
        "entity<|#|>협력사<|#|>organization<|#|>회수 택배비를 부담하는 거래처",
        "relation<|#|>회수 택배비<|#|>협력사<|#|>부담<|#|>협력사가 회수 택배비 7,700원을 부담한다",
        "<|COMPLETE|>",
    ]
)


def test_a_document_lightrag_extracted_itself_is_deleted_by_lightrag(hub, settings, monkeypatch):
    """With an LLM configured the document went through LightRAG's pipeline: its own `adelete_by_doc_id` removes
    the chunks, entities and relations."""

    async def scripted_llm(prompt, system_prompt=None, history_messages=None, **kwargs):
        return SCRIPTED_EXTRACTION

    settings.KNOWLEDGE_HUB_LLM_BASE_URL = "http://llm.invalid/v1"
    monkeypatch.setattr(hub_runtime, "llm_complete", scripted_llm)
    runtime_reset()
    document = hub_document_ingest(workspace="returns", title="회수비", content=WRONG_FEE, actor="test")
    assert document.extractor == KnowledgeDocument.Extractor.LLM
    assert "7,700" in _texts("회수 택배비 부담")

    hub_document_retire(document=document, actor="test")

    assert "7,700" not in _texts("회수 택배비 부담")
    assert "7,700" not in repr(_stored("returns", _revision()))


def test_the_qdrant_vector_storage_ingests_searches_and_removes_like_the_others(hub_on_qdrant):
    """`QdrantVectorDBStorage` (on a local-mode client of the server API): the same ingest, search, isolation and
    removal as the file vectors."""
    document = hub_document_ingest(workspace="returns", title="회수비", content=WRONG_FEE, actor="test")
    hub_document_ingest(workspace="settlement", title="정산", content="# 정산\n\n정산 대금은 매월 10일에 지급합니다.\n")

    assert "7,700원" in _texts("반품 회수 택배비는 얼마인가요?")
    assert not any("10일" in item.text for item in hub_search("정산 대금 지급일", workspaces=["returns"], limit=20))
    hub_document_replace(document=document, content=RIGHT_FEE, actor="test")
    found = _texts("반품 회수 택배비는 얼마인가요?")
    assert "4,400원" in found and "7,700원" not in found
    assert runtime_get().storage_label == "postgres+qdrant"
