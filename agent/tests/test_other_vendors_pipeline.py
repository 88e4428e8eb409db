"""Other vendors against a model that disobeys, through the real pipeline: the `openai` provider over real HTTP to
the fake OpenAI-compatible server, whose model searches the hub, then writes what the test makes it write — every
spelling of another vendor's name, a masked vendor's figure with and without a reference to it, another vendor's
brand — and repeats it after every feedback. Retrieval runs for real (records on PostgreSQL, the hub on LightRAG
files); the judge is the same model and lies (always "supported", quoting the evidence).
"""

import json

import pytest

from agent.llm.fake_server import FakeOpenAIServer, FakeResponse, chat_completion_body
from agent.llm.openai_compat import OpenAICompatibleProvider
from agent.llm.prompts import JUDGE_SYSTEM_PROMPT
from agent.services import question_process
from conversations.models import Question
from conversations.tests.factories import QuestionFactory, RoomFactory
from delivery.models import SendJob
from monitoring.services import marker_accepted_write
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory, VendorRecordFactory

STOCKOUT_REPORT = (
    "협력사 결품 현황\n"
    "가온상사는 결품률 4.2%로 기준 3%를 넘었습니다.\n"
    "대한물산은 결품률 1.1%로 기준 이내입니다.\n"
    "가온상사, 대한물산 같은 냉장 거래처는 입고 때 온도 기록지를 제출합니다."
)
KIMCHI_PROMOTION = (
    "김장 행사 안내\n"
    "고운들 절임배추 10kg 행사가는 29,900원입니다.\n"
    "한빛식품 참기름 1L 행사가는 12,000원입니다.\n"
    "행사 상품은 점포별 재고 소진 시 종료됩니다."
)
OWN_LINE = "귀사의 결품률은 1.1%입니다."
OTHER_VENDOR_ANSWER = "다른 협력사의 거래 정보는 안내해 드릴 수 없습니다. 양해 부탁드립니다."


class DisobedientModel(FakeOpenAIServer):
    """The fake server with a model behind it: with tools and no tool result yet it calls `search_hub` with
    `query`; a judge request is answered "supported" with the evidence's first line; any other request gets the
    next of `drafts` (the last one repeats: a stubborn model)."""

    def __init__(self, *, query: str, drafts: list[str]):
        super().__init__()
        self.query = query
        self.drafts = list(drafts)

    def _next_response(self, request: dict) -> FakeResponse:
        with self._lock:
            self.requests.append(request)
        messages = request["body"].get("messages", [])
        if messages and messages[0].get("content") == JUDGE_SYSTEM_PROMPT:
            quote = messages[-1]["content"].split("[1] ", 1)[-1].splitlines()[0]
            return FakeResponse(200, chat_completion_body(content=json.dumps({"verdict": "supported", "quote": quote})))
        if request["body"].get("tools") and not any(message["role"] == "tool" for message in messages):
            call = {"id": "call-1", "name": "search_hub", "arguments": json.dumps({"query": self.query})}
            return FakeResponse(200, chat_completion_body(content="", tool_calls=[call]))
        draft = self.drafts.pop(0) if len(self.drafts) > 1 else self.drafts[0]
        return FakeResponse(200, chat_completion_body(content=draft))

    def prompts(self) -> str:
        """Everything the model was sent, as one text."""
        return "\n".join(json.dumps(request["body"], ensure_ascii=False) for request in self.requests)


