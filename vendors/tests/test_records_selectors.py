"""Reads of vendors' records and products: the trigram indexes, the brand names of the catalogue, and the SQL
passes of the records search, called with plain data as the agent's query side calls them."""

import datetime

import pytest
from django.db import connection

from vendors.selectors import (
    VendorRowsMatched,
    VendorRowsQuery,
    brand_names_all,
    brand_names_of_vendor,
    vendor_rows_match,
    vendor_rows_match_similar,
)
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory, VendorRecordFactory

pytestmark = pytest.mark.django_db


def test_trigram_indexes_exist_on_postgresql():
    """Migration 0002 put GIN trigram indexes on both searched tables."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN "
            "('vendors_record_search_trgm', 'vendors_product_search_trgm')"
        )
        indexes = dict(cursor.fetchall())

    assert set(indexes) == {"vendors_record_search_trgm", "vendors_product_search_trgm"}
    assert all("USING gin (search_text gin_trgm_ops)" in definition for definition in indexes.values())


def test_brand_names_all_lists_names_and_aliases():
    """Every brand name and alias, for checks that must know brands beyond one answer's evidence."""
    BrandFactory(name="해태", aliases=["해태제과"])
    BrandFactory(name="한빛식품")

    assert sorted(brand_names_all()) == ["한빛식품", "해태", "해태제과"]


def test_brand_names_of_vendor_lists_the_brands_its_current_products_carry():
    """The counterpart's own catalogue: a brand it carries, with its aliases; not another vendor's brand, not the
    brand of a product staff retired, never twice for two products."""
    own, other = VendorFactory(code="1001"), VendorFactory(code="1002")
    haetae, hanbit, retired = (
        BrandFactory(name="해태", aliases=["해태제과"]),
        BrandFactory(name="한빛식품"),
        BrandFactory(name="고운들"),
    )
    ProductFactory(vendor=own, brand=haetae, sku="A-1")
    ProductFactory(vendor=own, brand=haetae, sku="A-2")
    ProductFactory(vendor=other, brand=hanbit, sku="B-1")
    ProductFactory(vendor=own, brand=retired, sku="A-3", retired_at=datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC))

    assert brand_names_of_vendor(own) == ["해태", "해태제과"]
    assert brand_names_of_vendor(other) == ["한빛식품"]


# --- the SQL passes of the records search ---------------------------------------------------------------------

NO_WINDOW = {"window_start": None, "window_end": None}


@pytest.fixture
def counterpart():
    return VendorFactory(code="1001", name="대한물산")


def _pks(rows) -> list[int]:
    return [row.pk for row in rows]


def _query(*, tokens, **fields) -> VendorRowsQuery:
    return VendorRowsQuery(tokens=tuple(tokens), **fields)


def _match(**fields) -> VendorRowsMatched:
    return vendor_rows_match(_query(**fields))


def _similar(found: VendorRowsMatched, similar_tokens: list[str], **fields) -> VendorRowsMatched:
    return vendor_rows_match_similar(found, _query(**fields), similar_tokens)


def test_the_exact_pass_scores_the_share_of_tokens_and_the_callers_synonyms_for_a_little_less(counterpart):
    """A row holding every token scores 1, one holding half 0.5; a synonym the caller gives counts 0.85 of a token,
    and without it the row writing the subject another way is not found: the selector has no word list of its own."""
    both = VendorRecordFactory(vendor=counterpart, title="반품 정산 기준", body="반품분은 다음 정산에서 차감.")
    one = VendorRecordFactory(vendor=counterpart, title="정산 일정", body="매월 말일 정산.")
    terms = VendorRecordFactory(vendor=counterpart, title="거래 조건", body="결제 조건은 월말 마감 익월 10일.")
    scope = {"vendor_id": counterpart.pk, "limit": 5, **NO_WINDOW}

    found = _match(tokens=["반품", "정산"], synonyms={}, **scope)
    assert _pks(found.records) == [both.pk, one.pk]
    assert [row.score for row in found.records] == [1.0, 0.5]

    plain = _match(tokens=["대금"], synonyms={}, **scope)
    other_word = _match(tokens=["대금"], synonyms={"대금": ["결제"]}, **scope)
    assert plain.records == []
    assert _pks(other_word.records) == [terms.pk]
    assert other_word.records[0].score == pytest.approx(0.85)


