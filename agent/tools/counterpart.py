"""Tools over the counterpart's own data. The vendor is always the server's resolved counterpart: the schemas
have no vendor argument, and one sent anyway is refused as an unknown argument."""

from agent.knowledge.masking import mask_evidence
from agent.tools.arguments import int_argument, reject_unknown, text_argument
from agent.tools.registry import (
    ActionPlan,
    Grade,
    Scope,
    Tool,
    ToolArgumentsInvalid,
    ToolContext,
    ToolResult,
    register,
)
from agent.tools.retrieval import evidence_text
from delivery.selectors import send_job_sent
from vendors.selectors import vendor_record_current_get, vendor_record_get


def _recommend_products(context: ToolContext, arguments: dict) -> ToolResult:
    from agent.knowledge.records import vendor_records_search

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


def _send_document_plan(context: ToolContext, arguments: dict) -> ActionPlan | ToolResult:
    """Validate a document send: one of the counterpart's current records. Another vendor's record answers
    exactly like a missing one. Runs in the tool loop (nothing is sent there) and again before the send."""
    reject_unknown(arguments, {"reference"})
    reference = text_argument(arguments, "reference", max_length=40)
    if not reference.startswith("record:") or not reference.removeprefix("record:").isdigit():
        raise ToolArgumentsInvalid("'reference' must look like record:123 (from a search_records result)")
    record = vendor_record_current_get(vendor=context.vendor, record_id=int(reference.removeprefix("record:")))
    if record is None:
        return ToolResult(text="[시스템 확인] 해당 문서를 찾을 수 없습니다. 새로 처리되거나 접수된 것은 없음")
    owner = f"question:{context.question_id}" if context.question_id is not None else "dry-run"
    key = f"{owner}:document:{record.pk}"
    return ActionPlan(
        tool="send_document",
        arguments={"reference": f"record:{record.pk}"},
        idempotency_key=key,
        kind="send",
        label=record.title,
        already_done=send_job_sent(idempotency_key=key),
    )


def _send_document_perform(context: ToolContext, plan: ActionPlan, actor) -> object:
    """Queue the record as a message to the room (idempotent by the plan's key) and return the send job."""
    from delivery.services import send_request_submit

    record = vendor_record_get(int(plan.arguments["reference"].removeprefix("record:")))
    body = f"[{record.title}]\n{record.body}".strip()
    job, _ = send_request_submit(
        room=context.room,
        items=[{"kind": "text", "text": body}],
        idempotency_key=plan.idempotency_key,
        question=None,
        actor=actor,
    )
    return job


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
            "이 거래처의 기록 중 하나(search_records 결과의 reference, 예: record:12)를 이 방에 문서로 보내 달라는 "
            "요청을 기록합니다. 답변이 검증된 뒤에 발송되므로, 보냈다고 쓰지 말고 요청을 접수했다고만 안내하세요."
        ),
        parameters={
            "type": "object",
            "properties": {"reference": {"type": "string", "description": "record:<번호>"}},
            "required": ["reference"],
            "additionalProperties": False,
        },
        scope=Scope.COUNTERPART,
        grade=Grade.IRREVERSIBLE,
        plan=_send_document_plan,
        perform=_send_document_perform,
    )
)
