"""Swapped values (value_mismatch): true values given to the wrong subject. Precision first: no false flag on any
clean draft; recall measured on the table below (the figures are in docs/verification.md)."""

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from agent.llm.hostile_server import SWAPPABLE
from agent.tests.test_verification_engine import EVIDENCE as ENGINE_EVIDENCE
from agent.tests.test_verification_engine import verify as engine_verify
from agent.tests.test_verification_values import EVIDENCE as VALUE_EVIDENCE
from agent.tests.test_verification_values import SUPPORTED_DRAFTS
from agent.tests.test_verification_values import verify as values_verify
from agent.verification import parse_quantities, verify_draft
from agent.verification.sentences import split_sentences
from agent.verification.values import parse_values

CANS = "솔빛 고등어캔 400g 4,800원, 솔빛 꽁치캔 400g 3,900원"
TABLE = "| 상품 | 규격 | 단가 |\n| 솔빛 고등어캔 | 400g | 4,800원 |\n| 솔빛 꽁치캔 | 400g | 3,900원 |"
PROMOTIONS = "가을 행사 할인율 15%, 겨울 행사 할인율 20%"
PACKS = "솔빛 참치캔 12개입 18,000원 / 솔빛 꽁치캔 24개입 20,000원"
SKUS = "SKU A-1023 생수 2L 단가 6,500원. SKU B-2040 생수 500ml 단가 9,800원."
VOLUMES = "다온 주방세제 1.5L 7,900원, 다온 섬유유연제 2L 9,900원"
PAYMENTS = "한빛 식자재 정산 수수료 3%, 한빛 생활용품 정산 수수료 5%."
SETTLEMENT = "A사 정산일은 매월 10일, B 상품 납품 마감은 매월 25일입니다."
PAYDAYS = "식자재 대금 지급일은 익월 10일, 생활용품 대금 지급일은 익월 25일입니다."
DEADLINES = "설 선물세트 발주 마감은 12월 10일, 신년 행사 발주 마감은 12월 20일입니다."
PERIOD = "겨울 행사 기간은 12월 3일부터 12월 17일까지입니다. 행사 단가는 19,900원입니다."
CUTOFFS = "냉장 배송 마감 오후 2시, 상온 배송 마감 오후 5시"
RECEIVING = "물류센터 입고는 오전 6시부터 오후 2시까지 받습니다."
DELIVERY_DAYS = "솔빛 포기김치는 매주 화요일, 솔빛 절임배추는 매주 목요일에 납품합니다."


def mismatch_violations(draft, evidence):
    result = verify_draft(
        draft,
        evidence=evidence,
        known_brands=["솔빛", "다온"],
        counterpart_names=["대한물산"],
        other_vendor_names=[],
        confirmed_actions=[],
    )
    return [violation for violation in result.violations if violation.kind == "value_mismatch"]


def mismatches(draft, evidence):
    return [(violation.value, violation.suggestion) for violation in mismatch_violations(draft, evidence)]