def test_a_one_syllable_token_counts_by_its_synonyms_only(counterpart):
    """`돈` is inside too many words (`돈까스`): only the longer words the caller gives for it are matched, and a
    one-syllable token with none matches nothing."""
    terms = VendorRecordFactory(vendor=counterpart, title="거래 조건", body="결제 조건은 계좌 이체입니다.")
    VendorRecordFactory(vendor=counterpart, title="돈까스 납품 일정", body="돈까스는 주 2회 납품합니다.")
    scope = {"vendor_id": counterpart.pk, "limit": 5, **NO_WINDOW}

    assert _pks(_match(tokens=["돈"], synonyms={"돈": ["결제", "대금"]}, **scope).records) == [terms.pk]
    assert _match(tokens=["돈"], synonyms={}, **scope) == VendorRowsMatched(records=[], products=[])


def test_the_window_bounds_the_records_in_force_and_products_carry_their_brand(counterpart):
    """A record is a candidate when its effective period overlaps the window (None: open on that side); a
    product row comes back with its brand's name."""
    current = VendorRecordFactory(vendor=counterpart, title="정산 기준")
    ended = VendorRecordFactory(vendor=counterpart, title="정산 기준 (구)", effective_to=datetime.date(2020, 12, 31))
    upcoming = VendorRecordFactory(vendor=counterpart, title="정산 기준 (신)", effective_from=datetime.date(2027, 1, 1))
    product = ProductFactory(vendor=counterpart, brand=BrandFactory(name="한빛식품"), name="정산 테스트 상품")
    scope = {"vendor_id": counterpart.pk, "tokens": ["정산"], "synonyms": {}, "limit": 5}

    now = _match(window_start=datetime.date(2026, 12, 1), window_end=datetime.date(2026, 12, 1), **scope)
    ahead = _match(window_start=datetime.date(2026, 12, 1), window_end=None, **scope)
    always = _match(**NO_WINDOW, **scope)

    assert _pks(now.records) == [current.pk]
    assert set(_pks(ahead.records)) == {current.pk, upcoming.pk}
    assert set(_pks(always.records)) == {current.pk, ended.pk, upcoming.pk}
    assert _pks(now.products) == [product.pk]
    assert now.products[0].brand_name == "한빛식품"


def test_another_vendors_rows_are_never_read(counterpart):
    """The same tokens read only the given vendor's rows."""
    other = VendorFactory(code="1002", name="가온상사")
    own = VendorRecordFactory(vendor=counterpart, title="리베이트 조건")
    VendorRecordFactory(vendor=other, title="가온 특별 리베이트 조건")
    ProductFactory(vendor=other, name="리베이트 상품")

    found = _match(vendor_id=counterpart.pk, tokens=["리베이트"], synonyms={}, limit=10, **NO_WINDOW)

    assert _pks(found.records) == [own.pk]
    assert found.products == []


def test_the_similar_pass_adds_word_similar_rows_below_an_exact_hit(counterpart):
    """`단말기들` is no substring of `단말기`: the similar pass (pg_trgm word similarity) finds it at a score below
    one, merged into what the exact pass found; without similar tokens the exact result is returned as it is."""
    terminal = VendorRecordFactory(vendor=counterpart, title="단말기 공급 계약", body="POS 단말기 공급 단가.")
    scope = {"vendor_id": counterpart.pk, "tokens": ["단말기들"], "synonyms": {}, "limit": 5, **NO_WINDOW}

    found = _match(**scope)
    assert found.records == []
    assert _similar(found, [], **scope) is found

    similar = _similar(found, ["단말기들"], **scope)
    assert connection.vendor == "postgresql"
    assert _pks(similar.records) == [terminal.pk]
    assert 0 < similar.records[0].score < 1