@pytest.fixture
def world(db, knowledge_stores):
    """대한물산 (the counterpart) and 가온상사 (alias GAON SANGSA); a shared hub report naming both beside their
    figures, and a shared promotion naming 가온상사's brand 고운들 and the shared brand 한빛식품."""
    from agent.knowledge.hub import hub_document_ingest

    daehan = VendorFactory(code="1001", name="대한물산", aliases=[])
    gaon = VendorFactory(code="1002", name="가온상사", aliases=["GAON SANGSA"])
    VendorFactory(code="1003", name="가온상회", aliases=[])
    VendorRecordFactory(vendor=daehan, title="대한물산 결제 조건", body="월말 마감 후 익월 10일에 현금으로 결제합니다.")
    shared, gaon_only = BrandFactory(name="한빛식품"), BrandFactory(name="고운들")
    ProductFactory(vendor=daehan, brand=shared, name="한빛식품 참기름 1L", sku="DH-001", unit_price=15000)
    ProductFactory(vendor=gaon, brand=shared, name="한빛식품 참기름 1L", sku="GA-001", unit_price=14000)
    ProductFactory(vendor=gaon, brand=gaon_only, name="고운들 절임배추 10kg", sku="GA-002", unit_price=32000)
    for workspace, title, content in (
        ("policies", "협력사 결품 현황", STOCKOUT_REPORT),
        ("promotions", "김장 행사", KIMCHI_PROMOTION),
    ):
        document = hub_document_ingest(workspace=workspace, title=title, content=content, actor="test")
        assert document.status == document.Status.INGESTED, document.error
    return {"daehan": daehan, "gaon": gaon, "room": RoomFactory(vendor=daehan, stable_key="chat-1001")}


def answer(world, question_text, model: DisobedientModel, *, room=None):
    question = QuestionFactory(message__room=room or world["room"], text=question_text)
    marker_accepted_write(question=question)
    with model:
        provider = OpenAICompatibleProvider(base_url=model.base_url, model="disobedient", max_retries=0)
        run = question_process(question.pk, provider=provider)
    question.refresh_from_db()
    return question, run


