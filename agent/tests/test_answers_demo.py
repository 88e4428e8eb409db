"""Answers on the demo data through `manage.py ask`, with the local answerer: each example of a question that used
to get a heading, another subject's value, an ended promotion or the previous answer now gets the fact asked for
— or the guidance answer when nothing in the evidence answers.

The demo dataset is loaded once for the module (committed, removed again at the end): loading it costs more
than all the questions together.
"""

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings

from agent.evaluation import answer_defects
from agent.knowledge.faq_index import faq_index_reset
from agent.knowledge.hub_runtime import runtime_reset
from agent.llm.focus import question_focus
from agent.llm.prompts import guidance_answer
from agent.models import (
    FaqEntry,
    FaqVersion,
    KnowledgeDocument,
    KnowledgeDocumentVersion,
    KnowledgeTermCount,
    KnowledgeWorkspace,
)
from monitoring.models import AuditEvent
from vendors.models import Brand, Product, RecordImport, Vendor, VendorRecord

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

ROOM = "(1001) 대한물산"
ASKED_ON = "2026-12-01"  # the demo data's "today": the 11~12월 promotion runs, the 7~8월 one has ended


@pytest.fixture(scope="module", autouse=True)
def demo_data(django_db_setup, django_db_blocker, tmp_path_factory):
    from demo.scenario import demo_data_load

    folder = tmp_path_factory.mktemp("demo-stores")
    stores = override_settings(
        QDRANT_URL="", QDRANT_PATH=str(folder / "qdrant"), LIGHTRAG_WORKING_DIR=str(folder / "lightrag")
    )
    with django_db_blocker.unblock(), stores:
        faq_index_reset()
        runtime_reset()
        demo_data_load(io.StringIO())
        yield
        faq_index_reset()
        runtime_reset()
        # The data was committed outside the tests' transactions: everything the demo load writes goes, or later
        # tests on this worker see it (the domain-term counts decide what the local extractor makes entities of).
        demo_models = (
            Product,
            VendorRecord,
            RecordImport,
            Vendor,
            Brand,
            FaqVersion,
            FaqEntry,
            KnowledgeDocumentVersion,
            KnowledgeDocument,
            KnowledgeTermCount,
        )
        for model in demo_models:
            model.objects.all().delete()
        AuditEvent.objects.all().delete()
        get_user_model().objects.filter(username="demo").delete()
        KnowledgeWorkspace.objects.update(revision=0)


def ask(question: str, *history: str, room: str = ROOM) -> dict:
    out = io.StringIO()
    arguments = [question, "--room", room, "--json", "--date", ASKED_ON]
    for earlier in history:
        arguments += ["--history", earlier]
    call_command("ask", *arguments, stdout=out)
    result = json.loads(out.getvalue())
    answer = result["answer"].split("참고 자료:")[0]
    assert not answer_defects(answer), answer_defects(answer)  # no heading fragment, no sentence twice
    return {**result, "body": answer.strip()}


def test_a_settlement_date_question_gets_a_payment_date_not_heading_paths():
    """`정산일이 언제예요?` used to be answered with three heading paths; now a sentence stating when payment is made
    (the vendor's own settlement record comes before the shared policy)."""
    result = ask("정산일이 언제예요?")

    assert result["status"] == "answered"
    assert " > " not in result["body"]
    assert any(date in result["body"] for date in ("2026-12-10", "2026-12-25", "15일에 지급"))


def test_a_contract_period_question_gets_the_contract_period_not_a_discount():
    result = ask("계약 기간이 어떻게 돼요?")

    assert result["status"] == "answered"
    assert "할인" not in result["body"]
    assert any(fact in result["body"] for fact in ("1년", "2026-12-31"))


def test_a_returns_period_question_gets_a_returns_deadline_not_the_inventory_notice():
    result = ask("반품 기간은요?")

    assert result["status"] == "answered"
    assert "재고 조사" not in result["body"] and "반품" in result["body"]