# (draft, evidence, the swaps a careful reader finds: [(draft value, the evidence's value for its subject)])
CASES = [
    # swaps of two products' prices
    ("고등어캔은 3,900원이고 꽁치캔은 4,800원입니다.", [CANS], [(3900, "4,800원"), (4800, "3,900원")]),
    ("고등어캔은 3,900원입니다.", [CANS], [(3900, "4,800원")]),
    ("솔빛 꽁치캔은 4,800원에 공급됩니다.", [CANS], [(4800, "3,900원")]),
    ("고등어캔 단가는 3,900원, 꽁치캔 단가는 4,800원입니다.", [CANS], [(3900, "4,800원"), (4800, "3,900원")]),
    ("고등어캔은 3,900원이고 꽁치캔은 4,800원입니다.", [TABLE], [(3900, "4,800원"), (4800, "3,900원")]),
    ("A-1023은 9,800원입니다.", [SKUS], [(9800, "6,500원")]),
    ("주방세제는 9,900원입니다.", [VOLUMES], [(9900, "7,900원")]),
    # swaps of two promotions' rates
    ("가을 행사 할인율은 20%입니다.", [PROMOTIONS], [(20, "15%")]),
    ("겨울 행사는 15% 할인입니다.", [PROMOTIONS], [(15, "20%")]),
    ("식자재 정산 수수료는 5%입니다.", [PAYMENTS], [(5, "3%")]),
    # swaps of two pack sizes (and volumes)
    (
        "참치캔은 24개입, 꽁치캔은 12개입입니다.",
        [PACKS],
        [({"value": 24, "unit": "개입"}, "12개입"), ({"value": 12, "unit": "개입"}, "24개입")],
    ),
    ("참치캔은 24개입입니다.", [PACKS], [({"value": 24, "unit": "개입"}, "12개입")]),
    ("주방세제는 2L 용량입니다.", [VOLUMES], [({"value": 2000, "unit": "ml"}, "1,500ml")]),
    ("고등어캔은 3,900원입니다.", ["솔빛 고등어캔 4,800원", "솔빛 꽁치캔 3,900원"], [(3900, "4,800원")]),
    # swaps of two subjects' days of the month, next-month days and calendar dates
    (
        "A사 정산일은 매월 25일이고 B 상품 납품 마감은 매월 10일입니다.",
        [SETTLEMENT],
        [("day:25", "10일"), ("day:10", "25일")],
    ),
    ("정산일은 매월 25일입니다.", [SETTLEMENT], [("day:25", "10일")]),
    ("식자재 대금 지급일은 익월 25일입니다.", [PAYDAYS], [("next_month_day:25", "10일")]),
    ("설 선물세트 발주 마감은 12월 20일입니다.", [DEADLINES], [("12-20", "12월 10일")]),
    # a period's ends exchanged
    (
        "겨울 행사 기간은 12월 17일부터 12월 3일까지입니다.",
        [PERIOD],
        [("12-17", "12월 3일"), ("12-03", "12월 17일")],
    ),
    (
        "물류센터 입고는 오후 2시부터 오전 6시까지입니다.",
        [RECEIVING],
        [("14:00", "오전 6시"), ("06:00", "오후 2시")],
    ),
    # swaps of two subjects' clock times (a bare hour too) and weekdays
    (
        "냉장 배송 마감은 오후 5시, 상온 배송 마감은 오후 2시입니다.",
        [CUTOFFS],
        [("17:00", "오후 2시"), ("14:00", "오후 5시")],
    ),
    ("냉장 배송 마감은 5시입니다.", [CUTOFFS], [("05:00", "오후 2시")]),
    (
        "포기김치는 목요일, 절임배추는 화요일에 납품합니다.",
        [DELIVERY_DAYS],
        [("weekday:thu", "화요일"), ("weekday:tue", "목요일")],
    ),
    # no swap: the right values, a value for no subject, an ambiguous subject, a value found nowhere
    ("고등어캔은 4,800원이고 꽁치캔은 3,900원입니다.", [CANS], []),
    ("솔빛 고등어캔 400g은 4,800원입니다.", [CANS], []),
    ("솔빛 제품은 3,900원부터 있습니다.", [CANS], []),  # 솔빛 alone has two prices
    ("고등어캔과 꽁치캔은 각각 4,800원, 3,900원입니다.", [CANS], []),
    ("고등어캔은 4,500원입니다.", [CANS], []),  # found nowhere: only an amount violation
    ("가을 행사 할인율은 15%입니다.", [PROMOTIONS], []),
    ("참치캔은 12개입이고 18,000원입니다.", [PACKS], []),
    ("A-1023은 6,500원, B-2040은 9,800원입니다.", [SKUS], []),
    ("고등어캔은 400g입니다.", [CANS], []),  # both cans are 400g
    (
        "고등어캔은 4,800원에서 3,900원으로 인하됩니다.",
        ["솔빛 고등어캔 4,800원에서 3,900원으로 인하, 솔빛 꽁치캔 3,900원"],
        [],
    ),
    ("배송비는 3,900원입니다.", ["배송비 3,900원, 솔빛 고등어캔 4,800원"], []),
    ("꽁치캔 400g 한 캔은 3,900원입니다.", [CANS], []),
    ("행사 할인율은 20%입니다.", [PROMOTIONS], []),  # which promotion is not said
    ("주방세제 1.5L는 7,900원, 섬유유연제 2L는 9,900원입니다.", [VOLUMES], []),
    # no swap among dates and times: the right values, a period's end alone, a value found nowhere, an ambiguous
    # subject, a change stated as such, a weekday list for two subjects
    ("A사 정산일은 매월 10일이고 B 상품 납품 마감은 매월 25일입니다.", [SETTLEMENT], []),
    ("정산일은 매월 15일입니다.", [SETTLEMENT], []),  # found nowhere: only a date violation
    ("식자재 대금 지급일은 익월 10일입니다.", [PAYDAYS], []),
    ("대금 지급일은 익월 25일입니다.", [PAYDAYS], []),  # whose payment day is not said
    ("겨울 행사 기간은 12월 3일부터 12월 17일까지입니다.", [PERIOD], []),
    ("겨울 행사는 12월 17일까지입니다.", [PERIOD], []),
    ("물류센터 입고는 오전 6시부터 오후 2시까지입니다.", [RECEIVING], []),
    ("배송 마감은 오후 2시입니다.", [CUTOFFS], []),  # both cut-offs are 배송 마감
    ("냉장 배송 마감은 오전 5시입니다.", [CUTOFFS], []),  # 05:00 is found nowhere: only a time violation
    ("냉장 배송 마감 2시, 상온 배송 마감 5시입니다.", [CUTOFFS], []),
    ("포기김치와 절임배추는 화요일, 목요일에 납품합니다.", [DELIVERY_DAYS], []),
    ("정산일은 매월 10일에서 매월 25일로 변경됩니다.", ["A사 정산일은 매월 10일에서 매월 25일로 변경됩니다."], []),
    (
        "설 선물세트 발주 마감은 12월 5일(금)입니다.",
        ["설 선물세트 발주 마감은 12월 5일(금), 신년 행사 발주 마감은 12월 12일(금)입니다."],
        [],
    ),
]
# Swaps the engine does not see (recall): a two-syllable subject; the value split from its subject by parentheses;
# two subjects whose times differ only by 오전/오후 (times are compared on the twelve-hour dial, where a bare 9시 is
# either).
MISSED = [
    ("참치는 20,000원입니다.", ["참치 18,000원, 꽁치 20,000원"], [(20000, "18,000원")]),
    ("A-1023은 9,800원입니다.", ["A-1023 (생수 2L) 6,500원 / B-2040 (생수 500ml) 9,800원"], [(9800, "6,500원")]),
    (
        "생수는 목요일에 납품합니다.",
        ["솔빛 생수는 매주 화요일, 솔빛 주스는 매주 목요일에 납품합니다."],
        [("weekday:thu", "화요일")],
    ),
    ("냉장 입고는 오후 9시입니다.", ["냉장 입고 오전 9시, 냉동 입고 오후 9시"], [("21:00", "오전 9시")]),
]


