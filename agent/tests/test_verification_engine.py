"""verify_draft: each violation kind, the clean text, and the judge's failure-is-no-evidence rule."""

import time

import pytest

from agent.verification import (
    JudgeVerdict,
    NameIndex,
    VerificationSettings,
    Violation,
    rule_on_answer,
    verify_draft,
)

EVIDENCE = [
    "대한물산 전용 프로모션: 삼성전자 갤럭시 공급가 30,000원, 할인율 15%, 전년 대비 2%p 상승.",
    "무료 배송 기준 5만원 이상, 반품 수수료 약 3천원. 오뚜기 진라면 행사는 3~5만원 구간.",
    "정산일 매월 10일, 문의 02-1234-5678. 행사 할인 5~10%.",
]
BRANDS = ["삼성전자", "오뚜기", "LG전자", "농심", "CJ제일제당"]
COUNTERPART = ["대한물산", "대한"]
OTHER_VENDORS = ["한빛상사", "가온상회", "(주)새봄유통", "가온상사", "GAON SANGSA"]


def verify(draft, *, confirmed=(), evidence=EVIDENCE, judge=None, settings=None, **overrides):
    return verify_draft(
        draft,
        evidence=evidence,
        known_brands=overrides.get("brands", BRANDS),
        counterpart_names=overrides.get("counterpart", COUNTERPART),
        other_vendor_names=overrides.get("other_vendors", OTHER_VENDORS),
        confirmed_actions=confirmed,
        judge=judge,
        record_evidence=overrides.get("record_evidence", ()),
        **({"settings": settings} if settings else {}),
    )


def kinds_and_values(result):
    return [(violation.kind, violation.value) for violation in result.violations]


@pytest.mark.parametrize(
    "draft",
    [
        "공급가는 30,000원입니다.",
        "공급가는 3만원입니다.",
        "공급가는 삼만 원입니다.",
        "할인율은 15%입니다.",
        "할인율은 15퍼센트입니다.",
        "전년 대비 2%p 올랐습니다.",
        "무료 배송은 50,000원 이상입니다.",
        "반품 수수료는 3,000원입니다.",
        "반품 수수료는 약 3천원입니다.",
        "진라면 행사는 3만원부터입니다.",
        "진라면 행사는 최대 5만원입니다.",
        "행사 할인은 5~10%입니다.",
        "할인은 최대 10%입니다.",
        "정산일은 매월 10일입니다.",
        "문의는 02-1234-5678로 주세요.",
        "공급가는 3만원대입니다.",
        "오만원 이상 무료입니다.",
        "3만에 드릴게요.",
    ],
)
def test_values_the_evidence_states_pass(draft):
    assert verify(draft).violations == ()


VALUE_VIOLATIONS = [
    ("공급가는 35,000원입니다.", "amount", 35000),
    ("공급가는 3만5천원입니다.", "amount", 35000),
    ("할인율은 12.5%입니다.", "percent", 12.5),
    ("전년 대비 3%p 올랐습니다.", "percent_point", 3),
    ("전년 대비 15%p 올랐습니다.", "percent_point", 15),
    ("할인율은 2%입니다.", "percent", 2),
    ("진라면 행사는 4만원입니다.", "amount", 40000),
    ("두 개 사면 60,000원입니다.", "amount", 60000),
    ("할인 후 25,500원입니다.", "amount", 25500),
    ("₩12,500에 드립니다.", "amount", 12500),
    ("3만 5천에 드릴게요.", "amount", 35000),
    ("육만원 이상 무료입니다.", "amount", 60000),
]


@pytest.mark.parametrize(("draft", "kind", "value"), VALUE_VIOLATIONS)
def test_values_the_evidence_does_not_state_are_violations(draft, kind, value):
    result = verify(draft)
    assert kinds_and_values(result) == [(kind, value)]
    violation = result.violations[0]
    assert draft[slice(*violation.span)] == violation.text
    assert violation.suggestion is None


