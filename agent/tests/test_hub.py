"""The LightRAG knowledge hub on PostgreSQL with the local embedder and a LightRAG working dir per test."""

import asyncio
import contextlib
import http.server
import json
import threading

import pytest

from agent.knowledge import hub as hub_module
from agent.knowledge import hub_graph, hub_runtime
from agent.knowledge.hub import (
    KnowledgeHubError,
    WorkspaceRow,
    hub_document_ingest,
    hub_document_reingest,
    hub_search,
    hub_status,
    workspaces_route,
)
from agent.knowledge.hub_runtime import HubLLMNotConfiguredError, llm_complete, runtime_get, runtime_reset
from agent.models import KnowledgeDocument, KnowledgeTermCount, KnowledgeWorkspace
from monitoring.models import AuditEvent
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.django_db

RETURNS_DOC = """# 반품 처리 기준

## 반품 기한
반품은 상품 수령 후 7일 이내에 협력사 포털에서 신청해야 합니다.
대한물산 납품 상품은 검수 완료 후 3일 이내에만 반품을 받습니다.

## 반품 비용
단순 변심 반품의 회수 택배비는 1건당 4,000원이며 협력사가 부담합니다.
"""

SETTLEMENT_DOC = """# 정산 일정

정산 대금은 매월 10일에 지급하며, 세금계산서는 전월 말일까지 발행해야 합니다.
지급 보류 사유가 있으면 정산 담당자가 5영업일 안에 통보합니다.
"""

# Shares the returns document's nouns: the local extractor makes entities only of nouns found in two documents.
RETURNS_SUMMARY_DOC = """# 반품 요약

반품 신청은 협력사 포털에서 받습니다. 상품 검수 후 반품 비용은 협력사가 부담하고, 회수 택배비 기준은 따로 둡니다.
"""

LOGISTICS_DOC = """# 물류센터 입고 안내

평택 물류센터 입고 시간은 평일 오전 8시부터 오후 4시까지입니다.
팔레트 적재 높이는 1.5미터를 넘을 수 없습니다.
"""


@contextlib.contextmanager
def _recorded_workspace_searches():
    """The slugs of the workspaces a hub search asks, in order, while the block runs."""
    asked = []
    search = hub_graph._workspace_search

    async def recording(runtime, slug, *args):
        asked.append(slug)
        return await search(runtime, slug, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hub_graph, "_workspace_search", recording)
        yield asked


def test_the_data_migration_creates_13_enabled_workspaces_with_korean_titles():
    """Migrating creates the distributor's 13 workspaces, enabled, at revision 0, each with routing keywords."""
    workspaces = list(KnowledgeWorkspace.objects.all())
    assert len(workspaces) == 13
    assert {workspace.slug for workspace in workspaces} == {
        "policies",
        "logistics",
        "returns",
        "settlement",
        "promotions",
        "contracts",
        "products",
        "ordering",
        "pricing",
        "quality",
        "claims",
        "systems",
        "notices",
    }
    assert all(workspace.enabled and workspace.revision == 0 for workspace in workspaces)
    assert all(workspace.routing_keywords for workspace in workspaces)
    assert KnowledgeWorkspace.objects.get(slug="returns").title == "반품·교환"