@pytest.mark.parametrize(("draft", "evidence", "swaps"), CASES)
def test_swaps_are_flagged_with_the_evidence_value_and_nothing_else_is(draft, evidence, swaps):
    assert mismatches(draft, evidence) == swaps


@pytest.mark.parametrize(("draft", "evidence", "swaps"), MISSED)
def test_the_swaps_it_does_not_see_flag_nothing_else(draft, evidence, swaps):
    assert mismatches(draft, evidence) == []


def precision_and_recall() -> tuple[float, float, int, int, int]:
    true_positives = false_positives = false_negatives = 0
    for draft, evidence, swaps in CASES + MISSED:
        found = mismatches(draft, evidence)
        true_positives += sum(1 for swap in found if swap in swaps)
        false_positives += sum(1 for swap in found if swap not in swaps)
        false_negatives += sum(1 for swap in swaps if swap not in found)
    precision = true_positives / (true_positives + false_positives) if true_positives + false_positives else 1.0
    return (
        precision,
        true_positives / (true_positives + false_negatives),
        true_positives,
        false_positives,
        false_negatives,
    )


def test_precision_is_perfect_and_recall_as_documented():
    precision, recall, true_positives, false_positives, false_negatives = precision_and_recall()
    assert (true_positives, false_positives, false_negatives) == (32, 0, 4)
    assert precision == 1.0 and recall == pytest.approx(32 / 36)


@pytest.mark.parametrize("draft", SUPPORTED_DRAFTS)
def test_no_swap_in_the_clean_drafts_of_the_value_table(draft):
    assert values_verify(draft, evidence=VALUE_EVIDENCE).violations == ()


