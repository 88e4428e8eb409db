"""Brands beyond this turn's evidence: a misspelt brand of the counterpart's catalogue or of the known-brand index,
and brand- or business-shaped names found nowhere (`brand_unknown`). Two real names one syllable apart, a vendor's
own name, a word of the evidence or the question, and everyday compounds never flag."""

import pytest

from agent.verification import OtherVendors, verify_draft

EVIDENCE = ["다온상회 결제 조건: 월말 마감 후 익월 10일에 대금을 지급합니다. 결제 할인율은 2.5%입니다."]
# 다온팜 and 다온펌 are two real brands one syllable apart; 다온상회 carries 다온팜 and 햇살촌, 가온상사 carries 고운결.
BRANDS = ["다온팜", "다온펌", "햇살촌", "고운결", "다시다", "삼성전자"]
COUNTERPART = ["다온상회"]
COUNTERPART_BRANDS = ["다온팜", "햇살촌"]
OTHER_VENDORS = OtherVendors(names=("다온상회", "가온상사", "GAON SANGSA", "바름식품"), brands=("고운결",))


def verify(draft, *, evidence=EVIDENCE, question="", other_vendors=OTHER_VENDORS, counterpart_brands=None, judge=None):
    return verify_draft(
        draft,
        evidence=evidence,
        known_brands=BRANDS,
        counterpart_names=COUNTERPART,
        other_vendor_names=other_vendors,
        confirmed_actions=[],
        question=question,
        counterpart_brands=COUNTERPART_BRANDS if counterpart_brands is None else counterpart_brands,
        judge=judge,
    )


def found(result):
    return [(violation.kind, violation.value, violation.suggestion) for violation in result.violations]


# --- misspelt brands the evidence does not hold ----------------------------------------------------------


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        # the counterpart's own brands: anywhere in the draft
        ("햇살천 포기김치도 같은 조건입니다.", [("brand_misspelt", "햇살천", "햇살촌")]),
        ("햇살천도 같은 조건입니다.", [("brand_misspelt", "햇살천", "햇살촌")]),
        ("다온픔은 인기 상품입니다.", [("brand_misspelt", "다온픔", "다온팜")]),  # 다온팜 before 다온펌: carried
        # any other known brand: in brand position (before a product word, or quoted)
        ("다시도 제품도 있습니다.", [("brand_misspelt", "다시도", "다시다")]),
        ("‘다시도’ 상품도 있습니다.", [("brand_misspelt", "다시도", "다시다")]),
        ("다시금 확인해 주세요.", []),  # an everyday word one syllable from 다시다, not in brand position
        # a brand only another vendor carries: its product, masked; the brand itself is never suggested
        ("고운곁 제품도 같은 조건입니다.", [("other_vendor", "고운곁", "[다른 벤더 상품]")]),
        # two real brands one syllable apart never flag each other
        (
            "다온팜과 다온펌은 다른 브랜드입니다.",
            [("brand_unsupported", "다온팜", None), ("brand_unsupported", "다온펌", None)],
        ),
        ("다온상회 전용 조건입니다.", []),  # the counterpart's name, one syllable from nothing it is not
    ],
)
def test_misspellings_beyond_the_evidence(draft, expected):
    assert found(verify(draft)) == expected


def test_a_misspelling_the_evidence_writes_as_a_word_is_left_alone():
    assert verify("햇살천 포기김치", evidence=["햇살천 포기김치 입고 안내"]).ok


def test_without_the_counterparts_brands_only_brand_position_counts():
    assert verify("햇살천도 같은 조건입니다.", counterpart_brands=[]).ok
    assert found(verify("햇살천 제품도 같은 조건입니다.", counterpart_brands=[])) == [
        ("brand_misspelt", "햇살천", "햇살촌")
    ]


def test_a_vendors_name_is_never_a_misspelt_brand_in_a_staff_room():
    """In a staff room nothing about other vendors is checked, but their names are still no misspellings."""
    staff = OtherVendors(names=("다온상회", "다온폼"), checked=False)
    assert verify("다온폼 제품 현황입니다.", other_vendors=staff, counterpart_brands=[]).ok
    assert found(
        verify("다온폼 제품 현황입니다.", other_vendors=OtherVendors(checked=False), counterpart_brands=[])
    ) == [("brand_misspelt", "다온폼", "다온팜")]