def test_a_space_before_the_multiplier_is_still_an_amount():
    result = verify("단가는 3 만원입니다.", evidence=["솔빛 참치캔 단가 31,000원"])
    assert kinds_and_values(result) == [("amount", 30000)]
    assert verify("단가는 3 만원입니다.", evidence=["단가 30,000원"]).ok


def test_arithmetic_the_evidence_does_not_state_is_a_violation():
    result = verify("두 개를 사시면 30,000원 두 번이니 60,000원입니다.")
    assert kinds_and_values(result) == [("amount", 60000)]
    assert result.violations[0].reason == "근거에 없는 금액: 60,000원"


def test_kinds_are_compared_separately():
    result = verify("할인 15원, 30,000%입니다.")
    assert kinds_and_values(result) == [("amount", 15), ("percent", 30000)]


def test_one_violation_per_occurrence():
    result = verify("35,000원이고 다시 말해 35,000원입니다.")
    assert [violation.span for violation in result.violations] == [(0, 7), (16, 23)]


def test_range_ends_and_approximate_bases_count():
    assert verify("행사는 3만원에서 5만원 사이입니다.").violations == ()
    assert kinds_and_values(verify("행사는 약 4만원입니다.")) == [("amount", 40000)]
    assert kinds_and_values(verify("할인 7%입니다.")) == [("percent", 7)]


# --- brands ------------------------------------------------------------------------------------------


BRAND_CASES = [
    ("삼성전자 제품입니다.", []),
    ("삼성전자는 인기 있습니다.", []),
    ("오뚜기에서 나왔습니다.", []),
    ("LG전자 제품도 있습니다.", [("brand_unsupported", "LG전자")]),
    ("농심 라면도 있습니다.", [("brand_unsupported", "농심")]),
    ("lg전자는 어떨까요.", [("brand_unsupported", "lg전자")]),
    ("CJ제일제당에서도 나옵니다.", [("brand_unsupported", "CJ제일제당")]),
    ("삼송전자 제품입니다.", [("brand_misspelt", "삼송전자")]),
    ("삼송전자는 인기 있습니다.", [("brand_misspelt", "삼송전자")]),
    ("오뚝기 라면입니다.", [("brand_misspelt", "오뚝기")]),
    ("오뚜가 라면입니다.", [("brand_misspelt", "오뚜가")]),
    ("삼성전자가 만들었습니다.", []),
    ("삼성 제품입니다.", []),
]


@pytest.mark.parametrize(("draft", "expected"), BRAND_CASES)
def test_brand_rules(draft, expected):
    assert kinds_and_values(verify(draft)) == expected


def test_misspelt_brand_suggests_the_evidence_brand():
    (violation,) = verify("삼송전자 제품입니다.").violations
    assert violation.suggestion == "삼성전자"
    assert violation.reason == "브랜드 표기 오류: 삼송전자 → 삼성전자"


def test_short_brand_threshold_is_a_setting():
    draft = "농삼 라면입니다."
    evidence = ["농심 라면 입고"]
    assert verify(draft, evidence=evidence).violations == ()
    result = verify(draft, evidence=evidence, settings=VerificationSettings(min_fuzzy_brand_length=2))
    assert kinds_and_values(result) == [("brand_misspelt", "농삼")]


def test_known_brand_that_is_one_character_off_is_unsupported_not_misspelt():
    result = verify("삼성전기 제품입니다.", brands=[*BRANDS, "삼성전기"])
    assert kinds_and_values(result) == [("brand_unsupported", "삼성전기")]


def test_brands_accept_a_prebuilt_index():
    result = verify("LG전자 제품", brands=NameIndex.build(BRANDS))
    assert kinds_and_values(result) == [("brand_unsupported", "LG전자")]


# --- other vendors ------------------------------------------------------------------------------------


