"""Tools over the counterpart's own data. The vendor is always the server's resolved counterpart: the schemas
have no vendor argument, and one sent anyway is refused as an unknown argument."""

from agent.knowledge.masking import mask_evidence
from agent.tools.arguments import int_argument, reject_unknown, text_argument
from agent.tools.registry import Grade, Scope, Tool, ToolArgumentsInvalid, ToolContext, ToolResult, register
from agent.tools.retrieval import evidence_text


def _recommend_products(context: ToolContext, arguments: dict) -> ToolResult:
    from vendors.records import vendor_records_search

    reject_unknown(arguments, {"query", "limit"})
    query = text_argument(arguments, "query")
    limit = int_argument(arguments, "limit", default=5, minimum=1, maximum=10)
    items = [
        item
        for item in vendor_records_search(vendor=context.vendor, query=query, limit=limit * 3, on=context.asked_on)
        if item.extra.get("kind") == "product"
    ][:limit]
    items = mask_evidence(items, counterpart=context.vendor, masker=context.masker)
    return ToolResult(text=evidence_text(items), evidence=items)


def _send_document(context: ToolContext, arguments: dict) -> ToolResult:
    """Queue one of the counterpart's records as a message to this room, and say what really happened.

    The `[시스템 확인]` line is read from the send job before and after the request (seed 003): the model may
    only quote it. Another vendor's record answers exactly like a missing one.
    """
    from delivery.models import SendJob
    from delivery.services import SendJobError, send_request_submit
    from vendors.models import VendorRecord

    reject_unknown(arguments, {"reference"})
    reference = text_argument(arguments, "reference", max_length=40)
    if not reference.startswith("record:") or not reference.removeprefix("record:").isdigit():
        raise ToolArgumentsInvalid("'reference' must look like record:123 (from a search_records result)")
    record = (
        VendorRecord.objects.current().filter(pk=int(reference.removeprefix("record:")), vendor=context.vendor).first()
    )
    if record is None:
        return ToolResult(text="[시스템 확인] 해당 문서를 찾을 수 없습니다. 새로 처리된 것은 없음")
    key = f"question:{context.question_id}:document:{record.pk}"
    before = SendJob.objects.filter(idempotency_key=key).values_list("state", flat=True).first()
    body = f"[{record.title}]\n{record.body}".strip()
    try:
        job, _ = send_request_submit(
            room=context.room,
            items=[{"kind": "text", "text": body}],
            idempotency_key=key,
            question=None,
            actor="agent",
        )
    except SendJobError as exc:
        return ToolResult(text=f"[시스템 확인] 문서 발송 요청이 처리되지 않았습니다 ({exc}). 새로 처리된 것은 없음")
    job.refresh_from_db()
    if before is None:
        line = f"[시스템 확인] 발송 요청 #{job.pk} · 문서 '{record.title}' · 상태: {job.get_state_display()}"
    else:
        line = f"[시스템 확인] 이미 요청된 발송 #{job.pk} · 문서 '{record.title}' · 상태: {job.get_state_display()}"
    return ToolResult(text=line, confirmed_action="send")


register(
    Tool(
        name="recommend_products",
        description="이 거래처가 취급하는 상품 중 질문에 맞는 상품과 단가를 찾습니다.",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "찾는 상품의 종류, 용도 또는 이름"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        scope=Scope.COUNTERPART,
        grade=Grade.READ,
        handler=_recommend_products,
        is_retrieval=True,
    )
)
register(
    Tool(
        name="send_document",
        description=(
            "이 거래처의 기록 중 하나(search_records 결과의 reference, 예: record:12)를 이 방에 문서로 보냅니다. "
            "결과의 [시스템 확인] 줄에 적힌 내용만 사실로 안내하세요."
        ),
        parameters={
            "type": "object",
            "properties": {"reference": {"type": "string", "description": "record:<번호>"}},
            "required": ["reference"],
            "additionalProperties": False,
        },
        scope=Scope.COUNTERPART,
        grade=Grade.IRREVERSIBLE,
        handler=_send_document,
    )
)