# --- names found nowhere ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("draft", "name"),
    [
        ("별빛농장 제품도 같은 조건으로 납품합니다.", "별빛농장"),
        ("하늘빛식품의 참치캔도 있습니다.", "하늘빛식품"),
        ("별빛푸드에서 받은 물량입니다.", "별빛푸드"),
        ("바른들팜 상품입니다.", "바른들팜"),
        ("GreenOn푸드 제품입니다.", "GreenOn푸드"),
        ("‘별빛’ 브랜드 상품도 같은 조건입니다.", "별빛"),
        ("「별빛」 제품도 있습니다.", "별빛"),
        ('"별빛"이라는 상품도 있습니다.', "별빛"),
    ],
)
def test_a_brand_shaped_name_found_nowhere_is_a_violation(draft, name):
    (violation,) = verify(draft).violations
    assert (violation.kind, violation.value, violation.text, violation.suggestion) == (
        "brand_unknown",
        name,
        name,
        None,
    )
    assert violation.reason == f"근거와 브랜드 목록 어디에도 없는 이름: {name}"
    assert verify(draft).clean_text == ""


@pytest.mark.parametrize(
    "draft",
    [
        "가공식품과 냉동식품은 별도 기준입니다.",  # category compounds
        "건강기능식품은 표시 기준이 다릅니다.",
        "체험농장과 스마트팜 견학은 없습니다.",
        "식품점과 수산물 코너에 진열합니다.",  # the ending inside a longer word
        "신제품과 유제품은 먼저 입고합니다.",  # a one-syllable stem
        "직장상사에게 전달하지 않습니다.",
        "다온상회 전용 조건입니다.",  # the counterpart's own name
        "'반품 신청' 메뉴에서 접수합니다.",  # quoted, not before a product word
        '{"name": "상품명"}',  # between two quoted strings: no name
        "결제 할인율은 2.5%입니다.",
    ],
)
def test_everyday_words_are_no_unknown_brands(draft):
    assert verify(draft).ok, found(verify(draft))


def test_a_name_the_evidence_or_the_question_holds_is_known():
    assert verify("별빛농장 제품입니다.", evidence=[*EVIDENCE, "별빛 농장 산지 직송"]).ok  # spaces aside
    assert verify("별빛농장 제품입니다.", question="별빛농장 제품도 있나요?").ok
    assert verify("‘별빛’ 브랜드입니다.", evidence=[*EVIDENCE, "별빛 브랜드 입고"]).ok


def test_a_stem_the_evidence_or_the_question_names_makes_an_everyday_compound():
    """`딸기농장` in an answer about 딸기 is the farm the fruit comes from, not a supplier's name."""
    assert verify("딸기농장 직송입니다.", evidence=[*EVIDENCE, "설향 딸기는 산지에서 직송합니다."]).ok
    assert verify("참나무농장 직송입니다.", question="참나무 원목 있어요?").ok


def test_vendors_and_known_brands_are_no_unknown_brands():
    assert found(verify("바름식품도 같은 조건입니다.")) == [("other_vendor", "바름식품", "[다른 벤더]")]
    staff = OtherVendors(names=("다온상회", "바름식품"), checked=False)
    assert verify("바름식품도 같은 조건입니다.", other_vendors=staff).ok
    assert verify("햇살촌 제품입니다.", evidence=[*EVIDENCE, "햇살촌 포기김치"]).ok


def test_the_judge_is_never_asked_about_a_name_found_nowhere():
    asked = []

    def judge(violation, evidence):
        asked.append(violation.kind)
        return {"verdict": "supported", "quote": evidence[0]}

    result = verify("별빛농장 제품도 있습니다. 결제 할인율은 3%입니다.", judge=judge)
    assert [violation.kind for violation in result.violations] == ["brand_unknown", "percent"]
    assert asked == ["percent"]
