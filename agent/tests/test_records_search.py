"""Per-counterpart record search: scoped to the vendor inside the query, Korean particles, products, ranking."""

import datetime
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.knowledge.records import particle_strip, query_tokens, vendor_records_search
from vendors.models import VendorRecord
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory, VendorRecordFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("token", "stem"),
    [
        ("단말기는", "단말기"),
        ("단말기가", "단말기"),
        ("계약서에서", "계약서"),
        ("정산은요", "정산"),
        ("할인율이", "할인율"),
        ("프로모션까지", "프로모션"),
        ("상품이랑", "상품"),
        ("단가", "단가"),  # `가` is a particle, but a one-character stem is never left
        ("결제", "결제"),
    ],
)
def test_particle_strip_leaves_the_noun(token, stem):
    """Particles and polite endings come off the end of a token; a stem never drops below two characters."""
    assert particle_strip(token) == stem


def test_query_tokens_drop_question_words_and_punctuation():
    """Question words (`얼마예요`, `알려주세요`) and edge punctuation are not search terms; duplicates collapse."""
    assert query_tokens("단말기는 얼마예요?") == ["단말기"]
    # An aspect syllable after a noun (율, 일, 비) leaves its stem, which the values' `할인율` still contains.
    assert query_tokens("프로모션 할인율 알려주세요!!") == ["프로모션", "할인"]
    assert query_tokens("물건값은 매달 며칠에 결제돼요?") == ["물건값", "결제"]
    # A month's share is the month the records write (`11월 매입분`); `정산금` finds `정산액` through its stem.
    assert query_tokens("11월치 정산금 며칠에 들어오나요") == ["11월", "정산", "들어오나"]
    assert query_tokens("포기김치 단가") == ["포기김치", "단가"]
    assert query_tokens("HB-100의 단가가 얼마죠, hb-100 단가") == ["hb-100", "단가"]
    assert query_tokens("? ! 뭐가 있나요") == []


@pytest.fixture
def counterpart():
    return VendorFactory(code="1001", name="대한물산")


@pytest.fixture
def terminal_contract(counterpart):
    return VendorRecordFactory(
        vendor=counterpart,
        kind=VendorRecord.Kind.CONTRACT,
        title="단말기 공급 계약",
        body="POS 단말기 공급 단가는 대당 189,000원이며 월말 마감 익월 10일 결제.",
        values={"결제 조건": "월말 마감 익월 10일", "단가": "189,000원"},
        source_id="C-1",
    )


@pytest.mark.parametrize("question", ["단말기는", "단말기가 얼마예요?", "단말기를 더 받고 싶어요", "단말기의 단가"])
def test_particles_do_not_defeat_the_search(counterpart, terminal_contract, question):
    """`단말기는` (and other particle forms) finds the record about `단말기`."""
    items = vendor_records_search(vendor=counterpart, query=question, limit=5)

    assert [item.reference for item in items] == [f"record:{terminal_contract.pk}"]


def test_suffix_form_is_found_by_trigram_similarity(counterpart, terminal_contract):
    """A form that is not a substring of the record (`단말기들`) still matches by pg_trgm word similarity, below
    the score of an exact token hit."""
    exact = vendor_records_search(vendor=counterpart, query="단말기", limit=5)
    suffixed = vendor_records_search(vendor=counterpart, query="단말기들", limit=5)

    assert [item.reference for item in suffixed] == [f"record:{terminal_contract.pk}"]
    assert 0 < suffixed[0].score < exact[0].score == 1.0


def test_record_evidence_item_carries_text_values_and_period(counterpart):
    """A record item shows kind, title, body, structured values and its validity, and keeps them in `extra`."""
    record = VendorRecordFactory(
        vendor=counterpart,
        kind=VendorRecord.Kind.PROMOTION,
        title="여름 라면 프로모션",
        body="행사 기간 중 라면 전 품목 할인.",
        values={"할인율": "12%", "최소 주문": 50},
        effective_from=datetime.date(2026, 7, 1),
        effective_to=datetime.date(2026, 8, 31),
        source="erp",
        source_id="P-7",
    )

    [item] = vendor_records_search(
        vendor=counterpart, query="라면 프로모션 할인율은요?", limit=5, on=datetime.date(2026, 7, 15)
    )

    assert item.source_kind == "record"
    assert item.reference == f"record:{record.pk}"
    assert item.title == "여름 라면 프로모션"
    assert item.text.splitlines()[:3] == [
        "[프로모션] 여름 라면 프로모션",
        "행사 기간 중 라면 전 품목 할인.",
        "할인율: 12% · 최소 주문: 50",
    ]
    assert item.text.splitlines()[3].startswith("적용 기간: 2026-07-01 ~ 2026-08-31")
    assert item.extra["kind"] == "promotion"
    assert item.extra["values"] == {"할인율": "12%", "최소 주문": 50}
    assert item.extra["source_id"] == "P-7"
    assert item.workspace == ""
    assert item.mask_count == 0