def test_ingest_then_search_returns_chunks_and_entities_with_workspace_and_source(hub, settings):
    """An ingested document is found again: chunk and graph items carry the workspace, the title and the source."""
    settings.KNOWLEDGE_HUB_ROUTED_ALSO_NEAREST = 0  # the routed workspace alone (the nearest other: tested below)
    settings.KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS = 0  # graph queries only (the rare nouns' lookup: tested below)
    VendorFactory(code="1001", name="대한물산")
    hub_document_ingest(workspace="policies", title="반품 요약", content=RETURNS_SUMMARY_DOC, actor="test")
    document = hub_document_ingest(
        workspace="returns", title="반품 처리 기준", content=RETURNS_DOC, source="운영팀", actor="test"
    )

    assert document.status == KnowledgeDocument.Status.INGESTED
    assert document.extractor == KnowledgeDocument.Extractor.LOCAL
    assert document.chunk_count >= 2 and document.entity_count >= 5 and document.relation_count >= 3
    assert KnowledgeWorkspace.objects.get(slug="returns").revision == 1

    items = hub_search("대한물산 상품 반품 기한은 며칠인가요?")
    assert items, "the ingested document must be found"
    assert all(item.source_kind == "hub" and item.workspace == "returns" for item in items)
    assert items == sorted(items, key=lambda item: -item.score)
    top = items[0]
    assert "3일 이내" in top.text or "7일 이내" in top.text
    assert top.reference.startswith("hub:returns:")
    assert top.title == "반품 처리 기준"
    assert top.extra["source"] == "운영팀" and top.extra["document_id"] == document.pk
    kinds = {item.extra["kind"] for item in hub_search("대한물산 반품", limit=20)}
    assert "chunk" in kinds


def test_the_local_graph_types_vendor_names_as_organizations(hub):
    """Vendor names become ORGANIZATION entities; a graph hit for the vendor describes it with its own sentence."""
    VendorFactory(code="1001", name="대한물산")
    hub_document_ingest(workspace="policies", title="반품 요약", content=RETURNS_SUMMARY_DOC, actor="test")
    hub_document_ingest(workspace="returns", title="반품 처리 기준", content=RETURNS_DOC, actor="test")
    runtime = runtime_get()

    async def node(name):
        async with runtime.workspace("returns", 1) as rag:
            return await rag.chunk_entity_relation_graph.get_node(name)

    vendor = runtime.call(node("대한물산"), timeout=10)
    assert vendor["entity_type"] == "ORGANIZATION"
    assert "3일 이내" in vendor["description"]
    concept = runtime.call(node("반품"), timeout=10)
    assert concept["entity_type"] == "CONCEPT"
    # The entity keeps every chunk it appears in, not only the last one ainsert_custom_kg was given.
    assert len(concept["source_id"].split("<SEP>")) >= 2


def test_a_fact_ingested_in_one_workspace_is_not_returned_from_another(hub):
    """Workspace isolation: the settlement fact is never evidence of the logistics workspace, and vice versa."""
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    hub_document_ingest(workspace="logistics", title="입고 안내", content=LOGISTICS_DOC, actor="test")

    asked_logistics = hub_search("정산 대금 지급일은 언제인가요?", workspaces=["logistics"], limit=20)
    assert all(item.workspace == "logistics" for item in asked_logistics)
    assert not any("10일에 지급" in item.text for item in asked_logistics)

    asked_all = hub_search("정산 대금 지급일은 언제인가요?", workspaces=["logistics", "settlement"], limit=20)
    assert any("10일에 지급" in item.text for item in asked_all)
    for item in asked_all:
        expected = "settlement" if ("정산" in item.text or "세금계산서" in item.text) else item.workspace
        assert item.workspace == expected
    assert not any("10일에 지급" in item.text for item in asked_all if item.workspace == "logistics")


def test_searching_makes_no_llm_call(hub, monkeypatch):
    """Retrieval is given its keywords: LightRAG never calls the LLM function while ingesting or searching."""
    calls = []

    async def counting_llm(prompt, **kwargs):
        calls.append(prompt)
        raise AssertionError("the LLM must not be called")

    monkeypatch.setattr(hub_runtime, "llm_complete", counting_llm)
    runtime_reset()
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")

    assert hub_search("세금계산서 발행 기한 알려주세요")
    assert hub_search("정산 보류되면 어떻게 되나요?", workspaces=["settlement"])
    assert calls == []


SCRIPTED_EXTRACTION = "\n".join(
    [
        "entity<|#|>정산 대금<|#|>concept<|#|>매월 10일에 지급하는 협력사 대금",
        "entity<|#|>세금계산서<|#|>concept<|#|>전월 말일까지 발행하는 증빙",
        "relation<|#|>정산 대금<|#|>세금계산서<|#|>지급 조건<|#|>세금계산서가 발행되어야 정산 대금이 지급된다",
        "<|COMPLETE|>",
    ]
)