OTHER_VENDOR_CASES = [
    ("한빛상사에서도 같은 조건입니다.", [("other_vendor", "한빛상사")]),
    ("가온상회는 다릅니다.", [("other_vendor", "가온상회")]),
    ("㈜새봄유통 사례입니다.", [("other_vendor", "㈜새봄유통")]),
    ("대한물산 담당자님, 안녕하세요.", []),
    ("[다른 벤더] 사례는 제외했습니다.", []),
    ("한빛 상사라는 말은 없습니다.", [("other_vendor", "한빛 상사")]),
    ("가온 상사", [("other_vendor", "가온 상사")]),
    ("가온\u200b상사", [("other_vendor", "가온\u200b상사")]),
    ("ㄱㅏ온상사", [("other_vendor", "ㄱㅏ온상사")]),
    ("GAON  SANGSA", [("other_vendor", "GAON  SANGSA")]),
    ("gaon-sangsa", [("other_vendor", "gaon-sangsa")]),
]


@pytest.mark.parametrize(("draft", "expected"), OTHER_VENDOR_CASES)
def test_other_vendor_names(draft, expected):
    """Every spelling of another vendor's name: spaces, zero-width characters, jamo, a Latin alias in any case."""
    result = verify(draft)
    assert kinds_and_values(result) == expected
    for violation in result.violations:
        assert violation.suggestion == "[다른 벤더]"


def test_counterpart_name_containing_another_vendors_name_is_not_flagged():
    result = verify("대한물산유통 건입니다.", counterpart=["대한물산유통"], other_vendors=["대한물산"])
    assert result.violations == ()


def test_counterpart_name_is_not_an_unsupported_brand():
    assert verify("대한물산 전용입니다.", brands=[*BRANDS, "대한물산"]).violations == ()


# --- action claims ------------------------------------------------------------------------------------


def test_untrue_send_claim_is_a_violation_and_a_confirmed_one_is_not():
    draft = "제안서 보내드렸습니다."
    result = verify(draft)
    assert [(v.kind, v.value, v.text) for v in result.violations] == [("action_claim", None, "보내드렸습니다")]
    assert result.clean_text == ""
    assert verify(draft, confirmed=["send"]).violations == ()


def test_confirmed_kinds_only_cover_themselves():
    result = verify("발송했고 접수 완료했습니다.", confirmed=["send"])
    assert [v.text for v in result.violations] == ["접수 완료했습니다"]


def test_promise_is_not_a_claim():
    assert verify("제안서는 오늘 보내드리겠습니다.").violations == ()


SETTLEMENT_RECORD = (
    "[정산] 10월 정산 내역\n10월 매입 정산액은 36,950,000원이며 2026-11-10에 지급 완료했습니다.\n상태: 지급 완료"
)


def test_a_record_sentence_copied_word_for_word_is_the_records_fact_not_a_claim():
    draft = "10월 매입 정산액은 36,950,000원이며 2026-11-10에 지급 완료했습니다."
    evidence = [*EVIDENCE, SETTLEMENT_RECORD]

    assert verify(draft, evidence=evidence, record_evidence=[SETTLEMENT_RECORD]).violations == ()
    # The same words are a claim when nothing says they come from the vendor's own record.
    assert [v.kind for v in verify(draft, evidence=evidence).violations] == ["action_claim"]


def test_a_fact_of_a_records_values_line_copied_whole_is_the_records_fact_not_a_claim():
    record = "[정산] 10월 정산 내역\n정산 월: 2026-10 · 정산액: 36,950,000원 · 상태: 지급 완료"

    assert verify("상태: 지급 완료", evidence=[*EVIDENCE, record], record_evidence=[record]).violations == ()
    # a part of the fact is the model's own words
    assert [v.kind for v in verify("지급 완료", evidence=[*EVIDENCE, record], record_evidence=[record]).violations] == [
        "action_claim"
    ]


