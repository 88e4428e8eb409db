"""Amounts and percentages in Korean text: every listed form parses, every trap stays silent."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.verification import parse_quantities
from agent.verification.numbers import hangul_numeral_value, quantity_values_among, states_pair


def _single(text: str):
    quantities = parse_quantities(text)
    assert len(quantities) == 1, f"{text!r} gave {quantities}"
    return quantities[0]


# (text, kind, value, approx, raw)
FORMS = [
    ("30,000원", "amount", 30000, False, "30,000원"),
    ("30000원", "amount", 30000, False, "30000원"),
    ("30,000 원", "amount", 30000, False, "30,000 원"),
    ("3만원", "amount", 30000, False, "3만원"),
    ("3만 원", "amount", 30000, False, "3만 원"),
    ("3만5천원", "amount", 35000, False, "3만5천원"),
    ("3만 5천원", "amount", 35000, False, "3만 5천원"),
    ("1억 2천만 원", "amount", 120000000, False, "1억 2천만 원"),
    ("1억2천만원", "amount", 120000000, False, "1억2천만원"),
    ("2천5백만원", "amount", 25000000, False, "2천5백만원"),
    ("1.5만원", "amount", 15000, False, "1.5만원"),
    ("12만 3,400원", "amount", 123400, False, "12만 3,400원"),
    ("만원", "amount", 10000, False, "만원"),
    ("십만 원", "amount", 100000, False, "십만 원"),
    ("오만원", "amount", 50000, False, "오만원"),
    ("삼만 오천 원", "amount", 35000, False, "삼만 오천 원"),
    ("백만원", "amount", 1000000, False, "백만원"),
    ("₩12,500", "amount", 12500, False, "₩12,500"),
    ("KRW 12,500", "amount", 12500, False, "KRW 12,500"),
    ("12,500 KRW", "amount", 12500, False, "12,500 KRW"),
    ("약 3만원", "amount", 30000, True, "약 3만원"),
    ("3만원대", "amount", 30000, True, "3만원대"),
    ("3만원 정도", "amount", 30000, True, "3만원 정도"),
    ("12.5%", "percent", 12.5, False, "12.5%"),
    ("15 %", "percent", 15, False, "15 %"),
    ("15퍼센트", "percent", 15, False, "15퍼센트"),
    ("15프로", "percent", 15, False, "15프로"),
    ("15 퍼센트", "percent", 15, False, "15 퍼센트"),
    ("3%p", "percent_point", 3, False, "3%p"),
    ("3퍼센트포인트", "percent_point", 3, False, "3퍼센트포인트"),
    ("3%포인트", "percent_point", 3, False, "3%포인트"),
    ("2.5 %p", "percent_point", 2.5, False, "2.5 %p"),
    ("₩ 5000", "amount", 5000, False, "₩ 5000"),
    ("￦7,000", "amount", 7000, False, "￦7,000"),
    ("1,234.5원", "amount", 1234.5, False, "1,234.5원"),
    ("0.5%", "percent", 0.5, False, "0.5%"),
    ("2,000,000원", "amount", 2000000, False, "2,000,000원"),
    ("3천원", "amount", 3000, False, "3천원"),
    ("500원", "amount", 500, False, "500원"),
    ("1조원", "amount", 10**12, False, "1조원"),
    ("일조원", "amount", 10**12, False, "일조원"),
    ("이천원", "amount", 2000, False, "이천원"),
    ("구십원", "amount", 90, False, "구십원"),
    ("천만 원", "amount", 10000000, False, "천만 원"),
    ("일억 이천만 원", "amount", 120000000, False, "일억 이천만 원"),
    ("백 원", "amount", 100, False, "백 원"),
    ("3만여 원", "amount", 30000, True, "3만여 원"),
    ("대략 5천원", "amount", 5000, True, "대략 5천원"),
    ("2만원 가량", "amount", 20000, True, "2만원 가량"),
    ("약 15%", "percent", 15, True, "약 15%"),
    ("10% 내외", "percent", 10, True, "10% 내외"),
    ("30,000won", "amount", 30000, False, "30,000won"),
    ("1,200만원", "amount", 12000000, False, "1,200만원"),
    ("3억", "amount", 300000000, False, "3억"),
    ("3만 정도", "amount", 30000, True, "3만 정도"),
    ("오만 원대", "amount", 50000, True, "오만 원대"),
    # A space before the multiplier, when 원 ends the number.
    ("3 만원", "amount", 30000, False, "3 만원"),
    ("3 만 원", "amount", 30000, False, "3 만 원"),
    ("1 억 2 천만 원", "amount", 120000000, False, "1 억 2 천만 원"),
    ("12 만 3,400원", "amount", 123400, False, "12 만 3,400원"),
    ("5 천 원", "amount", 5000, False, "5 천 원"),
    ("2 만 3,000원", "amount", 23000, False, "2 만 3,000원"),
    ("3 만여 원", "amount", 30000, True, "3 만여 원"),
    ("약 3 만원", "amount", 30000, True, "약 3 만원"),
]


@pytest.mark.parametrize(("text", "kind", "value", "approx", "raw"), FORMS)
def test_each_listed_form_parses_to_its_normalised_value(text, kind, value, approx, raw):
    quantity = _single(text)
    assert (quantity.kind, quantity.value, quantity.approx, quantity.raw) == (kind, value, approx, raw)
    assert text[quantity.span[0] : quantity.span[1]] == quantity.raw


# Texts holding no amount and no percentage at all: dates, times, phone and business numbers, counts,
# model names and ordinary words made of numeral syllables.
TRAPS = [
    "2026년 11월 30일",
    "11/30",
    "2026-11-30",
    "3시 30분",
    "010-1234-5678",
    "123-45-67890",
    "3개",
    "2박스",
    "5명",
    "10EA",
    "3만 개",
    "3만개",
    "S24",
    "RTX 4090",
    "갤럭시 S24 울트라",
    "내일 만나요",
    "조회",
    "백화점",
    "천천히",
    "삼성",
    "오늘",
    "구매",
    "일부",
    "이상",
    "십자수",
    "사원",
    "구원",
    "일원",
    "조원",
    "회사원",
    "공무원",
    "3만 명 정도",
    "10,000EA",
    "1,000 mAh",
    "100만 다운로드",
    "3천 년",
    "30000",
    "3 만 개",
    "2 천 명",
    "3 만 명 정도",
    "10 억",
    "내일 3 만나요",
    "3 천 년",
    "2026년 3월",
    "오후 2시",
    "3박 4일",
    "5개월",
    "3만 회원",
    "2만 달러",
    "1,500 포인트",
    "천 원래",
    "주문번호 A00002",
    "처리번호 12345",
    "버전 3.5.1",
    "5~10개",
    "사구 만나서",
]


@pytest.mark.parametrize("text", TRAPS)
def test_traps_produce_no_quantity(text):
    assert parse_quantities(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3~5만원", [("amount", 30000, "3"), ("amount", 50000, "5만원")]),
        ("3만~5만원", [("amount", 30000, "3만"), ("amount", 50000, "5만원")]),
        ("5~10%", [("percent", 5, "5"), ("percent", 10, "10%")]),
        ("3-5만원", [("amount", 30000, "3"), ("amount", 50000, "5만원")]),
        ("1~2%p", [("percent_point", 1, "1"), ("percent_point", 2, "2%p")]),
        ("2~3천만원", [("amount", 20000000, "2"), ("amount", 30000000, "3천만원")]),
        ("1,000~2,000원", [("amount", 1000, "1,000"), ("amount", 2000, "2,000원")]),
        ("3만원~5만원", [("amount", 30000, "3만원"), ("amount", 50000, "5만원")]),
        ("10 ~ 20%", [("percent", 10, "10"), ("percent", 20, "20%")]),
    ],
)
def test_ranges_give_both_ends(text, expected):
    assert [(q.kind, q.value, q.raw) for q in parse_quantities(text)] == expected


def test_range_approximation_marks_both_ends():
    low, high = parse_quantities("약 3~5만원 정도")
    assert (low.value, low.approx, high.value, high.approx) == (30000, True, 50000, True)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("3만에 드릴게요", [30000]),
        ("27,000이고", [27000]),
        ("가격은 30,000원입니다.", [30000]),
        ("30,000원, 5,000원", [30000, 5000]),
        ("총 3개, 30,000원", [30000]),
        ("이 만원짜리", [10000]),
        ("오늘 만 원 보냈어요", [10000]),
        ("예약 3만원", [30000]),
        ("원래 3만원", [30000]),
        ("1억 일시불", [100000000]),
        ("3만 배송비", [30000]),
        ("3만 12345원", [30000, 12345]),
        ("배송비 3,000원이고 무료 배송은 5만원 이상", [3000, 50000]),
        ("S24 30,000원", [30000]),
        ("3,000원이고 15프로모션", [3000]),
        ("1억 5만원", [100050000]),
        ("12만3,400원에", [123400]),
        ("₩10,000~20,000", [10000, 20000]),
        ("3만 대비 5% 상승", [30000, 5]),
        ("만원의 행복", [10000]),
    ],
)
def test_quantities_in_sentences(text, values):
    assert [quantity.value for quantity in parse_quantities(text)] == values


def test_approximate_prefix_needs_its_own_word():
    quantity = _single("예약 3만원")
    assert not quantity.approx and quantity.raw == "3만원"


def test_after_digits_only_multipliers_join_the_number():
    """`27,000이고`: 이 is a particle, not the numeral two."""
    assert _single("27,000이고").value == 27000
    assert _single("2천5백만원").value == 25000000


def test_spans_point_into_the_original_text():
    text = "이번 달 단가는 약 3만원이고 수수료는 12.5%입니다."
    for quantity in parse_quantities(text):
        assert text[slice(*quantity.span)] == quantity.raw


def test_as_dict_is_the_json_interface():
    assert _single("3만원").as_dict() == {
        "kind": "amount",
        "value": 30000,
        "unit": "KRW",
        "approx": False,
        "span": [0, 3],
        "raw": "3만원",
    }


@pytest.mark.parametrize(
    ("numeral", "value"),
    [
        ("만", 10000),
        ("십만", 100000),
        ("삼만오천", 35000),
        ("일억이천만", 120000000),
        ("구십", 90),
        ("천", 1000),
        ("일", None),
        ("사", None),
        ("조", None),
        ("억", None),
        ("삼사만", None),
        ("만만", None),
        ("백천", None),
        ("일조", 10**12),
    ],
)
def test_hangul_numeral_values(numeral, value):
    assert hangul_numeral_value(numeral) == value


# --- property tests: every integer from 1 to 10¹² in each written form parses back -----------------

_DIGITS = "일이삼사오육칠팔구"
_BIG_UNITS = [(10**12, "조"), (10**8, "억"), (10**4, "만")]


def _groups(value: int) -> list[tuple[int, str]]:
    """The value as 4-digit groups with their big unit ("" for the last)."""
    groups = []
    for unit_value, unit in _BIG_UNITS:
        groups.append((value // unit_value % 10**4, unit))
    groups.append((value % 10**4, ""))
    return [(group, unit) for group, unit in groups if group]


def _hangul_group(group: int, *, write_one: bool) -> str:
    text = ""
    for unit_value, unit in ((1000, "천"), (100, "백"), (10, "십")):
        digit = group // unit_value % 10
        if digit:
            text += ("" if digit == 1 and not write_one else _DIGITS[digit - 1]) + unit
    if group % 10:
        text += _DIGITS[group % 10 - 1]
    return text


def _render_hangul(value: int, write_one: bool, spaced: bool) -> str:
    parts = []
    for group, unit in _groups(value):
        # 억 and 조 always carry their numeral (일억); 만 alone may stand for 일만.
        needs_one = unit in ("억", "조") and group == 1
        parts.append(("일" if needs_one else _hangul_group(group, write_one=write_one)) + unit)
    return (" " if spaced else "").join(parts) + "원"


def _arabic_group(group: int, style: str) -> str:
    if style == "digits":
        return str(group)
    if style == "comma":
        return f"{group:,}"
    text = ""  # 천/백/십 with Arabic digits: 2천5백
    for unit_value, unit in ((1000, "천"), (100, "백"), (10, "십")):
        if group // unit_value % 10:
            text += f"{group // unit_value % 10}{unit}"
    return text + (str(group % 10) if group % 10 else "")


def _render_mixed(value: int, style: str, spaced: bool, space_before_unit: bool = False) -> str:
    before_unit = " " if space_before_unit else ""
    parts = [_arabic_group(group, style) + (before_unit + unit if unit else "") for group, unit in _groups(value)]
    return (" " if spaced else "").join(parts) + before_unit + "원"


values = st.integers(min_value=1, max_value=10**12)


@settings(max_examples=300)
@given(value=values, spaced=st.booleans())
def test_property_plain_digits(value, spaced):
    assert _single(f"{value}{' ' if spaced else ''}원").value == value


@settings(max_examples=300)
@given(value=values)
def test_property_thousands_separators(value):
    assert _single(f"{value:,}원").value == value
    assert _single(f"₩{value:,}").value == value


@settings(max_examples=300)
@given(value=values, style=st.sampled_from(["digits", "comma", "units"]), spaced=st.booleans())
def test_property_digit_and_big_multiplier_mixes(value, style, spaced):
    text = _render_mixed(value, style, spaced)
    assert _single(text).value == value, text


@settings(max_examples=300)
@given(value=values, style=st.sampled_from(["digits", "comma"]), spaced=st.booleans())
def test_property_a_space_before_each_multiplier(value, style, spaced):
    """ "3 만원", "1 억 2 천만 원", "12 만 3,400 원": a space before 만/억/조 (and 원) still gives the value."""
    text = _render_mixed(value, style, spaced, space_before_unit=True)
    assert _single(text).value == value, text
    assert [q.value for q in parse_quantities(f"단가는 {text}입니다.")] == [value], text


@settings(max_examples=200)
@given(value=st.integers(min_value=1, max_value=9999), big=st.sampled_from(["만", "억", "천"]))
def test_property_a_spaced_multiplier_before_a_counter_is_no_amount(value, big):
    for counter in ("개", "명", "박스", "건"):
        assert parse_quantities(f"{value} {big} {counter}") == [], (value, big, counter)


# 1–9 in Hangul numerals (일원 … 구원) hold no multiplier and are deliberately no amount (사원, 구원 are
# words), so the Hangul form is checked from 10 up; `test_traps_produce_no_quantity` covers the rest.
hangul_values = st.integers(min_value=10, max_value=10**12)


@settings(max_examples=300)
@given(value=hangul_values, write_one=st.booleans(), spaced=st.booleans())
def test_property_hangul_numerals(value, write_one, spaced):
    text = _render_hangul(value, write_one, spaced)
    assert _single(text).value == value, text


@settings(max_examples=200)
@given(value=hangul_values, spaced=st.booleans())
def test_property_forms_inside_a_sentence(value, spaced):
    for written in (f"{value:,}원", _render_mixed(value, "comma", spaced), _render_hangul(value, False, spaced)):
        text = f"이번 행사 가격은 {written}입니다."
        assert [quantity.value for quantity in parse_quantities(text)] == [value], text


_FRAGMENTS = st.sampled_from(
    [
        "3만원",
        "30,000원",
        "35,000원",
        "3만5천원",
        "12만 3,400원",
        "0.5%",
        "15%",
        "3%p",
        "3~5만원",
        "5~10%",
        "2026-11-30",
        "010-1234-5678",
        "3개",
        "3만 개",
        "오만원",
        "이 만원",
        "약 3만원",
        "₩12,500",
        "3만 12345원",
        "1억 5만원",
        "3",
        "0",
        "5",
        " ",
        "원",
        "만",
        "~",
        "-",
        ",",
        ".",
        "S",
        "일",
        "단가",
        "\n",
        "3,500원",
        "30일",
        "3 만원",
        "12 만 3,400원",
        "5 천 원",
        "1 억 2 천만 원",
        "3 만 개",
        "2 천 명",
        " 만",
        " 천",
    ]
)


@settings(max_examples=400)
@given(fragments=st.lists(_FRAGMENTS, min_size=1, max_size=12), picks=st.lists(st.integers(0, 50), max_size=4))
def test_property_targeted_evidence_search_equals_a_full_parse(fragments, picks):
    """quantity_values_among skips numbers that cannot match; it must answer as a full parse would."""
    text = "".join(fragments)
    full = {(q.kind, q.value) for q in parse_quantities(text)}
    probes = parse_quantities(
        "3만원 35,000원 0.5% 15% 3%p 30,000원 50,000원 12345원 5% 123400원 1억 3,400원 5천원 2천원"
    )
    wanted = probes + [q for index, q in enumerate(parse_quantities(text)) if index in picks]
    assert quantity_values_among([text], wanted) == {(q.kind, q.value) for q in wanted} & full


@settings(max_examples=400)
@given(fragments=st.lists(_FRAGMENTS, min_size=1, max_size=12), picks=st.lists(st.integers(0, 50), max_size=4))
def test_property_states_pair_answers_as_a_full_parse(fragments, picks):
    """states_pair (the swap check's look at one window) must answer for one value as a full parse would."""
    text = "".join(fragments)
    full = {(q.kind, q.value) for q in parse_quantities(text)}
    probes = parse_quantities("3만원 35,000원 0.5% 15% 3%p 30,000원 50,000원 5% 1억 5천원 2천원 오만원 20000원")
    wanted = probes + [q for index, q in enumerate(parse_quantities(text)) if index in picks]
    for quantity in wanted:
        pair = (quantity.kind, quantity.value)
        assert states_pair(text, pair) == (pair in full), (text, pair)