def test_with_an_llm_configured_lightrag_extracts_the_graph_itself(hub, settings, monkeypatch):
    """With an LLM endpoint set, ingestion goes through LightRAG's own pipeline (one extraction call per chunk);
    searching afterwards still makes no LLM call."""
    prompts = []

    async def scripted_llm(prompt, system_prompt=None, history_messages=None, **kwargs):
        prompts.append(prompt)
        return SCRIPTED_EXTRACTION

    settings.KNOWLEDGE_HUB_LLM_BASE_URL = "http://llm.invalid/v1"
    monkeypatch.setattr(hub_runtime, "llm_complete", scripted_llm)
    runtime_reset()

    document = hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")

    assert document.status == KnowledgeDocument.Status.INGESTED, document.error
    assert document.extractor == KnowledgeDocument.Extractor.LLM
    assert document.chunk_count >= 1 and document.entity_count == 2 and document.relation_count == 1
    extraction_calls = len(prompts)
    assert extraction_calls >= 1

    items = hub_search("정산 대금 지급일과 세금계산서", workspaces=["settlement"], limit=20)
    assert any("10일에 지급" in item.text for item in items)
    assert len(prompts) == extraction_calls


@pytest.mark.parametrize("question", ["", "   ", "반", "a", "?"])
def test_a_too_short_question_gives_no_hub_evidence_and_no_error(hub, question):
    """Questions below LightRAG's minimum (RAGQueryTooShortError territory) return no items instead of raising."""
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    assert hub_search(question) == []


def test_the_llm_function_refuses_to_run_without_an_llm(settings):
    """Without KNOWLEDGE_HUB_LLM_BASE_URL the function given to LightRAG raises instead of guessing."""
    settings.KNOWLEDGE_HUB_LLM_BASE_URL = ""
    with pytest.raises(HubLLMNotConfiguredError):
        asyncio.run(llm_complete("무엇이든"))