@pytest.mark.parametrize(
    "draft",
    [
        "2026-11-10에 지급 완료했습니다.",  # a part of the record's sentence, standing alone
        "10월 매입 정산액은 36,950,000원이며 2026-11-10에 지급 완료했습니다. 반품도 처리했습니다.",
        "정산액 36,950,000원을 2026-11-10에 지급 완료했습니다.",  # the model's own words
    ],
)
def test_claims_outside_a_record_sentence_are_still_violations(draft):
    result = verify(draft, evidence=[*EVIDENCE, SETTLEMENT_RECORD], record_evidence=[SETTLEMENT_RECORD])

    assert "action_claim" in [v.kind for v in result.violations]


# --- clean text ---------------------------------------------------------------------------------------


def test_clean_text_drops_only_the_sentences_with_violations():
    draft = "안녕하세요. 공급가는 35,000원입니다. 할인율은 15%입니다.\n제안서 보내드렸습니다.\n감사합니다."
    result = verify(draft)
    assert result.clean_text == "안녕하세요. 할인율은 15%입니다.\n감사합니다."
    assert [quantity.value for quantity in result.quantities] == [35000, 15]


def test_clean_text_is_empty_when_nothing_safe_is_left():
    assert verify("공급가는 35,000원입니다. 한빛상사도 같습니다.").clean_text == ""


def test_clean_draft_is_returned_tidied():
    result = verify("공급가는  30,000원입니다.   감사합니다.")
    assert result.ok and result.clean_text == "공급가는 30,000원입니다. 감사합니다."


def test_result_as_dict_is_the_json_interface():
    payload = verify("LG전자 35,000원.").as_dict()
    assert set(payload) == {"violations", "clean_text", "quantities"}
    assert set(payload["violations"][0]) == {"kind", "value", "text", "span", "reason", "suggestion"}
    assert payload["violations"][0]["span"] == [0, 4]


def test_headline_case_every_kind_in_one_draft():
    draft = (
        "대한물산 담당자님, 삼송전자 갤럭시 공급가는 35,000원이고 할인율은 17%입니다. "
        "LG전자 제품은 한빛상사에서도 팝니다. 제안서 보내드렸습니다. 무료 배송 기준은 5만원 이상입니다."
    )
    result = verify(draft)
    assert kinds_and_values(result) == [
        ("brand_misspelt", "삼송전자"),
        ("amount", 35000),
        ("percent", 17),
        ("brand_unsupported", "LG전자"),
        ("other_vendor", "한빛상사"),
        ("action_claim", None),
    ]
    assert result.clean_text == "무료 배송 기준은 5만원 이상입니다."


# --- the judge ----------------------------------------------------------------------------------------

# Code cannot read "35000" without a unit as an amount; a judge may, with a quote.
BARE_EVIDENCE = [*EVIDENCE, "2주차 특별 공급가 35000 (부가세 별도)"]
DRAFT = "2주차 공급가는 35,000원입니다."


def _judged(judge, draft=DRAFT, evidence=BARE_EVIDENCE, **settings):
    return verify(
        draft, evidence=evidence, judge=judge, settings=VerificationSettings(**settings) if settings else None
    )


def _amount_violation():
    return Violation(kind="amount", value=35000, text="35,000원", span=(0, 7), reason="근거에 없는 금액: 35,000원")


def test_code_alone_flags_the_bare_number_case():
    assert kinds_and_values(verify(DRAFT, evidence=BARE_EVIDENCE)) == [("amount", 35000)]


def test_judge_quote_with_a_bare_number_does_not_clear_an_amount():
    """A bare number is no amount to the engine's parser, so a quote holding only "35000" clears nothing."""
    asked = []

    def judge(violation, evidence):
        asked.append((violation.kind, violation.value, evidence))
        return JudgeVerdict(verdict="supported", quote="특별 공급가 35000")

    result = _judged(judge)
    assert kinds_and_values(result) == [("amount", 35000)]
    assert asked == [("amount", 35000, tuple(BARE_EVIDENCE))]
    (ruling,) = result.judge_rulings
    assert not ruling.cleared and ruling.detail == "quote does not contain the value"


