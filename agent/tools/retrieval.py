"""Retrieval tools: the counterpart's records, the knowledge hub and the FAQ store. Results are masked."""

from collections.abc import Callable

from django.conf import settings

from agent.knowledge.masking import mask_evidence
from agent.knowledge.types import EvidenceItem
from agent.tools.arguments import reject_unknown, text_argument
from agent.tools.registry import Grade, Scope, Tool, ToolContext, ToolResult, register

_QUERY_SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "검색어 (완결된 한국어 문장 또는 핵심어)"}},
    "required": ["query"],
    "additionalProperties": False,
}
SOURCE_LABELS = {"record": "거래처 기록", "hub": "지식 허브", "faq": "FAQ"}


def evidence_text(items: list[EvidenceItem]) -> str:
    """How evidence reads to the model: numbered, with its source, masked names left as `[다른 벤더]`."""
    if not items:
        return "검색 결과가 없습니다."
    lines = []
    for number, item in enumerate(items, start=1):
        source = SOURCE_LABELS.get(item.source_kind, item.source_kind)
        title = f" · {item.title}" if item.title else ""
        lines.append(f"[{number}] ({source}{title})\n{item.text}")
    masked = sum(item.mask_count for item in items)
    if masked:
        lines.append(f"(참고: 다른 벤더 이름 {masked}곳을 [다른 벤더]로 가렸습니다. 추측하지 마세요.)")
    return "\n\n".join(lines)


def _records(context: ToolContext, query: str) -> list[EvidenceItem]:
    from agent.knowledge.records import vendor_records_search

    return vendor_records_search(
        vendor=context.vendor, query=query, limit=settings.EVIDENCE_BUDGET_RECORDS, on=context.asked_on
    )


def _hub(context: ToolContext, query: str) -> list[EvidenceItem]:
    from agent.knowledge.hub import hub_search

    return hub_search(query, limit=settings.EVIDENCE_BUDGET_HUB, on=context.asked_on)


def _faq(context: ToolContext, query: str) -> list[EvidenceItem]:
    from agent.knowledge.faq import faq_search

    return faq_search(query, limit=settings.EVIDENCE_BUDGET_FAQ)


def _search_tool(
    name: str, description: str, scope: Scope, search: Callable[[ToolContext, str], list[EvidenceItem]]
) -> Tool:
    """A read-only search: one `query` argument, results masked for the counterpart before the model sees them."""

    def handler(context: ToolContext, arguments: dict) -> ToolResult:
        reject_unknown(arguments, {"query"})
        found = search(context, text_argument(arguments, "query"))
        items = mask_evidence(found, counterpart=context.vendor, masker=context.masker)
        return ToolResult(text=evidence_text(items), evidence=items)

    return Tool(
        name=name,
        description=description,
        parameters=_QUERY_SCHEMA,
        scope=scope,
        grade=Grade.READ,
        handler=handler,
        is_retrieval=True,
    )


register(
    _search_tool(
        "search_records",
        "이 거래처의 계약 조건, 주문, 프로모션, 정산, 공지, 상품과 단가를 검색합니다.",
        Scope.COUNTERPART,
        _records,
    )
)
register(
    _search_tool(
        "search_hub",
        "회사 지식 허브(정책, 물류, 반품, 정산, 프로모션 등)를 검색합니다.",
        Scope.KNOWLEDGE,
        _hub,
    )
)
register(_search_tool("search_faq", "자주 묻는 질문(FAQ)에서 비슷한 질문과 답변을 검색합니다.", Scope.KNOWLEDGE, _faq))