def test_products_are_searchable_by_brand_alias_name_and_sku(counterpart):
    """A product is a record-like item `브랜드 상품명 (SKU) 단가 N원`, found by brand, alias, name or SKU."""
    brand = BrandFactory(name="한빛식품", aliases=["HANBIT"])
    product = ProductFactory(vendor=counterpart, brand=brand, name="포기김치 10kg", sku="HB-100", unit_price=32000)
    reference = f"product:{product.pk}"

    for question in ["한빛식품 김치 단가", "hanbit 김치", "hb-100 가격", "포기김치는 얼마예요?"]:
        items = vendor_records_search(vendor=counterpart, query=question, limit=5)
        assert [item.reference for item in items] == [reference], question

    [item] = vendor_records_search(vendor=counterpart, query="HB-100", limit=5)
    assert item.source_kind == "record"
    assert item.text == "한빛식품 포기김치 10kg (HB-100) 단가 32,000원"
    assert item.extra == {"kind": "product", "sku": "HB-100", "brand": "한빛식품", "unit_price": 32000}


def test_more_matching_tokens_rank_first_and_records_out_of_force_are_left_out(counterpart):
    """Rows matching more query tokens come first. A record whose period ended is no evidence for a question
    about now; it is again when the question names its period."""
    both = VendorRecordFactory(vendor=counterpart, title="반품 정산 기준", body="반품분은 다음 정산에서 차감.")
    one = VendorRecordFactory(vendor=counterpart, title="정산 일정", body="매월 말일 정산.")
    expired = VendorRecordFactory(
        vendor=counterpart,
        title="반품 정산 기준 (구)",
        body="반품분은 다음 정산에서 차감.",
        effective_to=datetime.date(2020, 12, 31),
    )
    upcoming = VendorRecordFactory(
        vendor=counterpart, title="반품 정산 기준 (신)", body="반품분은 다음 정산에서 차감.",
        effective_from=datetime.date(2027, 1, 1),
    )  # fmt: skip
    today = datetime.date(2026, 12, 1)

    items = vendor_records_search(vendor=counterpart, query="반품 정산은 어떻게 되나요?", limit=5, on=today)

    assert [item.reference for item in items] == [f"record:{both.pk}", f"record:{one.pk}"]
    assert items[0].score == 1.0
    named = vendor_records_search(vendor=counterpart, query="2020년 12월 반품 정산은요?", limit=5, on=today)
    assert f"record:{expired.pk}" in [item.reference for item in named]
    assert "(종료)" in next(item.text for item in named if item.reference == f"record:{expired.pk}")
    coming = vendor_records_search(vendor=counterpart, query="다음 반품 정산 기준 예정", limit=5, on=today)
    assert f"record:{upcoming.pk}" in [item.reference for item in coming]


def test_a_question_naming_a_month_gets_no_record_about_another_month(counterpart):
    """Settlements are undated: each is about the month its title and `정산 월` name. "11월치 정산금" gets November's,
    not October's; a record naming no month, and a question naming none, keep every record."""
    october = VendorRecordFactory(
        vendor=counterpart, kind=VendorRecord.Kind.SETTLEMENT, title="10월 정산 내역",
        body="10월 매입 정산액은 9,340,000원이며 2026-11-10에 지급 완료했습니다.", values={"정산 월": "2026-10"},
    )  # fmt: skip
    november = VendorRecordFactory(
        vendor=counterpart, kind=VendorRecord.Kind.SETTLEMENT, title="정산 예정",
        body="매입분은 마감 후 정산서를 발행하며 지급 예정일은 2026-12-25입니다.", values={"정산 월": "2026-11"},
    )  # fmt: skip
    terms = VendorRecordFactory(vendor=counterpart, title="정산 조건", body="정산은 월말 마감 익월 15일입니다.")
    today = datetime.date(2026, 12, 1)

    def found(query):
        return {item.reference for item in vendor_records_search(vendor=counterpart, query=query, limit=5, on=today)}

    assert found("11월치 정산금 언제 들어와요?") == {f"record:{november.pk}", f"record:{terms.pk}"}
    assert found("10월 정산 얼마였죠?") == {f"record:{october.pk}", f"record:{terms.pk}"}
    assert found("정산 언제 들어와요?") == {f"record:{october.pk}", f"record:{november.pk}", f"record:{terms.pk}"}
    # a day is when something happens, not what the question is about
    assert found("12월 25일에 들어오는 정산 얼마예요?") == {
        f"record:{october.pk}",
        f"record:{november.pk}",
        f"record:{terms.pk}",
    }