def test_judge_quote_that_the_parser_reads_as_the_value_clears():
    ruling = rule_on_answer(
        _amount_violation(), {"verdict": "supported", "quote": "공급가 35,000원"}, ("공급가 35,000원",)
    )
    assert ruling.cleared and ruling.quote == "공급가 35,000원"


def test_judge_does_not_clear_a_brand_the_evidence_writes_with_a_space():
    evidence = ["LG 전자 협력 공급가 30,000원"]
    draft = "LG전자 공급가는 30,000원입니다."
    assert kinds_and_values(verify(draft, evidence=evidence)) == [("brand_unsupported", "LG전자")]
    result = verify(draft, evidence=evidence, judge=lambda v, e: {"verdict": "supported", "quote": "LG 전자 협력"})
    assert kinds_and_values(result) == [("brand_unsupported", "LG전자")]


def test_judge_exception_counts_as_no_evidence():
    def judge(violation, evidence):
        raise RuntimeError("LLM down")

    result = _judged(judge)
    assert kinds_and_values(result) == [("amount", 35000)]
    assert result.clean_text == ""
    assert result.judge_rulings[0].detail == "judge failed: RuntimeError: LLM down"


def test_judge_timeout_counts_as_no_evidence():
    def judge(violation, evidence):
        time.sleep(0.5)
        return {"verdict": "supported", "quote": "특별 공급가 35000"}

    started = time.monotonic()
    result = _judged(judge, judge_timeout_seconds=0.05)
    assert time.monotonic() - started < 0.4
    assert kinds_and_values(result) == [("amount", 35000)]
    assert result.judge_rulings[0].detail == "judge timed out"


def test_judge_raising_timeout_itself_counts_as_no_evidence():
    def judge(violation, evidence):
        raise TimeoutError("read timeout")

    assert kinds_and_values(_judged(judge)) == [("amount", 35000)]


def test_judge_unparseable_answer_counts_as_no_evidence():
    result = _judged(lambda violation, evidence: "음... 아마 맞을 거예요")
    assert kinds_and_values(result) == [("amount", 35000)]
    assert result.judge_rulings[0].detail == "judge answer unparseable"


def test_judge_wrong_verdict_counts_as_no_evidence():
    result = _judged(lambda v, e: {"verdict": "partially", "quote": "특별 공급가 35000"})
    assert kinds_and_values(result) == [("amount", 35000)]
    assert result.judge_rulings[0].detail == "judge verdict 'partially'"


def test_judge_quote_not_in_evidence_counts_as_no_evidence():
    result = _judged(lambda v, e: {"verdict": "supported", "quote": "특별 공급가 35,000원"})
    assert kinds_and_values(result) == [("amount", 35000)]
    assert result.judge_rulings[0].detail == "quote not found in the evidence"


def test_judge_quote_without_the_value_counts_as_no_evidence():
    result = _judged(lambda v, e: {"verdict": "supported", "quote": "2주차 특별 공급가"})
    assert kinds_and_values(result) == [("amount", 35000)]
    assert result.judge_rulings[0].detail == "quote does not contain the value"