@pytest.mark.parametrize(
    "draft",
    [
        "공급가는 30,000원입니다.",
        "삼성전자 갤럭시 공급가는 30,000원이고 할인율은 15%입니다.",
        "무료 배송은 50,000원 이상이고 반품 수수료는 약 3천원입니다.",
        "진라면 행사는 3만원부터 5만원까지이고 행사 할인은 5~10%입니다.",
        "전년 대비 2%p 올랐습니다.",
    ],
)
def test_no_swap_in_the_clean_drafts_of_the_engine_table(draft):
    assert engine_verify(draft, evidence=ENGINE_EVIDENCE).violations == ()


# --- held out: the demo's own texts, which the rules were not written against ---------------------------------

DEMO = Path(__file__).resolve().parents[2] / "demo" / "data"


def demo_text_groups() -> list[list[str]]:
    """The demo's FAQ answers by category, its records by vendor and its hub documents by folder: each group is the
    evidence of a draft copied from one of its texts."""
    groups: dict[str, list[str]] = defaultdict(list)
    for line in (DEMO / "faq.jsonl").read_text().splitlines():
        item = json.loads(line)
        if "answer" in item:
            groups[f"faq:{item.get('category', '')}"].append(item["answer"])
    for line in (DEMO / "records.jsonl").read_text().splitlines():
        item = json.loads(line)
        if "body" in item:
            groups[f"vendor:{item.get('vendor_code')}"].append(f"{item.get('title', '')}\n{item['body']}")
    for path in sorted((DEMO / "knowledge").rglob("*.md")):
        groups[f"hub:{path.parent.name}"].append(path.read_text())
    return list(groups.values())


def _exchanged(sentence: str, pattern: re.Pattern) -> tuple[str, re.Match, re.Match] | None:
    """The sentence with its first two different values of one kind exchanged, as the hostile model swaps them."""
    found = list(pattern.finditer(sentence))
    second = next((match for match in found[1:] if "".join(match[0].split()) != "".join(found[0][0].split())), None)
    if second is None:
        return None
    first = found[0]
    swapped = sentence[: first.start()] + second[0] + sentence[first.end() : second.start()] + first[0]
    return swapped + sentence[second.end() :], first, second


def held_out_figures() -> dict[str, int]:
    """Every sentence of every demo text as a draft against its group, verbatim and with two values exchanged: the
    flags on verbatim copies (all false), and on the exchanged ones whether the suggestion is the value the text had
    in that place."""
    figures = dict.fromkeys(("copied", "copied_flags", "exchanged", "exchanged_flagged", "right", "wrong"), 0)
    for texts in demo_text_groups():
        for text in texts:
            for sentence in split_sentences(text):
                copied = text[sentence.start : sentence.end].strip()
                figures["copied"] += 1
                figures["copied_flags"] += len(mismatches(copied, texts))
                for pattern in SWAPPABLE.values():
                    if (exchanged := _exchanged(copied, pattern)) is None:
                        continue
                    draft, first, second = exchanged
                    flags = mismatch_violations(draft, texts)
                    figures["exchanged"] += 1
                    figures["exchanged_flagged"] += bool(flags)
                    for violation in flags:
                        original = first[0] if violation.span[0] < first.start() + len(second[0]) else second[0]
                        figures["right" if _states(violation.suggestion, original) else "wrong"] += 1
    return figures


def _states(suggestion: str, original: str) -> bool:
    """Whether a suggestion is the original value: the same values, or ending in it (`9월 24일` for a day `24일`
    exchanged inside a date)."""
    values = [(found.kind, found.value) for found in (*parse_quantities(suggestion), *parse_values(suggestion))]
    if values == [(found.kind, found.value) for found in (*parse_quantities(original), *parse_values(original))]:
        return True
    compact, written = "".join(suggestion.split()), "".join(original.split())
    return compact.endswith(written) and not compact[: -len(written)][-1:].isdigit()


def test_held_out_demo_texts_copied_are_never_flagged_and_every_swap_flag_names_the_original_value(capsys):
    figures = held_out_figures()
    with capsys.disabled():  # the figures of docs/verification.md
        print(f"\nheld-out value_mismatch figures: {figures}")
    assert figures["copied"] > 1000 and figures["copied_flags"] == 0
    assert figures["exchanged_flagged"] > 0 and figures["wrong"] == 0