def test_another_word_for_the_subject_finds_the_record_for_a_little_less(counterpart):
    """`대금` is written `결제` in the contract terms: the record is found, below one that writes `대금` itself;
    a record about neither is not."""
    terms = VendorRecordFactory(
        vendor=counterpart, kind=VendorRecord.Kind.CONTRACT, title="2026년 거래 조건",
        body="결제 조건은 월말 마감 익월 10일 현금 결제입니다.",
    )  # fmt: skip
    notice = VendorRecordFactory(vendor=counterpart, title="대금 지급 안내", body="대금은 계좌 이체로 지급합니다.")
    VendorRecordFactory(vendor=counterpart, title="입고 안내", body="입고 시간은 오전 9시부터입니다.")

    items = vendor_records_search(vendor=counterpart, query="대금은 매달 며칠에 들어와요?", limit=5)

    assert [item.reference for item in items] == [f"record:{notice.pk}", f"record:{terms.pk}"]
    assert items[1].score < items[0].score


def test_limit_bounds_the_result(counterpart):
    """At most `limit` items come back; a zero limit or a query without search terms gives nothing."""
    VendorRecordFactory.create_batch(4, vendor=counterpart, title="공지 사항", body="배송 공지")
    ProductFactory.create_batch(3, vendor=counterpart, name="공지 상품")

    assert len(vendor_records_search(vendor=counterpart, query="공지", limit=5)) == 5
    assert vendor_records_search(vendor=counterpart, query="공지", limit=0) == []
    assert vendor_records_search(vendor=counterpart, query="얼마예요?", limit=5) == []


# --- vendor scoping -------------------------------------------------------------------------------------------


@pytest.fixture
def other_vendor_rows():
    """Another vendor's record and product, written so that queries can aim straight at them."""
    other = VendorFactory(code="1002", name="가온상사", aliases=["가온"])
    brand = BrandFactory(name="다온식품")
    record = VendorRecordFactory(
        vendor=other,
        kind=VendorRecord.Kind.SETTLEMENT,
        title="가온 특별 리베이트 조건",
        body="분기 매출 5억 초과분 리베이트 7%, 가온상사 전용.",
        values={"리베이트": "7%"},
        source_id="S-9",
    )
    product = ProductFactory(vendor=other, brand=brand, name="프리미엄 참기름 1L", sku="GA-777", unit_price=15800)
    return other, {f"record:{record.pk}", f"product:{product.pk}"}


SCOPING_QUERIES = [
    "가온 특별 리베이트 조건",
    "가온 특별 리베이트 조건은요?",
    "리베이트",
    "리베이트를 알려주세요",
    "7%",
    "GA-777",
    "ga-777 단가",
    "다온식품 참기름",
    "프리미엄 참기름은 얼마예요",
    "가온상사",
    "가온상사의 정산",
    "1002",
    "' OR '1'='1",
    "%",
    "_",
    "%' OR vendor_id <> 0 --",
    "\\%리베이트\\%",
    "리베이트 UNION SELECT * FROM vendors_vendorrecord",
]


@pytest.mark.parametrize("question", SCOPING_QUERIES)
def test_another_vendors_rows_look_exactly_like_missing_ones(
    counterpart, terminal_contract, other_vendor_rows, question
):
    """Whatever the phrasing — exact title, SKU, vendor name or code, SQL-ish text, particles — another vendor's
    rows never come back, and the answer is exactly the one given once those rows no longer exist."""
    other, other_references = other_vendor_rows

    with_other_rows = vendor_records_search(vendor=counterpart, query=question, limit=10)
    other.records.all().delete()
    other.products.all().delete()
    without_other_rows = vendor_records_search(vendor=counterpart, query=question, limit=10)

    assert with_other_rows == without_other_rows
    assert not other_references & {item.reference for item in with_other_rows}


def test_the_owner_finds_the_rows_the_counterpart_cannot(counterpart, other_vendor_rows):
    """The same questions do find those rows for their own vendor, so the empty answer above is the scope."""
    other, other_references = other_vendor_rows

    found = set()
    for question in SCOPING_QUERIES[:9]:
        found |= {item.reference for item in vendor_records_search(vendor=other, query=question, limit=10)}

    assert found == other_references