@pytest.mark.parametrize(
    "answer",
    [
        JudgeVerdict(verdict="supported", quote="확정 (35,000원)"),
        {"verdict": "supported", "quote": "확정 (35,000원)"},
        '{"verdict": "supported", "quote": "확정 (35,000원)"}',
        {"verdict": " Supported ", "quote": "확정 (35,000원)"},
        {"verdict": "supported", "quote": "35,000원"},
    ],
)
def test_supported_answers_with_a_valid_quote_clear(answer):
    evidence = ("서면 합의로 공급가 35000 확정 (35,000원)",)
    ruling = rule_on_answer(_amount_violation(), answer, evidence)
    assert ruling.cleared, ruling.detail


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        ({"verdict": "unsupported", "quote": "공급가 35000 확정"}, "judge verdict 'unsupported'"),
        ({"verdict": "ambiguous", "quote": "공급가 35000 확정"}, "judge verdict 'ambiguous'"),
        ({"verdict": "supported?", "quote": "공급가 35000 확정"}, "judge verdict 'supported?'"),
        ({"verdict": "supported", "quote": "공급가 35000 확정됨"}, "quote not found in the evidence"),
        ({"verdict": "supported", "quote": "서면 합의로"}, "quote does not contain the value"),
        ({"verdict": "supported", "quote": "공급가 3만5천원"}, "quote not found in the evidence"),
        ({"verdict": "supported", "quote": "350"}, "quote does not contain the value"),
        ({"verdict": "supported", "quote": "공급가 35000 확정"}, "quote does not contain the value"),
        ({"verdict": "supported", "quote": "35,000"}, "quote does not contain the value"),
        ({"verdict": "supported", "quote": ""}, "supported without a quote"),
        ({"verdict": "supported"}, "supported without a quote"),
        ({"quote": "공급가 35000 확정"}, "judge answer unparseable"),
        ("supported", "judge answer unparseable"),
        ("not json at all", "judge answer unparseable"),
        (None, "judge answer unparseable"),
        (["supported", "공급가 35000 확정"], "judge answer unparseable"),
        ({"verdict": 1, "quote": "x"}, "judge answer unparseable"),
    ],
)
def test_any_other_answer_leaves_the_violation_standing(answer, detail):
    evidence = ("서면 합의로 공급가 35000 확정 (35,000원)",)
    ruling = rule_on_answer(_amount_violation(), answer, evidence)
    assert not ruling.cleared
    assert ruling.detail == detail


def test_brand_quote_must_name_the_brand():
    violation = Violation(kind="brand_unsupported", value="LG전자", text="LG전자", span=(0, 4), reason="")
    evidence = ("엘지 전자 협력사 목록",)
    ruling = rule_on_answer(violation, {"verdict": "supported", "quote": "엘지 전자 협력사"}, evidence)
    assert not ruling.cleared and ruling.detail == "quote does not contain the value"


def test_judge_is_never_asked_about_other_vendors_or_claims():
    asked = []

    def judge(violation, evidence):
        asked.append(violation.kind)
        return {"verdict": "supported", "quote": "대한물산"}

    result = _judged(judge, draft="한빛상사에 보내드렸습니다.")
    assert asked == []
    assert sorted(v.kind for v in result.violations) == ["action_claim", "other_vendor"]


def test_judge_call_limit_leaves_the_rest_standing():
    result = _judged(lambda v, e: {"verdict": "no", "quote": ""}, draft="11,000원 12,000원 13,000원", max_judge_calls=2)
    assert len(result.violations) == 3
    details = [ruling.detail for ruling in result.judge_rulings]
    assert details.count("not judged: judge call limit reached") == 1 and details.count("judge verdict 'no'") == 2


# --- other vendors: near misses, references to a masked vendor, figures under a mask ---------------------------


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("가온상샤는 결품률이 높습니다.", [("other_vendor", "가온상샤")]),
        ("가온 상샤 사례입니다.", [("other_vendor", "가온 상샤")]),
        ("삼성전자 제품 안내입니다.", []),  # a known brand is never a near miss (of the vendor 삼성전기)
        ("반품 기준이 다릅니다.", []),
    ],
)
def test_a_name_one_syllable_off_another_vendors_is_flagged(draft, expected):
    result = verify(
        draft, other_vendors=["가온상사", "삼성전기"], evidence=["반품 기준 안내, 삼성전자 제품"], brands=["삼성전자"]
    )
    assert kinds_and_values(result) == expected


def test_a_near_miss_that_is_an_evidence_word_is_not_flagged():
    result = verify("가온상샤 안내입니다.", other_vendors=["가온상사"], evidence=["가온상샤 안내 (행사명)"])
    assert kinds_and_values(result) == []


