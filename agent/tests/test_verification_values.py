"""Dates, clock times, quantities and contacts: what is parsed, and the draft values the evidence (or the question)
supports, from realistic B2B answers — payment days, cut-off times, delivery days, pack sizes, minimum orders,
phone numbers."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.verification import verify_draft
from agent.verification.korean import fold
from agent.verification.values import is_supported, parse_values, supported_in, value_keys_among


def _values(text):
    return [(value.kind, value.value) for value in parse_values(text)]


# (text, [(kind, value) ...]) — each value in the interface form of docs/verification.md.
PARSED = [
    ("2026년 12월 5일", [("date", "2026-12-05")]),
    ("12월 5일", [("date", "12-05")]),
    ("12/5", [("date", "12-05")]),
    ("2026-12-05", [("date", "2026-12-05")]),
    ("2026.12.05", [("date", "2026-12-05")]),
    ("12.5.", [("date", "12-05")]),
    ("2026년", [("date", "year:2026")]),
    ("2026년 단가표", [("date", "year:2026")]),
    ("매월 10일", [("date", "day:10")]),
    ("익월 25일", [("date", "next_month_day:25")]),
    ("다음 달 15일", [("date", "next_month_day:15")]),
    ("다음달 15일", [("date", "next_month_day:15")]),
    ("15일에 지급", [("date", "day:15")]),
    ("15일까지", [("date", "day:15")]),
    ("금요일", [("date", "weekday:fri")]),
    ("(금)", [("date", "weekday:fri")]),
    ("월·수·금", [("date", "weekday:mon"), ("date", "weekday:wed"), ("date", "weekday:fri")]),
    ("월~금", [("date", "weekday:mon"), ("date", "weekday:fri")]),
    ("12월 5일(금)", [("date", "12-05"), ("date", "weekday:fri")]),
    ("오후 2시", [("time", "14:00")]),
    ("14시", [("time", "14:00")]),
    ("14:00", [("time", "14:00")]),
    ("오전 9시 30분", [("time", "09:30")]),
    ("새벽 5시", [("time", "05:00")]),
    ("밤 9시", [("time", "21:00")]),
    ("9시 반", [("time", "09:30")]),
    ("오후 12시", [("time", "12:00")]),
    ("밤 12시", [("time", "00:00")]),
    ("09:00~18:00", [("time", "09:00"), ("time", "18:00")]),
    ("1.5L", [("quantity", {"value": 1500, "unit": "ml"})]),
    ("1,500ml", [("quantity", {"value": 1500, "unit": "ml"})]),
    ("3kg", [("quantity", {"value": 3000, "unit": "g"})]),
    ("2톤", [("quantity", {"value": 2000000, "unit": "g"})]),
    ("12개입", [("quantity", {"value": 12, "unit": "개입"})]),
    ("30롤", [("quantity", {"value": 30, "unit": "롤"})]),
    ("50W", [("quantity", {"value": 50, "unit": "W"})]),
    ("100박스 이상", [("quantity", {"value": 100, "unit": "박스"})]),
    ("10,000EA", [("quantity", {"value": 10000, "unit": "EA"})]),
    ("3만 개", [("quantity", {"value": 30000, "unit": "개"})]),
    ("2~3박스", [("quantity", {"value": 2, "unit": "박스"}), ("quantity", {"value": 3, "unit": "박스"})]),
    ("3영업일", [("quantity", {"value": 3, "unit": "영업일"})]),
    ("12개월", [("quantity", {"value": 12, "unit": "개월"})]),
    ("1년", [("quantity", {"value": 12, "unit": "개월"})]),
    ("2시간", [("quantity", {"value": 2, "unit": "시간"})]),
    ("2주", [("quantity", {"value": 2, "unit": "주"})]),
    ("7일 이내", [("quantity", {"value": 7, "unit": "일"})]),
    ("30일 전에", [("quantity", {"value": 30, "unit": "일"})]),
    ("3일간", [("quantity", {"value": 3, "unit": "일간"})]),
    ("10일마다", [("quantity", {"value": 10, "unit": "일"})]),
    ("02-1234-5678", [("contact", "0212345678")]),
    ("010-9876-5432", [("contact", "01098765432")]),
    ("1588-1234", [("contact", "15881234")]),
    ("Sales@Solbit.co.kr", [("contact", "sales@solbit.co.kr")]),
    ("https://www.solbit.co.kr/order/", [("contact", "solbit.co.kr/order")]),
    ("www.solbit.co.kr", [("contact", "solbit.co.kr")]),
    ("solbit.com", [("contact", "solbit.com")]),
]


@pytest.mark.parametrize(("text", "expected"), PARSED)
def test_each_form_parses_to_its_normalised_value(text, expected):
    assert _values(text) == expected
    for value in parse_values(text):
        assert text[value.span[0] : value.span[1]] == value.raw


NOT_VALUES = [
    "오늘",
    "내일",
    "이번 주",
    "다음 주",
    "월말",
    "12월",
    "2주차",
    "10주년",
    "3개국",
    "2대표",
    "123-45-67890",
    "S24",
    "RTX 4090",
    "버전 3.5.1",
    "30,000원",
    "15%",
    "3만원",
    "1일차",
]


@pytest.mark.parametrize("text", NOT_VALUES)
def test_relative_words_and_other_numbers_are_no_values(text):
    assert parse_values(text) == []


def test_nights_and_rates_are_durations_or_counts_not_days():
    assert _values("3박 4일") == [("quantity", {"value": 4, "unit": "일"})]
    assert _values("1일 2회") == [("quantity", {"value": 1, "unit": "일"}), ("quantity", {"value": 2, "unit": "회"})]


# --- the engine: realistic answers against their evidence ----------------------------------------------

EVIDENCE = [
    "대금 결제 조건: 매월 말일 마감, 익월 25일 현금 지급. 세금계산서는 매월 10일까지 발행해 주세요.",
    "발주 마감은 평일 오후 2시이며 마감 후 주문은 다음 영업일에 출고됩니다. 배송은 출고 후 2영업일 이내 도착합니다.",
    "솔빛 참치캔 12개입 1박스, 최소 주문 수량 100박스. 솔빛 생수 2L 6병 묶음.",
    "물류센터 입고 가능 시간 09:00~17:00 (월~금), 토요일 휴무.",
    "담당자 연락처 02-1234-5678, 이메일 order@solbit.co.kr, 발주 사이트 https://b2b.solbit.co.kr/order",
    "2026년 연간 계약 기간은 12개월이며 2026년 12월 31일에 종료됩니다. 반품은 입고 후 7일 이내 접수.",
]


def verify(draft, *, evidence=EVIDENCE, question=""):
    return verify_draft(
        draft,
        evidence=evidence,
        known_brands=[],
        counterpart_names=["대한물산"],
        other_vendor_names=[],
        confirmed_actions=[],
        question=question,
    )


def kinds_and_values(result):
    return [(violation.kind, violation.value) for violation in result.violations]


SUPPORTED_DRAFTS = [
    "대금은 익월 25일에 현금으로 지급됩니다.",
    "지급일은 25일입니다.",  # a bare day: the evidence's 익월 25일 states the day
    "세금계산서는 매월 10일까지 발행해 주세요.",
    "발주 마감은 오후 2시입니다.",
    "발주 마감은 14시입니다.",
    "발주 마감은 14:00입니다.",
    "발주 마감은 2시입니다.",  # a bare hour: 02:00 or 14:00
    "입고는 오전 9시부터 오후 5시까지 가능합니다.",
    "입고는 월요일부터 금요일까지 가능합니다.",
    "토요일은 휴무입니다.",
    "배송은 출고 후 2영업일 이내 도착합니다.",
    "참치캔은 12개입 한 박스이고 최소 주문은 100박스입니다.",
    "생수는 2,000ml 6병 묶음입니다.",
    "연간 계약은 1년 단위입니다.",  # 1년 = 12개월
    "계약은 12월 31일에 종료됩니다.",  # a year-less date matches the full one
    "계약은 2026-12-31에 끝납니다.",
    "2026년 계약 기준입니다.",
    "반품은 입고 후 7일 이내 접수해 주세요.",
    "문의는 02)1234-5678 또는 order@SOLBIT.co.kr로 주세요.",
    "발주는 b2b.solbit.co.kr/order/ 에서 하시면 됩니다.",
    "오늘 안에 주문하시면 내일 출고됩니다.",  # relative words are not dates
    "이번 주 안에 알려 주세요.",
]


@pytest.mark.parametrize("draft", SUPPORTED_DRAFTS)
def test_values_the_evidence_states_pass(draft):
    assert verify(draft).violations == ()


VIOLATING_DRAFTS = [
    ("결제는 익월 30일입니다.", [("date", "next_month_day:30")]),
    ("대금은 매월 25일에 지급됩니다.", []),  # the day 25 is stated (익월 25일)
    ("대금은 다음 달 20일에 지급됩니다.", [("date", "next_month_day:20")]),
    ("세금계산서는 매월 15일까지 발행해 주세요.", [("date", "day:15")]),
    ("마감은 오후 6시입니다.", [("time", "18:00")]),
    ("발주 마감은 오후 3시입니다.", [("time", "15:00")]),
    ("발주 마감은 15:30입니다.", [("time", "15:30")]),
    ("입고는 토요일에도 가능합니다.", []),  # 토요일 is in the evidence (휴무): a weekday is a value, not a claim
    ("입고는 일요일에도 가능합니다.", [("date", "weekday:sun")]),
    ("배송은 3영업일 이내 도착합니다.", [("quantity", {"value": 3, "unit": "영업일"})]),
    ("배송은 2일 이내 도착합니다.", [("quantity", {"value": 2, "unit": "일"})]),  # 영업일 never equals 일
    ("참치캔은 24개입입니다.", [("quantity", {"value": 24, "unit": "개입"})]),
    ("최소 주문 수량은 50박스입니다.", [("quantity", {"value": 50, "unit": "박스"})]),
    ("생수는 1.5L입니다.", [("quantity", {"value": 1500, "unit": "ml"})]),
    ("계약 기간은 6개월입니다.", [("quantity", {"value": 6, "unit": "개월"})]),
    ("계약은 2026년 11월 30일에 종료됩니다.", [("date", "2026-11-30")]),
    ("2027년 계약 기준입니다.", [("date", "year:2027")]),
    ("담당자 연락처는 02-1234-5679입니다.", [("contact", "0212345679")]),
    ("이메일은 orders@solbit.co.kr입니다.", [("contact", "orders@solbit.co.kr")]),
    ("발주 사이트는 solbit.co.kr/order 입니다.", [("contact", "solbit.co.kr/order")]),
]


@pytest.mark.parametrize(("draft", "expected"), VIOLATING_DRAFTS)
def test_values_the_evidence_does_not_state_are_violations(draft, expected):
    result = verify(draft)
    assert kinds_and_values(result) == expected
    for violation in result.violations:
        assert draft[slice(*violation.span)] == violation.text
        assert violation.reason.startswith("근거에 없는 ")


def test_the_wrong_deadlines_of_the_issue_are_flagged():
    assert kinds_and_values(verify("결제는 익월 30일입니다.", evidence=["결제는 익월 25일"])) == [
        ("date", "next_month_day:30")
    ]
    assert kinds_and_values(verify("마감은 오후 5시입니다.", evidence=["마감은 오후 2시"])) == [("time", "17:00")]


def test_the_question_supports_dates_times_quantities_and_contacts():
    draft = "100박스를 12월 5일 오후 3시까지 02-555-1234로 보내 주시면 됩니다."
    evidence = ["주문 접수 안내"]
    assert {v.kind for v in verify(draft, evidence=evidence).violations} == {"quantity", "date", "time", "contact"}
    question = "100박스를 12월 5일 오후 3시까지 보내려면 02-555-1234로 연락하면 되나요?"
    assert verify(draft, evidence=evidence, question=question).violations == ()


def test_the_question_never_supports_amounts_or_percentages():
    question = "단가 3만원에 10% 할인 되나요?"
    result = verify("네, 단가 3만원에 10% 할인됩니다.", evidence=["행사 안내"], question=question)
    assert kinds_and_values(result) == [("amount", 30000), ("percent", 10)]


def test_dates_inside_record_titles_are_supported_by_that_text():
    assert verify("2026년 단가표 기준입니다.", evidence=["[2026년 단가표] 참치캔 18,000원"]).ok


def test_the_same_value_and_unit_anywhere_supports_it_product_names_included():
    evidence = ["상품명: 솔빛 화장지 30롤 / 솔빛 LED 전구 50W"]
    assert verify("화장지는 30롤, 전구는 50W 제품입니다.", evidence=evidence).ok
    assert kinds_and_values(verify("화장지는 24롤입니다.", evidence=evidence)) == [
        ("quantity", {"value": 24, "unit": "롤"})
    ]


def test_a_range_supports_its_two_ends_only():
    evidence = ["상담 시간 09:00~18:00"]
    assert verify("상담은 오전 9시부터 오후 6시까지입니다.", evidence=evidence).ok
    assert kinds_and_values(verify("상담은 오후 1시에도 가능합니다.", evidence=evidence)) == [("time", "13:00")]


def test_a_full_and_a_year_less_date_match_in_either_direction():
    assert verify("12월 5일 입고입니다.", evidence=["2026년 12월 5일(금) 입고"]).ok
    assert verify("2026년 12월 5일 입고입니다.", evidence=["12/5 입고"]).ok
    assert kinds_and_values(verify("2026년 12월 5일 입고입니다.", evidence=["2025-12-05 입고"])) == [
        ("date", "2026-12-05")
    ]


def test_violation_values_are_json_friendly_in_the_interface():
    payload = verify("최소 주문 수량은 50박스입니다.").as_dict()
    assert payload["violations"][0]["value"] == {"value": 50, "unit": "박스"}
    assert set(payload["violations"][0]) == {"kind", "value", "text", "span", "reason", "suggestion"}


# --- the evidence search equals a full parse -------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "2026년 12월 5일",
        "12월 5일",
        "12/5",
        "2026-12-05",
        "12.5.",
        "2026년",
        "매월 10일",
        "익월 25일",
        "25일",
        "5일 이내",
        "(금)",
        "금요일",
        "월·수·금",
        "월~금",
        "오후 2시",
        "14:00",
        "2시",
        "09:00~18:00",
        "9시 30분",
        "1.5L",
        "1,500ml",
        "3kg",
        "12개입",
        "100박스",
        "2~3박스",
        "3영업일",
        "1년",
        "12개월",
        "02-1234-5678",
        "order@solbit.co.kr",
        "solbit.co.kr/order",
        "3만원",
        "15%",
        "3박 4일",
        "1일 2회",
        "10~12일",
        "15일까지",
        "다음 달 15일",
        "오후 2~3시",
        "3만 개",
        "2026.12.05",
        "www.solbit.co.kr",
        "Order@Solbit.co.kr",
        "단가",
        "마감",
        " ",
        ", ",
        ". ",
        "\n",
        "~",
        "0",
        "5",
        "일",
        "시",
    ]
)
_PROBE_TEXT = (
    "2026년 12월 5일 12월 5일 2026년 매월 10일 익월 25일 15일에 (금) 월요일 수요일 오후 2시 14:00 3시 18:00 "
    "09:30 1.5L 1,500ml 3kg 12개입 100박스 3박스 2박스 3영업일 12개월 5일 이내 02-1234-5678 order@solbit.co.kr "
    "solbit.co.kr/order day 25일"
)


def test_a_value_after_a_long_run_without_spaces_keeps_the_word_it_depends_on():
    """No clause end and one space in the 100 characters before `익월`: the clause must still hold 익월, so the
    draft's `익월 25일` is found where a full parse finds it (not read as the plain day 25)."""
    text = "문의: " + "order@solbit.co.kr" * 6 + "익월 25일"
    probes = parse_values("결제는 익월 25일입니다.")

    assert supported_in(probes, text, lambda: fold(text)) == [is_supported(v, value_keys_among([text])) for v in probes]
    assert supported_in(probes, text, lambda: fold(text)) == [True]


def test_the_zero_a_range_starts_from_is_found_by_the_anchor_search():
    """`0~2일` states 0일 as a full parse reads it (the range's low end takes its unit): zero has anchors too."""
    text = "출고 지연은 보통 0~2일입니다."
    probes = parse_values("지연은 0~2일 정도입니다.")
    assert [value.number for value in probes] == [0, 2]

    assert supported_in(probes, text, lambda: fold(text)) == [is_supported(v, value_keys_among([text])) for v in probes]
    assert all(supported_in(probes, text, lambda: fold(text)))


@settings(max_examples=400)
@given(fragments=st.lists(_FRAGMENTS, min_size=1, max_size=14), picks=st.lists(st.integers(0, 40), max_size=4))
def test_property_the_anchor_search_answers_as_a_full_parse(fragments, picks):
    """supported_in parses only the clauses around anchor hits; it must answer as a full parse would."""
    text = "".join(fragments)
    own = parse_values(text)
    probes = parse_values(_PROBE_TEXT) + [value for index, value in enumerate(own) if index in picks]
    keys = value_keys_among([text])
    assert supported_in(probes, text, lambda: fold(text)) == [is_supported(value, keys) for value in probes], text
