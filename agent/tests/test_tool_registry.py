"""The tool registry: scopes and grades decided in code, arguments validated by the tools, and `send_document`
saying only what the send job's real state says."""

import dataclasses
import json

import pytest

from agent.tools import (
    ActionRefused,
    Grade,
    Scope,
    ToolContext,
    ToolResult,
    action_perform,
    registry,
    tool_execute,
    tool_get,
    tools_offered,
)
from agent.tools.company import COMPANY_TOOL_NAMES
from agent.verification import verify_draft
from conversations.models import Room
from conversations.tests.factories import QuestionFactory, RoomFactory
from delivery.models import SendJob
from vendors.models import VendorRecord
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import ProductFactory, VendorRecordFactory

pytestmark = pytest.mark.django_db

COUNTERPART_TOOLS = {"search_records", "recommend_products", "send_document"}
KNOWLEDGE_TOOLS = {"search_hub", "search_faq"}


def context_for(room: Room | None, *, vendor=None, question_id=None) -> ToolContext:
    return ToolContext(
        question_id=question_id,
        vendor=vendor or room.vendor,
        room=room,
        room_kind=room.kind if room else Room.Kind.EXTERNAL,
    )


@pytest.fixture
def external_room():
    return RoomFactory(vendor=VendorFactory(code="7001", name="알파상사"))


@pytest.fixture
def internal_room(external_room):
    return RoomFactory(vendor=external_room.vendor, kind=Room.Kind.INTERNAL, name="(7001) 알파상사 CS 내부방")


@pytest.fixture
def handler_spy(monkeypatch):
    """Replace a registered tool's handler with one that records its calls (the tool keeps its scope and grade)."""
    calls = []

    def spy(name: str) -> list:
        tool = registry.tool_get(name)

        def handler(context, arguments):
            calls.append((name, arguments))
            return ToolResult(text="spy ran")

        monkeypatch.setitem(registry._REGISTRY, name, dataclasses.replace(tool, handler=handler))
        return calls

    return spy


# --- the registry ---------------------------------------------------------------------------------------------


def test_the_eleven_company_tools_are_company_scoped_reads_with_strict_schemas():
    """Every company tool is registered with scope COMPANY and grade READ, a Korean description, and a JSON schema
    that admits no argument it does not name."""
    assert len(COMPANY_TOOL_NAMES) == 11
    for name in COMPANY_TOOL_NAMES:
        tool = tool_get(name)
        assert (tool.scope, tool.grade) == (Scope.COMPANY, Grade.READ)
        assert tool.parameters["type"] == "object"
        assert tool.parameters["additionalProperties"] is False
        assert set(tool.parameters["required"]) <= set(tool.parameters["properties"])
        assert any("가" <= char <= "힣" for char in tool.description)