def test_a_vendor_whose_name_is_one_syllable_from_anothers_never_flags_itself():
    """In 가온상회's room its own name is one syllable from 가온상사: not flagged; 가온상사 itself still is, and a word
    as close to the counterpart as to the other vendor is not."""
    names = ["가온상회", "가온상사"]
    assert kinds_and_values(verify("가온상회는 월말 결제입니다.", counterpart=["가온상회"], other_vendors=names)) == []
    assert kinds_and_values(verify("가온상화 안내", counterpart=["가온상회"], other_vendors=names)) == []
    assert kinds_and_values(verify("가온상사는 다릅니다.", counterpart=["가온상회"], other_vendors=names)) == [
        ("other_vendor", "가온상사")
    ]


@pytest.mark.parametrize(
    ("draft", "flagged"),
    [
        ("해당 협력사는 결품률 4.2%를 기록했습니다.", "해당 협력사"),
        ("[다른 벤더]는 결품률이 높습니다.", "[다른 벤더]"),
        ("다른 거래처보다 할인율이 높습니다.", "다른 거래처"),
        ("타 업체 공급가는 9,900원입니다.", "타 업체"),
        ("타사는 더 저렴합니다.", "타사"),
    ],
)
def test_a_sentence_about_a_masked_vendor_is_an_other_vendor_violation(draft, flagged):
    result = verify(draft + " 결제는 월말입니다.", evidence=["결품률 4.2%", "공급가 9,900원", "결제는 월말입니다."])
    assert ("other_vendor", flagged) in kinds_and_values(result)
    assert result.clean_text == "결제는 월말입니다."


def test_words_for_other_suppliers_without_a_value_or_claim_stay():
    result = verify("다른 거래처 정보는 안내해 드리지 않습니다.", evidence=[])
    assert kinds_and_values(result) == []


GAON_FIGURES = [
    "[다른 벤더]는 결품률 4.2%, 납품 단가 9,900원입니다. 모든 거래처의 결제일은 매월 10일입니다.",
    "[다른 벤더], [다른 벤더] 같은 냉장 거래처는 입고 온도 기준 5%를 넘기면 반품됩니다.",
    "[다른 벤더]의 행사 할인율은 12%입니다.",
    "[다른 벤더 상품] 절임배추 행사가는 18,900원입니다.",
]


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("결품률은 4.2%입니다.", [("other_vendor_value", 4.2)]),
        ("납품 단가는 9,900원입니다.", [("other_vendor_value", 9900)]),
        ("행사 할인율은 12%입니다.", [("other_vendor_value", 12)]),
        ("절임배추 행사가는 18,900원입니다.", [("other_vendor_value", 18900)]),
        ("입고 온도 기준 5%를 넘기면 반품됩니다.", []),  # a rule naming vendors as examples still supports
    ],
)
def test_a_value_stated_only_about_a_masked_vendor_supports_nothing(draft, expected):
    result = verify(draft, evidence=GAON_FIGURES)
    assert kinds_and_values(result) == expected
    assert all(violation.text in draft for violation in result.violations)


def test_a_value_stated_about_a_masked_vendor_and_elsewhere_is_supported():
    result = verify("결품률은 4.2%입니다.", evidence=[*GAON_FIGURES, "전체 평균 결품률 4.2%"])
    assert kinds_and_values(result) == []


GAON_SCHEDULES = [
    "[다른 벤더]의 정산일은 매월 20일입니다. [다른 벤더]는 오후 3시까지 입고합니다.",
    "[다른 벤더]의 최소 발주 수량은 40박스이고 납품일은 12월 18일입니다.",
    "[다른 벤더]는 매주 목요일에 납품합니다. [다른 벤더]의 담당자 연락처는 02-3456-7890입니다.",
    "[다른 벤더], [다른 벤더] 같은 냉장 거래처는 매월 25일까지 세금계산서를 발행하고 오전 6시에 입고합니다.",
]


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("정산일은 매월 20일입니다.", [("other_vendor_value", "day:20")]),
        ("입고는 오후 3시까지입니다.", [("other_vendor_value", "15:00")]),
        ("최소 발주 수량은 40박스입니다.", [("other_vendor_value", {"value": 40, "unit": "박스"})]),
        ("납품일은 12월 18일입니다.", [("other_vendor_value", "12-18")]),
        ("납품은 매주 목요일입니다.", [("other_vendor_value", "weekday:thu")]),
        ("연락처는 02-3456-7890입니다.", [("other_vendor_value", "0234567890")]),
        # a rule naming vendors as examples still supports
        ("세금계산서는 매월 25일까지 발행합니다.", []),
        ("입고는 오전 6시입니다.", []),
    ],
)
def test_a_date_time_quantity_or_contact_stated_only_about_a_masked_vendor_supports_nothing(draft, expected):
    result = verify(draft, evidence=GAON_SCHEDULES)
    assert kinds_and_values(result) == expected
    assert all(violation.text in draft for violation in result.violations)
    assert result.clean_text == ("" if expected else draft)