def test_a_discount_question_gets_the_current_promotion_only():
    """Not the ended 18% summer promotion and not the 50% maximum of the shared policy."""
    result = ask("할인율이 얼마예요?")

    assert result["status"] == "answered"
    assert "15%" in result["body"]
    assert "18%" not in result["body"] and "50%" not in result["body"]
    assert not any("18%" in item["text"] for item in result["evidence"])  # the ended one is not even evidence


def test_a_follow_up_uses_the_rewritten_querys_aspect_not_the_previous_answer():
    previous = ask("반품 접수는 어떻게 하나요?")
    result = ask("그럼 기간은요?", "반품 접수는 어떻게 하나요?")

    assert result["search_query"] != "그럼 기간은요?"
    assert result["status"] == "answered"
    assert result["body"] != previous["body"]
    assert "영업일" in result["body"]


def test_what_a_follow_up_adds_is_answered_not_the_topic_it_carries_over():
    """ "그럼 점포 재고는요?" keeps the recall topic of the question before and asks its aspect (within how many
    hours), but about the stores' stock: the sales-stop sentence of the same passage is no answer."""
    result = ask("그럼 점포 재고는요?", "리콜 결정되면 판매 중지는 몇 시간 안에 되나요?")

    assert result["status"] == "answered"
    assert "48시간" in result["body"]
    assert "2시간 안에" not in result["body"]


def test_the_returns_approval_deadline_is_one_value_not_two():
    """3 and 5 영업일 came from two sources for one subject; the newer wins and the other is not evidence."""
    result = ask("반품 승인 기한")

    assert result["status"] == "answered"
    assert ("3영업일" in result["body"]) != ("5영업일" in result["body"])
    shown = " ".join(item["text"] for item in result["evidence"])
    assert not ("3영업일 안에" in shown and "5영업일 이내 승인" in shown)


def test_a_question_about_the_vendors_own_payment_reaches_its_payment_terms():
    result = ask("물건값은 매달 며칠에 결제돼요?")

    assert any(item["source_kind"] == "record" and "결제 조건" in item["text"] for item in result["evidence"])
    assert "익월 25일" in result["body"]


def test_a_brand_the_room_carries_said_short_is_its_own_brand_not_the_vendor_of_that_name():
    """`한빛` is also 한빛유통's alias; in 세림식품's room, which carries 한빛식품, `한빛 깍두기` is that brand's
    product and gets its price (the searches still receive the question with the alias masked)."""
    result = ask("한빛 깍두기 5키로 저희 납품 단가 얼마예요?", room="(1007) 세림식품")

    assert result["status"] == "answered" and "17,500원" in result["body"]
    assert all("한빛" not in call["arguments"]["query"] for call in result["tool_calls"])


@pytest.mark.parametrize("question", ["휴가 신청은 어떻게 하나요?", "와이파이 비밀번호 알려줘"])
def test_near_domain_off_topic_questions_get_the_guidance_answer(question):
    result = ask(question)

    assert result["status"] == "no_evidence"
    assert result["answer"] == guidance_answer()


def test_the_pipeline_never_holds_an_answerable_question_for_want_of_a_sentence():
    """Evidence but no answering sentence is the guidance answer, not `held`."""
    result = ask("법인카드 한도가 얼마예요?")

    assert result["status"] == "no_evidence"


def test_a_payment_day_question_in_other_words_reaches_the_vendors_contract_terms():
    """`대금` is written `결제` in the contract: the records search relates the two, and the vendor's own terms win
    over the shared settlement policy (다음 달 15일)."""
    result = ask("대금은 매달 며칠에 들어와요?", room="(1020) 삼광산업")

    assert any(item["source_kind"] == "record" and "결제 조건" in item["text"] for item in result["evidence"])
    assert "익월 10일" in result["body"]
    assert "15일" not in result["body"]