SPELLINGS = ["가온상사", "가온 상사", "가온\u200b상사", "ㄱㅏ온상사", "GAON  SANGSA", "gaon-sangsa", "가온-상사"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_no_spelling_of_another_vendor_reaches_a_prompt_or_the_answer(world, spelling):
    """The vendor asks about 가온상사 in any spelling; the model writes the same spelling after every feedback."""
    model = DisobedientModel(query="협력사 결품 현황", drafts=[f"{spelling}의 결품률은 기준을 넘었습니다. {OWN_LINE}"])

    question, run = answer(world, f"{spelling} 결품률은 어떻게 되나요?", model)

    prompts = model.prompts()
    assert spelling not in prompts and "가온상사" not in prompts and "[다른 벤더] 결품률" in prompts
    assert question.status == Question.Status.ANSWERED
    assert run.final_text == OWN_LINE
    kinds = {violation["kind"] for violation in run.rounds.first().violations}
    assert "other_vendor" in kinds


def test_a_name_one_syllable_off_another_vendors_is_removed(world):
    model = DisobedientModel(query="협력사 결품 현황", drafts=[f"가온상샤는 결품률이 높습니다. {OWN_LINE}"])

    question, run = answer(world, "결품률은 어떻게 되나요?", model)

    assert (question.status, run.final_text) == (Question.Status.ANSWERED, OWN_LINE)


def test_a_masked_vendors_figure_never_supports_an_answer(world):
    """The shared report states 4.2% only about a masked vendor: the model writes it with `해당 협력사`, then without
    any reference, stubbornly; neither reaches the vendor. The vendor's own figure (1.1%) does."""
    model = DisobedientModel(
        query="협력사 결품 현황",
        drafts=[f"해당 협력사는 결품률 4.2%입니다. {OWN_LINE}", f"결품률 4.2%가 확인됩니다. {OWN_LINE}"],
    )

    question, run = answer(world, "결품률은 어떻게 되나요?", model)

    assert question.status == Question.Status.ANSWERED
    assert run.final_text == OWN_LINE
    first, second = (list(run_round.violations) for run_round in run.rounds.order_by("number")[:2])
    assert {(v["kind"], v["text"]) for v in first} >= {("other_vendor", "해당 협력사"), ("other_vendor_value", "4.2%")}
    assert [(v["kind"], v["value"]) for v in second] == [("other_vendor_value", 4.2)]
    assert SendJob.objects.filter(question=question).count() == 1


def test_a_rule_naming_vendors_as_examples_still_supports(world):
    model = DisobedientModel(
        query="냉장 거래처 온도 기록지", drafts=["냉장 거래처는 입고 때 온도 기록지를 제출합니다."]
    )

    question, run = answer(world, "냉장 거래처 입고 서류가 뭔가요?", model)

    assert question.status == Question.Status.ANSWERED
    assert run.final_text == "냉장 거래처는 입고 때 온도 기록지를 제출합니다."


def test_another_vendors_brand_and_its_promotion_prices_stay_hidden(world):
    """`고운들` is carried only by 가온상사: the question reaches the model masked, the promotion price next to it
    supports nothing, and the brand may not be named; the shared brand 한빛식품 and its price stay."""
    model = DisobedientModel(
        query="김장 행사 안내",
        drafts=[
            "고운들 절임배추 행사가는 29,900원입니다. 한빛식품 참기름 1L 행사가는 12,000원입니다.",
            "절임배추 10kg 행사가는 29,900원입니다. 한빛식품 참기름 1L 행사가는 12,000원입니다.",
        ],
    )

    question, run = answer(world, "고운들 절임배추 행사가 얼마예요?", model)

    prompts = model.prompts()
    assert "고운들" not in prompts and "[다른 벤더 상품] 절임배추" in prompts
    assert "한빛식품 참기름 1L 행사가는 12,000원" in prompts
    assert "29,900" not in run.final_text and "고운들" not in run.final_text
    assert (question.status, run.final_text) == (
        Question.Status.ANSWERED,
        "한빛식품 참기름 1L 행사가는 12,000원입니다.",
    )


def test_in_a_staff_room_other_vendors_figures_are_not_violations(world):
    from conversations.models import Room

    internal = RoomFactory(vendor=world["daehan"], kind=Room.Kind.INTERNAL, stable_key="chat-internal")
    model = DisobedientModel(query="협력사 결품 현황", drafts=["결품률 4.2%가 확인됩니다."])

    question, run = answer(world, "결품률 현황", model, room=internal)

    assert (question.status, run.final_text) == (Question.Status.ANSWERED, "결품률 4.2%가 확인됩니다.")


def test_a_masked_vendors_date_never_supports_an_answer(world):
    """A shared schedule states the 20th only as 가온상사's settlement day: a stubborn model's `정산일은 매월 20일`
    never reaches 대한물산; its own day (the 10th) does."""
    from agent.knowledge.hub import hub_document_ingest

    schedule = "협력사 정산 일정\n가온상사의 정산일은 매월 20일입니다.\n대한물산의 정산일은 매월 10일입니다."
    document = hub_document_ingest(workspace="policies", title="협력사 정산 일정", content=schedule, actor="test")
    assert document.status == document.Status.INGESTED, document.error
    own = "귀사의 정산일은 매월 10일입니다."
    model = DisobedientModel(query="협력사 정산 일정", drafts=[f"정산일은 매월 20일입니다. {own}"])

    question, run = answer(world, "정산일이 언제예요?", model)

    assert "[다른 벤더]의 정산일은 매월 20일" in model.prompts()
    assert (question.status, run.final_text) == (Question.Status.ANSWERED, own)
    assert [(v["kind"], v["value"]) for v in run.rounds.first().violations] == [("other_vendor_value", "day:20")]


@pytest.mark.parametrize(
    "question_text",
    [
        "가온상사는 한빛식품 참기름 1L 얼마에 넣어요?",
        "가온 상사 쪽이 참기름 넣는 단가 좀 알려주세요",
        "GAON SANGSA의 결제 조건은 어떻게 되나요?",
    ],
)
def test_a_question_about_another_vendor_is_answered_with_the_guidance_before_any_model_call(world, question_text):
    """The model would answer with the counterpart's own price, which would read as 가온상사's: the question is
    decided in code, the model is never asked, and the answer names no figure."""
    model = DisobedientModel(query="한빛식품 참기름", drafts=["한빛식품 참기름 1L 15,000원입니다."])

    _, run = answer(world, question_text, model)

    assert model.requests == []
    assert (run.outcome, run.final_text) == ("no_evidence", OTHER_VENDOR_ANSWER)


def test_a_question_about_goods_once_sent_through_another_vendor_is_still_answered(world):
    """`가온상사 통해서 넣던 물량` is the counterpart's own goods: the route names the other vendor, the question is
    the counterpart's own, so the model is asked as usual."""
    model = DisobedientModel(query="대한물산 결제 조건", drafts=["월말 마감 후 익월 10일에 현금으로 결제합니다."])

    _, run = answer(world, "가온상사 통해서 넣던 물량 결제는 언제 돼요?", model)

    assert model.requests != []
    assert run.final_text != OTHER_VENDOR_ANSWER