def test_a_date_stated_about_a_masked_vendor_and_elsewhere_is_supported():
    result = verify("정산일은 매월 20일입니다.", evidence=[*GAON_SCHEDULES, "모든 거래처의 정산일은 매월 20일입니다."])
    assert kinds_and_values(result) == []


def test_only_the_sentence_with_a_masked_vendors_date_goes():
    """Copied into a draft beside the counterpart's own date, the masked vendor's date goes with its sentence; the
    counterpart's stays."""
    evidence = [*GAON_SCHEDULES, "월말 마감 후 익월 10일에 대금을 지급합니다."]
    result = verify("대금은 익월 10일에 지급합니다. 정산일은 매월 20일입니다.", evidence=evidence)
    assert kinds_and_values(result) == [("other_vendor_value", "day:20")]
    assert result.clean_text == "대금은 익월 10일에 지급합니다."


def test_a_staff_room_checks_nothing_about_other_vendors():
    from agent.verification import OtherVendors

    result = verify(
        "가온상사는 결품률 4.2%입니다. 해당 협력사는 9,900원입니다.",
        evidence=GAON_FIGURES,
        other_vendors=OtherVendors(names=("가온상사",), checked=False),
    )
    assert kinds_and_values(result) == []


def test_another_vendors_brand_may_not_be_named():
    from agent.verification import OtherVendors

    result = verify(
        "고운들 절임배추 행사가는 18,900원입니다.",
        evidence=GAON_FIGURES,
        brands=[*BRANDS, "고운들"],
        other_vendors=OtherVendors(names=tuple(OTHER_VENDORS), brands=("고운들",)),
    )
    assert ("other_vendor", "고운들") in kinds_and_values(result)
    assert "brand_unsupported" not in {violation.kind for violation in result.violations}
    assert result.clean_text == ""


def test_a_judge_may_not_clear_a_value_with_a_quote_about_a_masked_vendor():
    """A lying judge quotes the masked vendor's clause, where the value is written as a bare number: not cleared."""
    evidence = ["[다른 벤더]는 공급가 35000으로 납품합니다.", "모든 거래처의 공급가는 계약서를 따릅니다."]

    def judge(violation, passages):
        assert not any("35000" in passage for passage in passages)
        return JudgeVerdict("supported", "[다른 벤더]는 공급가 35000으로 납품합니다.")

    result = verify("공급가는 35,000원입니다.", evidence=evidence, judge=judge)

    assert kinds_and_values(result) == [("amount", 35000)]
    assert [ruling.detail for ruling in result.judge_rulings] == ["quote not found in the evidence"]


def test_a_known_brand_is_not_another_vendors_shorter_name_inside_it():
    """The brand `한빛식품` holds the vendor alias `한빛`: not a mention; the alias as a word still is."""
    result = verify(
        "한빛식품 전 품목 15% 할인합니다. 한빛에서 납품합니다.",
        brands=[*BRANDS, "한빛식품"],
        evidence=["한빛식품 전 품목 15% 할인"],
        other_vendors=["한빛유통", "한빛"],
    )
    assert kinds_and_values(result) == [("other_vendor", "한빛")]