def test_a_settlement_records_past_tense_sentence_is_delivered_not_flagged_as_an_action_claim():
    """`… 지급 완료했습니다` is the vendor's settlement record word for word, not the agent claiming it paid."""
    result = ask("10월 매입 정산 금액 얼마 나왔어요?", room="(1005) 한빛유통서비스")

    assert result["status"] == "answered"
    assert "36,950,000원" in result["body"]
    assert not any(v["kind"] == "action_claim" for r in result["rounds"] for v in r["violations"])


def test_a_verb_in_the_question_is_not_required_of_the_answer():
    """`받고` is a verb form (read by the morphological analyser): the FAQ answer saying `발주 수신 후 24시간 이내`
    answers, although it does not repeat the verb."""
    result = ask("발주 확정은 발주 받고 몇 시간 안에 해야 해요?")

    assert result["status"] == "answered"
    assert "24시간" in result["body"]


def test_a_number_a_follow_up_adds_is_what_it_asks_about():
    result = ask("그럼 1/2면 광고비는요?", "전단 광고비는 얼마예요?")

    assert "55만 원" in result["body"]


def test_a_price_list_answer_holds_only_the_item_asked_not_the_look_alike_brands():
    """The record lists three items' prices in one sentence; the vendor asking 해닮제과 전통 약과 gets that item only,
    not 해담제과's (a look-alike brand) nor the same brand's other product beside it."""
    result = ask("해닮제과 전통 약과 1kg 공급가 얼마로 돼 있어요?", room="(1016) 금강제과")

    assert result["status"] == "answered"
    assert result["body"] == "해닮제과 전통 약과 1kg 12,800원."


@pytest.mark.parametrize(
    ("question", "room", "price", "other"),
    [
        # the paper the asker saw the price on is not a word the record must write
        ("산들찬 고추장 3kg 저희 공급가 계약서에 얼마로 돼 있어요?", "(1001) 대한물산", "14,100원", "14,800원"),
        # nor is the box the product is packed in
        (
            "사과 10kg 한 박스 납품가 계약에 얼마로 돼 있었는지 기억이 안 나서요",
            "(1011) 청정농산",
            "49,400원",
            "46,600원",
        ),
    ],
)
def test_a_contract_price_asked_by_the_paper_or_the_box_it_comes_in_is_the_contracts_price(
    question, room, price, other
):
    result = ask(question, room=room)

    assert result["status"] == "answered"
    assert price in result["body"] and other not in result["body"]


def test_the_boxes_of_an_order_asked_are_what_the_order_counts():
    """`오더 잡힌 거 박스 수`: asked of an order, the boxes are the order's count, still to be named by its record."""
    assert "박스" in question_focus("사과 10kg 한 박스 납품가 얼마예요?").optional
    focus = question_focus("국물용 멸치 1.5kg 오더 잡힌 거 박스 수하고 총액 얼마로 찍혔는지 봐주세요")
    assert "박스" in focus.subject and "박스" not in focus.optional


@pytest.mark.parametrize(
    ("question", "history", "room", "fact"),
    [
        (
            "냉장 제품은 몇 도 범위로 맞추면 돼요?",
            "냉동 상품 납품할 때 온도 기준이 어떻게 돼요?",
            "(1018) 푸른들유통",
            "0~10도",
        ),
        (
            "MD님이 발주 넣으면 저희가 확정 버튼 누르는 데 시간 제한 있나요? 있으면 몇 시간이에요",
            None,
            "(1004) 한빛유통",
            "24시간",
        ),
    ],
)
def test_the_form_a_value_takes_is_not_a_subject_the_answer_must_name(question, history, room, fact):
    """`몇 도 범위`, `시간 제한`, `얼마 간격`: words for the form of the value asked, as 기간 and 기준 are."""
    result = ask(question, *([history] if history else []), room=room)

    assert result["status"] == "answered"
    assert fact in result["body"]