def test_the_llm_function_calls_the_configured_chat_endpoint(settings):
    """With an endpoint set, LightRAG's LLM function posts the system prompt, history and prompt to
    `/chat/completions` of that OpenAI-compatible server (here a local fake) and returns the answer text."""
    requests = []

    class FakeChatServer(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            requests.append((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            body = json.dumps(
                {
                    "id": "fake",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "fake-model",
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "추출 결과"}}
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), FakeChatServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.KNOWLEDGE_HUB_LLM_BASE_URL = f"http://127.0.0.1:{server.server_port}/v1"
    settings.KNOWLEDGE_HUB_LLM_MODEL = "fake-model"
    try:
        history = [{"role": "user", "content": "앞 질문"}, {"role": "assistant", "content": "앞 답변"}]
        answer = asyncio.run(llm_complete("본문", system_prompt="시스템", history_messages=history))
    finally:
        server.shutdown()

    assert answer == "추출 결과"
    path, payload = requests[0]
    assert path == "/v1/chat/completions"
    assert payload["model"] == "fake-model"
    assert [message["content"] for message in payload["messages"]] == ["시스템", "앞 질문", "앞 답변", "본문"]


def test_the_same_text_in_a_workspace_is_one_document(hub):
    """Ingesting identical text again returns the same document and does not write the hub again."""
    first = hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    again = hub_document_ingest(workspace="settlement", title="다른 제목", content=SETTLEMENT_DOC + "\n", actor="test")

    assert again.pk == first.pk
    assert KnowledgeDocument.objects.count() == 1
    assert KnowledgeWorkspace.objects.get(slug="settlement").revision == 1
    actions = list(AuditEvent.objects.filter(target_id=str(first.pk)).values_list("action", flat=True))
    assert sorted(actions) == ["knowledge.document.create", "knowledge.document.ingest"]


def test_reingesting_a_document_is_idempotent_and_bumps_the_revision(hub):
    """Re-ingesting writes the same chunks and graph again (same counts) and announces a new revision."""
    document = hub_document_ingest(workspace="returns", title="반품 처리 기준", content=RETURNS_DOC, actor="test")
    before = hub_search("반품 기한", workspaces=["returns"], limit=20)

    again = hub_document_reingest(document=document, actor="test")

    assert (again.chunk_count, again.entity_count, again.relation_count) == (
        document.chunk_count,
        document.entity_count,
        document.relation_count,
    )
    assert KnowledgeWorkspace.objects.get(slug="returns").revision == 2
    after = hub_search("반품 기한", workspaces=["returns"], limit=20)
    assert [item.reference for item in after] == [item.reference for item in before]


def test_a_failed_write_is_recorded_on_the_document_and_keeps_the_revision(hub, monkeypatch):
    """When LightRAG fails, the document is FAILED with the error, audited, and the revision does not move."""

    async def failing_insert(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(hub_graph, "graph_insert", failing_insert)
    document = hub_document_ingest(workspace="returns", title="반품 처리 기준", content=RETURNS_DOC, actor="test")

    assert document.status == KnowledgeDocument.Status.FAILED
    assert "disk full" in document.error
    assert KnowledgeWorkspace.objects.get(slug="returns").revision == 0
    assert AuditEvent.objects.filter(action="knowledge.document.fail", target_id=str(document.pk)).exists()

    monkeypatch.undo()
    retried = hub_document_ingest(workspace="returns", title="반품 처리 기준", content=RETURNS_DOC, actor="test")
    assert retried.pk == document.pk and retried.status == KnowledgeDocument.Status.INGESTED


def test_ingest_refuses_unknown_workspaces_and_empty_text(hub):
    """Domain errors are raised before anything is stored."""
    with pytest.raises(KnowledgeHubError):
        hub_document_ingest(workspace="nope", title="x", content="내용", actor="test")
    with pytest.raises(KnowledgeHubError):
        hub_document_ingest(workspace="returns", title="x", content="  \n ", actor="test")
    assert KnowledgeDocument.objects.count() == 0


def test_a_question_routing_cannot_narrow_is_asked_of_the_nearest_workspaces_and_the_notices(hub, settings):
    """No routing keyword in `평택 팔레트 적재 높이 몇 미터`: with KNOWLEDGE_HUB_UNROUTED_WORKSPACES=1 only the
    workspace nearest in content (logistics) is queried, with the `*` notices; 0 asks every enabled workspace."""
    hub_document_ingest(workspace="logistics", title="입고 안내", content=LOGISTICS_DOC, actor="test")
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    notice = "평택 센터 팔레트 높이 기준이 바뀌었습니다."
    hub_document_ingest(workspace="notices", title="공지", content=notice, actor="test")
    question = "평택 적재 높이 몇 미터"
    rows = hub_module._enabled_workspaces()
    assert len(workspaces_route(question, rows)) == len(rows)
    with _recorded_workspace_searches() as asked:
        settings.KNOWLEDGE_HUB_UNROUTED_WORKSPACES = 1
        items = hub_search(question, limit=5)
        assert sorted(asked) == ["logistics", "notices"]
        assert any("1.5미터" in item.text for item in items)
        asked.clear()
        settings.KNOWLEDGE_HUB_UNROUTED_WORKSPACES = 0
        hub_search(question, limit=5)
        assert len(asked) == len(rows)


def test_a_routed_question_also_asks_the_nearest_workspace_routing_left_out(hub, settings):
    """`발주` routes the question to ordering, but the rule asked is logistics': with
    KNOWLEDGE_HUB_ROUTED_ALSO_NEAREST=1 the workspace nearest in content among those routing left out is asked
    too and its sentence found; 0 asks only the routed workspaces (the rare nouns' lookup, which reads every
    workspace's documents, off: tested below)."""
    settings.KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS = 0
    loading = "# 입고 예약\n\n한 차량에 여러 발주를 싣는 경우 입고 예약에 발주서 번호를 모두 입력해야 합니다.\n"
    hub_document_ingest(workspace="logistics", title="입고 예약", content=loading, actor="test")
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    question = "발주 여러 건 한 차량에 싣고 가면 번호는 어떻게 해요?"
    routed = {row.slug for row in workspaces_route(question, hub_module._enabled_workspaces())}
    assert "ordering" in routed and "logistics" not in routed
    with _recorded_workspace_searches() as asked:
        settings.KNOWLEDGE_HUB_ROUTED_ALSO_NEAREST = 1
        items = hub_search(question, limit=5)
        assert sorted(asked) == sorted([*routed, "logistics"])
        assert any("모두 입력" in item.text for item in items)
        asked.clear()
        settings.KNOWLEDGE_HUB_ROUTED_ALSO_NEAREST = 0
        assert not any("모두 입력" in item.text for item in hub_search(question, limit=5))
        assert sorted(asked) == sorted(routed)


def test_hub_search_start_returns_while_the_search_runs_and_its_finish_waits_for_it(hub):
    """The evidence service's overlap: starting a search does not wait for the loop thread; finishing does."""
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    runtime = runtime_get()
    release = threading.Event()
    search = hub_graph.workspaces_search

    async def held(*args, **options):
        # Released by the test only after the start returned: a start that waited would time out here and the
        # search would fail (no items).
        if not await asyncio.get_running_loop().run_in_executor(None, release.wait, 5):
            raise TimeoutError("hub_search_start waited for the search")
        return await search(*args, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hub_graph, "workspaces_search", held)
        finish = hub_module.hub_search_start("정산 대금 지급일", limit=3)
        release.set()
        items = finish()
    assert runtime.thread.is_alive()
    assert any("10일" in item.text for item in items)


def test_a_disabled_workspace_is_not_searched(hub):
    """Staff can switch a workspace off: its documents stop being evidence."""
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    KnowledgeWorkspace.objects.filter(slug="settlement").update(enabled=False)
    assert hub_search("정산 대금 지급일", limit=20) == []


def test_routing_asks_the_workspaces_a_question_names_plus_notices_or_all_of_them():
    """Routing keywords of the question's nouns narrow the workspaces (notices, marked `*`, always join);
    no hit, or too many, means every enabled workspace."""
    rows = [
        WorkspaceRow(workspace.slug, workspace.revision, workspace.routing_keywords)
        for workspace in KnowledgeWorkspace.objects.all()
    ]

    def routed(question):
        return {row.slug for row in workspaces_route(question, rows)}

    assert routed("반품은 며칠 안에 해야 하나요?") == {"returns", "notices"}
    assert routed("정산 대금과 세금계산서") == {"settlement", "notices"}
    assert routed("반품 택배 회수 비용 정산") == {"logistics", "returns", "settlement", "notices"}
    assert routed("물류센터 입고 시간") == {"logistics", "notices"}
    assert routed("계약 조건 변경") == {"contracts", "notices"}
    assert len(routed("변경 일정 알려주세요")) == 13  # a hit on notices (`*`) alone narrows nothing
    # Words inside endings do not route: `확인하나요` is no `인하` (pricing).
    assert len(routed("대표 전화번호 확인하나요")) == 13
    assert len(routed("반품 정산 프로모션 계약 단가 발주 품질")) == 13


def test_a_routed_question_finds_its_workspace_only(hub):
    """Without explicit workspaces, a question about settlement is asked of the settlement workspace."""
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    hub_document_ingest(workspace="logistics", title="입고 안내", content=LOGISTICS_DOC, actor="test")
    items = hub_search("정산 대금은 언제 지급되나요?", limit=20)
    assert items and {item.workspace for item in items} == {"settlement"}


def test_hub_status_reports_ok_then_degraded_when_no_workspace_is_enabled(hub):
    """The health summary counts workspaces and documents, and says why it is degraded."""
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    status = hub_status()
    assert status["status"] == "ok" and status["reason"] == ""
    assert status["workspaces"] == {"total": 13, "enabled": 13}
    assert status["documents"] == {"pending": 0, "ingested": 1, "failed": 0, "retired": 0}
    assert status["revisions"]["settlement"] == 1
    assert status["extractor"] == "local"

    KnowledgeWorkspace.objects.update(enabled=False)
    status = hub_status()
    assert status["status"] == "degraded" and "no knowledge workspace is enabled" in status["reason"]


def test_a_hub_built_with_another_embedder_is_refused(hub):
    """Vectors of another embedding model are meaningless: search returns nothing and health says why."""
    hub_document_ingest(workspace="settlement", title="정산 일정", content=SETTLEMENT_DOC, actor="test")
    runtime_reset()
    (hub / "embedder.json").write_text('{"embedder": "openai_text_embedding_3_small", "dimension": 1536}')

    assert hub_search("정산 대금 지급일", limit=20) == []
    status = hub_status()
    assert status["status"] == "degraded" and "embedder" in status["reason"]


CLAIMS_DOC = """# 클레임 처리 기준

## 배상 기준
- 이물 혼입: 제품 교환 또는 환불과 함께 위로금 1만 원 상품권을 지급하며 협력사가 부담합니다.
- 배송 중 파손: 센터 보관 중 파손은 당사가, 납품 전 파손은 협력사가 부담합니다.
- 표시 오류: 고객 환불액 전액을 협력사가 부담합니다.
"""


def test_a_rare_noun_of_the_question_finds_its_passage_the_embedding_misses(hub, settings):
    """`위로금` is in one document only: asked of claims, the question finds its list item by the word, which the
    vector search alone does not (the local embedding relates the two below its threshold: nothing with
    KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS at 0). A word no document holds finds nothing, and a workspace the search
    the caller does not allow gives nothing by the word either. Routing does not limit it: a question routed
    elsewhere by another of its words still finds the passage."""
    hub_document_ingest(workspace="claims", title="클레임 처리 기준", content=CLAIMS_DOC, actor="test")
    hub_document_ingest(workspace="returns", title="반품 처리 기준", content=RETURNS_DOC, actor="test")

    question = "이물 혼입이면 위로금은 얼마예요?"
    items = hub_search(question, workspaces=["claims"])
    # routed to quality by `이물`: the word still finds the claims rule the routing left out
    routed = hub_search(question)
    off_topic = hub_search("휴가 신청은 어떻게 하나요?")
    not_asked = hub_search(question, workspaces=["returns"])
    settings.KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS = 0
    without = hub_search(question, workspaces=["claims"])

    assert items and items[0].workspace == "claims" and items[0].title == "클레임 처리 기준"
    assert items[0].text == (
        "[클레임 처리 기준 > 배상 기준] 이물 혼입: 제품 교환 또는 환불과 함께 위로금 1만 원 상품권을 지급하며 "
        "협력사가 부담합니다."
    )
    assert routed and routed[0].text == items[0].text
    assert not any("위로금" in item.text for item in off_topic)
    assert not any("위로금" in item.text for item in not_asked)
    assert not any("위로금" in item.text for item in without)


def test_a_noun_few_documents_count_but_many_texts_hold_is_not_rare(hub, settings):
    """`시간` counted as a noun by one document is still in four texts inside other words (`운영시간`, `입고시간`): read
    off the texts, it is common, so it finds nothing by the word; `위로금`, in one text, does."""
    settings.KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS = 3
    hub_document_ingest(workspace="claims", title="클레임 처리 기준", content=CLAIMS_DOC, actor="test")
    hub_document_ingest(workspace="systems", title="안내", content="# 안내\n\n입고 시간은 오전입니다.\n", actor="test")
    for number, word in enumerate(["운영시간", "입고시간", "출고시간", "상담시간"], start=1):
        content = f"# 안내 {number}\n\n{word}은 평일 오전 9시부터입니다.\n"
        hub_document_ingest(workspace="systems", title=f"안내 {number}", content=content, actor="test")
    slugs = tuple(row.slug for row in hub_module._enabled_workspaces())

    assert KnowledgeTermCount.objects.get(name="시간").document_count <= 3  # counted as a noun by few documents
    by_time = hub_module._rare_term_hits("시간 알려주세요", ["시간"], slugs)
    by_consolation = hub_module._rare_term_hits("위로금 얼마예요?", ["위로금"], slugs)

    assert by_time == []
    assert [hit.workspace for hit in by_consolation] == ["claims"]