def _keys_and_values(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys_and_values(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys_and_values(item)
    else:
        yield value


def test_tool_specs_never_show_scope_or_grade(external_room, internal_room):
    """What the model sees of a tool is its name, description and argument schema; no scope or grade appears in
    it, as a field or as a value."""
    every_tool = tools_offered(context_for(internal_room)) + tools_offered(context_for(external_room))
    hidden = {"scope", "grade", *Scope, *Grade}
    for tool in every_tool:
        spec = tool.spec()
        assert set(dataclasses.asdict(spec)) == {"name", "description", "parameters"}
        assert not hidden & {item for item in _keys_and_values(spec.as_openai()) if isinstance(item, str)}
        assert spec.name == tool.name


def test_external_rooms_are_not_offered_company_tools(external_room):
    """A vendor room gets the counterpart and knowledge tools, and not one company tool."""
    offered = {tool.name for tool in tools_offered(context_for(external_room))}
    assert offered == COUNTERPART_TOOLS | KNOWLEDGE_TOOLS
    assert not offered & set(COMPANY_TOOL_NAMES)


def test_internal_rooms_are_offered_every_tool(internal_room):
    """A staff-only room gets the company tools as well."""
    offered = {tool.name for tool in tools_offered(context_for(internal_room))}
    assert offered == COUNTERPART_TOOLS | KNOWLEDGE_TOOLS | set(COMPANY_TOOL_NAMES)


@pytest.mark.parametrize("name", COMPANY_TOOL_NAMES)
def test_a_company_tool_called_from_an_external_room_is_refused_without_running(
    name, external_room, handler_spy, django_assert_num_queries
):
    """The call is recorded as blocked with a reason; its handler never runs and it reads nothing."""
    calls = handler_spy(name)
    context = context_for(external_room)
    with django_assert_num_queries(0):
        execution = tool_execute(context, name, {"days": 30})

    assert execution.allowed is False
    assert execution.blocked_reason == "전사 데이터 도구는 외부(벤더) 방에서 사용할 수 없습니다."
    assert execution.model_text == f"[도구 거부] {execution.blocked_reason}"
    assert execution.result is None
    assert calls == []
    assert context.confirmed_actions == []


def test_arguments_cannot_change_a_tools_scope(external_room, handler_spy):
    """A model that writes its own scope, grade or room kind into the arguments is still refused."""
    calls = handler_spy("company_sales_summary")
    execution = tool_execute(
        context_for(external_room),
        "company_sales_summary",
        json.dumps({"scope": "counterpart", "grade": "read", "room_kind": "internal"}),
    )
    assert execution.allowed is False
    assert calls == []


def test_internal_rooms_may_run_company_tools(internal_room, handler_spy):
    """In a staff-only room the same call runs, with the arguments as given."""
    calls = handler_spy("company_sales_summary")
    execution = tool_execute(context_for(internal_room), "company_sales_summary", {"days": 30})
    assert execution.allowed is True
    assert execution.result.text == "spy ran"
    assert calls == [("company_sales_summary", {"days": 30})]


def test_an_unknown_tool_is_refused(internal_room):
    """A name the registry does not hold is never looked up anywhere else."""
    execution = tool_execute(context_for(internal_room), "company_delete_everything", {})
    assert (execution.allowed, execution.blocked_reason) == (False, "알 수 없는 도구입니다.")


# --- arguments ------------------------------------------------------------------------------------------------

INVALID_COMPANY_ARGUMENTS = [
    ("company_sales_summary", {"vendor": "7001"}, "unknown arguments: vendor"),
    ("company_sales_summary", {"days": 0}, "'days' must be between 1 and 365"),
    ("company_sales_summary", {"days": 366}, "'days' must be between 1 and 365"),
    ("company_sales_summary", {"days": "30"}, "'days' must be an integer"),
    ("company_sales_summary", {"days": True}, "'days' must be an integer"),
    ("company_sales_summary", {"end_date": "2026/11/30"}, "'end_date' must be a date like 2026-11-30"),
    ("company_sales_summary", {"end_date": "2026-02-30"}, "'end_date' must be a date like 2026-11-30"),
    ("company_sales_summary", {"limit": 51}, "'limit' must be between 1 and 50"),
    ("company_vendor_ranking", {"by": "profit"}, "'by' must be one of amount, count"),
    ("company_inventory_overview", {"group_by": "brand"}, "'group_by' must be one of vendor, category"),
    ("company_inventory_overview", {"category": ["양념"]}, "'category' must be a string"),
    ("company_margin_report", {"group_by": "vendor", "include_hidden": True}, "unknown arguments: include_hidden"),
    ("company_price_comparison", {}, "'query' is required"),
    ("company_price_comparison", {"query": "상품 단가"}, "'query' must name a product, brand, SKU or category"),
    ("company_price_comparison", {"query": "x" * 101}, "'query' must be at most 100 characters"),
    ("company_purchase_orders", {"status": 3}, "'status' must be a string"),
    ("company_promotions", {"date": "tomorrow"}, "'date' must be a date like 2026-11-30"),
    ("company_settlement_overview", {"month": "2026-13"}, "'month' must be a month like 2026-11"),
    ("company_settlement_overview", {"unpaid_only": "yes"}, "'unpaid_only' must be true or false"),
    ("company_stock_alerts", {"limit": 0}, "'limit' must be between 1 and 50"),
    ("company_category_trends", {"days": 400}, "'days' must be between 1 and 365"),
    ("company_vendor_directory", {"status": "deleted"}, "'status' must be one of all, active, inactive"),
    ("company_vendor_directory", "not json", "unknown arguments: _unparsed"),
]


@pytest.mark.parametrize(("name", "arguments", "message"), INVALID_COMPANY_ARGUMENTS)
def test_invalid_company_arguments_are_refused_with_an_error(internal_room, name, arguments, message):
    """Each tool checks its own arguments: a bad one is an error the model can read, and nothing is returned."""
    execution = tool_execute(context_for(internal_room), name, arguments)
    assert execution.allowed is True
    assert execution.error == f"인자가 올바르지 않습니다: {message}"
    assert execution.result is None
    assert execution.model_text == f"[도구 오류] {execution.error}"


def test_a_vendor_sneaked_into_recommend_products_is_refused(external_room, django_assert_num_queries):
    """The counterpart is the server's: `recommend_products` with a `vendor` argument runs no search at all."""
    other = VendorFactory(code="7002", name="베타유통")
    ProductFactory(vendor=other, name="베타 특가 간장", unit_price=5_000)
    context = context_for(external_room)
    with django_assert_num_queries(0):
        execution = tool_execute(context, "recommend_products", {"query": "간장", "vendor": "7002"})
    assert execution.error == "인자가 올바르지 않습니다: unknown arguments: vendor"
    assert execution.result is None


def test_recommend_products_searches_only_the_server_set_vendor(external_room):
    """Without a vendor argument the search runs for the room's counterpart and never shows another's product."""
    ProductFactory(vendor=external_room.vendor, name="알파 간장", unit_price=9_000)
    ProductFactory(vendor=VendorFactory(code="7002", name="베타유통"), name="베타 간장", unit_price=5_000)
    execution = tool_execute(context_for(external_room), "recommend_products", {"query": "간장"})
    assert execution.error == ""
    assert "알파 간장" in execution.result.text and "9,000원" in execution.result.text
    assert "베타" not in execution.result.text and "5,000원" not in execution.result.text


# --- send_document --------------------------------------------------------------------------------------------


@pytest.fixture
def document(external_room):
    return VendorRecordFactory(
        vendor=external_room.vendor, kind=VendorRecord.Kind.CONTRACT, title="2026 거래 조건", body="월말 마감."
    )


@pytest.fixture
def send_context(external_room):
    question = QuestionFactory(message__room=external_room)
    return context_for(external_room, question_id=question.pk)


def test_send_document_in_the_loop_records_a_request_and_sends_nothing(send_context, document):
    """Inside the tool loop the irreversible tool only plans: one action request with the validated arguments and
    the question's idempotency key, no send job, and a result telling the model it is not done."""
    execution = tool_execute(send_context, "send_document", {"reference": f"record:{document.pk}"})

    assert not SendJob.objects.exists()
    [request] = send_context.action_requests
    assert request.tool == "send_document"
    assert request.arguments == {"reference": f"record:{document.pk}"}
    assert request.idempotency_key == f"question:{send_context.question_id}:document:{document.pk}"
    assert request.label == "2026 거래 조건"
    assert "요청이 기록되었습니다" in execution.result.text and "아직 처리되지 않았습니다" in execution.result.text
    assert execution.result.confirmed_action is None
    assert send_context.confirmed_actions == ["receipt"]  # the request was received, nothing was sent
    assert send_context.action_asked is True


def test_a_recorded_request_confirms_its_receipt_only(send_context, document):
    """While the request waits for verification, saying it was received is true; saying the document was sent,
    or that something was ordered or booked, is not."""
    tool_execute(send_context, "send_document", {"reference": f"record:{document.pk}"})

    def claims_left(draft):
        result = verify_draft(
            draft,
            evidence=[],
            known_brands=[],
            counterpart_names=[],
            other_vendor_names=[],
            confirmed_actions=send_context.confirmed_actions,
        )
        return [violation.text for violation in result.violations if violation.kind == "action_claim"]

    assert claims_left("자료 요청을 접수했습니다.") == []
    assert claims_left("요청이 접수 완료되었습니다.") == []
    assert claims_left("자료를 보내드렸습니다.") == ["보내드렸습니다"]
    assert claims_left("발주했습니다.") == ["발주했습니다"]
    assert claims_left("주문 완료입니다.") == ["주문 완료입니다"]


def test_the_same_request_twice_is_recorded_once(send_context, document):
    tool_execute(send_context, "send_document", {"reference": f"record:{document.pk}"})
    tool_execute(send_context, "send_document", {"reference": f"record:{document.pk}"})
    assert len(send_context.action_requests) == 1


def test_a_document_already_sent_confirms_the_send(send_context, document):
    """Asked again for a document whose job is already `sent` (a retry): the claim of a send may stand."""
    SendJob.objects.create(
        room=send_context.room,
        idempotency_key=f"question:{send_context.question_id}:document:{document.pk}",
        request_fingerprint="x",
        state=SendJob.State.SENT,
        created_by="agent",
    )
    execution = tool_execute(send_context, "send_document", {"reference": f"record:{document.pk}"})
    assert execution.result.confirmed_action == "send"
    assert send_context.confirmed_actions == ["receipt", "send"]
    assert send_context.action_requests[0].already_done is True


def test_another_vendors_document_reads_exactly_like_a_missing_one(send_context):
    """A record of another vendor gets the same words as a record that does not exist; nothing is recorded."""
    foreign = VendorRecordFactory(vendor=VendorFactory(code="7002", name="베타유통"), title="베타 단가표")
    missing = tool_execute(send_context, "send_document", {"reference": f"record:{foreign.pk + 1000}"})
    other_vendors = tool_execute(send_context, "send_document", {"reference": f"record:{foreign.pk}"})

    assert other_vendors.result.text == missing.result.text
    assert missing.result.text == "[시스템 확인] 해당 문서를 찾을 수 없습니다. 새로 처리되거나 접수된 것은 없음"
    assert other_vendors.result.confirmed_action is None
    assert send_context.action_requests == []
    assert not SendJob.objects.exists()


@pytest.mark.parametrize("reference", ["12", "product:12", "record:12; drop", "record:", {"id": 12}])
def test_send_document_refuses_malformed_references(send_context, reference):
    """Only `record:<digits>` is accepted; anything else is an argument error and records nothing."""
    execution = tool_execute(send_context, "send_document", {"reference": reference})
    assert execution.error.startswith("인자가 올바르지 않습니다: 'reference'")
    assert send_context.action_requests == []


def test_send_document_is_offered_in_a_dry_run_and_records_only_in_memory(document, external_room):
    """A dry run (no stored room) offers the irreversible tool like a real run; the request stays in memory."""
    context = context_for(None, vendor=external_room.vendor)
    assert "send_document" in {tool.name for tool in tools_offered(context)}
    execution = tool_execute(context, "send_document", {"reference": f"record:{document.pk}"})
    assert execution.allowed is True
    assert context.action_requests[0].idempotency_key == f"dry-run:document:{document.pk}"
    assert not SendJob.objects.exists()


def test_the_confirm_path_refuses_a_read_tool(send_context):
    """A stored request naming a read tool never runs through the confirm path."""
    with pytest.raises(ActionRefused, match="동작 도구가 아닙니다"):
        action_perform(send_context, "search_records", {"query": "단가"}, idempotency_key="k", actor="staff")
    with pytest.raises(ActionRefused):
        action_perform(send_context, "no_such_tool", {}, idempotency_key="k", actor="staff")


def test_the_confirm_path_validates_the_arguments_again(send_context, document):
    """Tampered arguments (another vendor's record, another record than the recorded key) are refused."""
    foreign = VendorRecordFactory(vendor=VendorFactory(code="7002", name="베타유통"), title="베타 단가표")
    key = f"question:{send_context.question_id}:document:{document.pk}"
    with pytest.raises(ActionRefused, match="찾을 수 없습니다"):
        action_perform(
            send_context, "send_document", {"reference": f"record:{foreign.pk}"}, idempotency_key=key, actor="s"
        )
    other = VendorRecordFactory(vendor=send_context.vendor, title="다른 문서")
    with pytest.raises(ActionRefused, match="다른 동작"):
        action_perform(
            send_context, "send_document", {"reference": f"record:{other.pk}"}, idempotency_key=key, actor="s"
        )
    with pytest.raises(ActionRefused, match="인자가 올바르지 않습니다"):
        action_perform(
            send_context,
            "send_document",
            {"reference": f"record:{document.pk}", "vendor": "7002"},
            idempotency_key=key,
            actor="s",
        )
    assert not SendJob.objects.exists()
    _, job = action_perform(
        send_context, "send_document", {"reference": f"record:{document.pk}"}, idempotency_key=key, actor="s"
    )
    assert job.idempotency_key == key and [item.text for item in job.items.all()] == ["[2026 거래 조건]\n월말 마감."]


def test_every_irreversible_tool_plans_and_performs_and_no_other_does():
    for tool in registry._REGISTRY.values():
        irreversible = tool.grade == Grade.IRREVERSIBLE
        assert (tool.plan is not None) == irreversible and (tool.perform is not None) == irreversible
        assert (tool.handler is None) == irreversible
