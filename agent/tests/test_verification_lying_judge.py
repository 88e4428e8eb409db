"""A judge that lies clears nothing: a quote clears a violation only when it literally occurs in one evidence
passage and the engine's own parser reads in it a value of the same kind and normalised value (for a brand:
the draft's word as a whole word of the quote)."""

import pytest

from agent.tests.test_verification_engine import (
    BRAND_CASES,
    EVIDENCE,
    OTHER_VENDOR_CASES,
    VALUE_VIOLATIONS,
    kinds_and_values,
    verify,
)
from agent.verification import JudgeVerdict, Violation, rule_on_answer, split_sentences


def lying_judge(violation, evidence):
    """Always "supported", quoting the evidence sentence that shares the most characters with the value."""
    wanted = set(str(violation.text) + str(violation.value))
    sentences = [sentence.text for passage in evidence for sentence in split_sentences(passage)]
    best = max(sentences, key=lambda sentence: (len(wanted & set(sentence)), len(sentence)))
    return JudgeVerdict(verdict="supported", quote=best)


def _with_and_without_the_lying_judge(draft, evidence=EVIDENCE, **overrides):
    honest = verify(draft, evidence=evidence, **overrides)
    lied_to = verify(draft, evidence=evidence, judge=lying_judge, **overrides)
    return honest, lied_to


ENGINE_TABLE = [
    *(draft for draft, _, _ in VALUE_VIOLATIONS),
    *(draft for draft, expected in BRAND_CASES if expected),
    *(draft for draft, expected in OTHER_VENDOR_CASES if expected),
    "두 개를 사시면 30,000원 두 번이니 60,000원입니다.",
    "할인 15원, 30,000%입니다.",
    "35,000원이고 다시 말해 35,000원입니다.",
    "행사는 약 4만원입니다.",
    "할인 7%입니다.",
    "대한물산 담당자님, 삼송전자 갤럭시 공급가는 35,000원이고 할인율은 17%입니다. "
    "LG전자 제품은 한빛상사에서도 팝니다. 제안서 보내드렸습니다. 무료 배송 기준은 5만원 이상입니다.",
]


@pytest.mark.parametrize("draft", ENGINE_TABLE)
def test_the_lying_judge_clears_nothing_in_the_engine_table(draft):
    honest, lied_to = _with_and_without_the_lying_judge(draft)
    assert honest.violations
    assert lied_to.violations == honest.violations
    assert not any(ruling.cleared for ruling in lied_to.judge_rulings)


def test_a_quantity_is_not_a_percentage():
    evidence = ["솔빛 참치캔 12개입 행사: 6박스 이상 주문 시 적용되며 단가는 18,000원입니다."]
    draft = "솔빛 참치캔 12개입은 6% 할인됩니다."

    def judge(violation, evidence):
        return {"verdict": "supported", "quote": "6박스 이상 주문 시 적용되며"}

    result = verify(draft, evidence=evidence, judge=judge, brands=[])
    assert kinds_and_values(result) == [("percent", 6)]
    assert result.judge_rulings[0].detail == "quote does not contain the value"


def test_a_count_is_not_a_rate():
    evidence = ["가을 행사 안내. 30개 이상 주문 시 적용됩니다. 행사 할인율은 15%입니다."]
    draft = "가을 행사 할인율은 30%입니다."
    result = verify(
        draft,
        evidence=evidence,
        brands=[],
        judge=lambda v, e: {"verdict": "supported", "quote": "30개 이상 주문 시 적용됩니다."},
    )
    assert kinds_and_values(result) == [("percent", 30)]


def test_a_brand_is_not_joined_across_spaces():
    evidence = ["다온펌 농장 직송. 다온 팜 스테이 행사 참여 업체 모집."]
    draft = "다온팜 농장 직송 상품입니다."
    brands = ["다온펌"]
    honest = verify(draft, evidence=evidence, brands=brands)
    assert kinds_and_values(honest) == [("brand_misspelt", "다온팜")]
    result = verify(
        draft,
        evidence=evidence,
        brands=brands,
        judge=lambda v, e: {"verdict": "supported", "quote": "다온 팜 스테이 행사"},
    )
    assert kinds_and_values(result) == [("brand_misspelt", "다온팜")]


def test_a_quote_cannot_cut_a_value_out_of_a_longer_number():
    evidence = ["공급가 12만 3,400원 (부가세 별도)"]
    result = verify(
        "공급가는 3,400원입니다.", evidence=evidence, judge=lambda v, e: {"verdict": "supported", "quote": "3,400원"}
    )
    assert kinds_and_values(result) == [("amount", 3400)]


@pytest.mark.parametrize(
    ("quote", "cleared"),
    [
        ("다온팜은 직송", True),  # a particle after the word
        ("다온팜 스테이", True),
        ("신다온팜 스테이", False),  # inside a longer word
        ("다온팜스테이", False),  # the start of a compound
        ("다온 팜 스테이", False),
    ],
)
def test_a_brand_quote_holds_the_drafts_word_as_a_whole_word(quote, cleared):
    violation = Violation(kind="brand_unsupported", value="다온팜", text="다온팜", span=(0, 3), reason="")
    ruling = rule_on_answer(violation, {"verdict": "supported", "quote": quote}, (f"안내: {quote} 외",))
    assert ruling.cleared is cleared