def test_vendor_filter_is_inside_every_search_query(counterpart, terminal_contract):
    """The vendor condition is part of the SQL that reads rows (not a filter applied afterwards)."""
    with CaptureQueriesContext(connection) as captured:
        vendor_records_search(vendor=counterpart, query="단말기", limit=5)

    reads = [q["sql"] for q in captured.captured_queries if q["sql"].lstrip().upper().startswith("SELECT")]
    row_reads = [sql for sql in reads if "search_text" in sql]
    assert len(row_reads) >= 2  # records and products; a similar pass each when the exact pass found nothing
    assert all(re.search(rf'\bvendor_id"? = {counterpart.pk}\b', sql) for sql in row_reads)


WORDS_OF_BOTH = ["가온", "특별", "리베이트", "조건", "참기름", "GA-777", "다온식품", "단말기", "공급", "계약", "1002"]
PARTICLES = ["", "은", "는", "이", "가", "을", "를", "에서", "의", "도", "으로", "요", "?", "%", "'", " OR 1=1"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(WORDS_OF_BOTH), st.sampled_from(PARTICLES)), min_size=1, max_size=6))
def test_no_phrasing_reaches_another_vendors_rows(counterpart, terminal_contract, other_vendor_rows, words):
    """Property: any mix of both vendors' words with particles and SQL-ish noise returns only own rows."""
    question = " ".join(word + particle for word, particle in words)

    items = vendor_records_search(vendor=counterpart, query=question, limit=10)

    assert {item.reference for item in items} <= {f"record:{terminal_contract.pk}"}


def test_a_receiving_verb_after_a_verbal_noun_and_a_one_syllable_subject_word_are_tokens():
    """`지급받는` is about 지급; `돈` is kept, since it names the subject other words write at length."""
    assert query_tokens("저희 돈은 어떻게 지급받는 구조예요?") == ["돈", "지급", "구조"]
    assert query_tokens("입금받나요?") == ["입금"]
    assert query_tokens("돈이요?") == ["돈"]
    assert query_tokens("이 차 얼마예요?") == []  # one syllable with no other words for it: no token


def test_a_one_syllable_subject_word_is_searched_by_its_longer_words_only(counterpart):
    """`돈` finds the contract that writes 결제; a record holding `돈` only inside another word does not match."""
    terms = VendorRecordFactory(
        vendor=counterpart, kind=VendorRecord.Kind.CONTRACT, title="2026년 거래 조건",
        body="결제 조건은 15일·말일 마감 후 10일 이내 계좌 이체입니다.",
    )  # fmt: skip
    VendorRecordFactory(vendor=counterpart, title="돈까스 납품 일정", body="돈까스는 주 2회 납품합니다.")

    items = vendor_records_search(vendor=counterpart, query="돈은 언제 들어와요?", limit=5)

    assert [item.reference for item in items] == [f"record:{terms.pk}"]


def test_a_named_season_and_a_spoken_percent_find_the_ended_promotion_and_a_day_asked_keeps_this_years_terms(
    counterpart,
):
    """`여름 특가 때는 몇 프로였죠?` asked in December names the summer: the ended promotion is evidence; asked about
    now it is not. `다음 달 며칠에` asks for the day of a term: this year's contract is still the one in force."""
    summer = VendorRecordFactory(
        vendor=counterpart, kind=VendorRecord.Kind.PROMOTION, title="여름 스마트포스 특가",
        body="7~8월 한정 영수증 용지 10% 특가 행사.", values={"할인율": "10%"},
        effective_from=datetime.date(2026, 7, 1), effective_to=datetime.date(2026, 8, 31),
    )  # fmt: skip
    contract = VendorRecordFactory(
        vendor=counterpart, kind=VendorRecord.Kind.CONTRACT, title="2026년 거래 조건",
        body="결제 조건은 월말 마감 익월 10일 현금 결제입니다.",
        effective_from=datetime.date(2026, 1, 1), effective_to=datetime.date(2026, 12, 31),
    )  # fmt: skip
    december = datetime.date(2026, 12, 1)

    named = vendor_records_search(vendor=counterpart, query="여름 특가 때는 몇 프로였죠?", limit=5, on=december)
    now = vendor_records_search(vendor=counterpart, query="지금 특가는 몇 프로예요?", limit=5, on=december)
    day = vendor_records_search(vendor=counterpart, query="저희 결제는 다음 달 며칠에 나와요?", limit=5, on=december)

    assert [item.reference for item in named] == [f"record:{summer.pk}"]
    assert now == []
    assert [item.reference for item in day] == [f"record:{contract.pk}"]
