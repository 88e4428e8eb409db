"""Company-wide reads of the vendors app (what the agent's company tools turn into tables): which rows each one
reads, what it leaves out, and in which order."""

import datetime

import pytest

from conversations.tests.factories import RoomFactory
from vendors.models import VendorRecord
from vendors.selectors import (
    order_record_values,
    product_categories,
    product_margins_by_group,
    product_stock_alerts,
    product_stock_by_group,
    products_matching_most_tokens,
    promotions_running_on,
    settlement_record_values,
    vendor_codes_and_names,
    vendor_directory,
    vendor_record_titles,
)
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory, VendorRecordFactory

pytestmark = pytest.mark.django_db

RETIRED = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)
DAY = datetime.date(2026, 11, 15)


@pytest.fixture
def alpha():
    return VendorFactory(code="7001", name="알파상사", aliases=["알파"])


@pytest.fixture
def beta():
    return VendorFactory(code="7002", name="베타유통", is_active=False)


def record(vendor, kind, **fields):
    return VendorRecordFactory(vendor=vendor, kind=kind, **fields)


# --- vendors ---------------------------------------------------------------------------------------------------


def test_vendor_codes_and_names_reads_only_the_vendors_asked_for(alpha, beta):
    VendorFactory(code="7003", name="감마식품")

    assert vendor_codes_and_names([alpha.pk, beta.pk, alpha.pk]) == {
        alpha.pk: ("7001", "알파상사", True),
        beta.pk: ("7002", "베타유통", False),
    }
    assert vendor_codes_and_names([]) == {}


def test_vendor_directory_finds_by_code_name_or_alias_and_counts_rooms(alpha, beta):
    """Code and name parts match (the name ignoring case), an alias matches too; each vendor carries its rooms."""
    gamma = VendorFactory(code="8001", name="Gamma Foods")
    RoomFactory(vendor=alpha)
    RoomFactory(vendor=alpha)

    by_alias = vendor_directory(query="알파", limit=10)
    assert [(v.code, v.room_count) for v in by_alias.vendors] == [("7001", 2)]
    assert [v.code for v in vendor_directory(query="700", limit=10).vendors] == ["7001", "7002"]
    assert [v.code for v in vendor_directory(query="gamma", limit=10).vendors] == [gamma.code]


def test_vendor_directory_filters_by_active_flag_and_counts_beyond_the_limit(alpha, beta):
    VendorFactory(code="7003", name="감마식품")

    everyone = vendor_directory(limit=2)
    assert (everyone.total, everyone.active, [v.code for v in everyone.vendors]) == (3, 2, ["7001", "7002"])
    inactive = vendor_directory(is_active=False, limit=10)
    assert (inactive.total, inactive.active, [v.code for v in inactive.vendors]) == (1, 0, ["7002"])
    assert [v.code for v in vendor_directory(is_active=True, limit=10).vendors] == ["7001", "7003"]
    none = vendor_directory(query="없는벤더", limit=10)
    assert (none.total, none.active, none.vendors) == (0, 0, [])


# --- records ---------------------------------------------------------------------------------------------------


def test_order_record_values_reads_the_period_and_the_undated_orders_only(alpha, beta):
    """Current orders dated inside the period (both ends included) or without a date; the keys asked for, in
    their order, after id, vendor id and `ordered_at`."""
    first = record(alpha, VendorRecord.Kind.ORDER, values={"ordered_at": "2026-11-01", "amount": 100, "sku": "A"})
    last = record(beta, VendorRecord.Kind.ORDER, values={"ordered_at": "2026-11-30", "amount": "2,000원"})
    missing = record(alpha, VendorRecord.Kind.ORDER, values={"amount": 5})
    empty = record(alpha, VendorRecord.Kind.ORDER, values={"ordered_at": "", "amount": 6})
    record(alpha, VendorRecord.Kind.ORDER, values={"ordered_at": "2026-10-31", "amount": 7})
    record(alpha, VendorRecord.Kind.ORDER, values={"ordered_at": "2026-12-01", "amount": 8})
    record(alpha, VendorRecord.Kind.ORDER, values={"ordered_at": "2026-11-10", "amount": 9}, retired_at=RETIRED)
    record(alpha, VendorRecord.Kind.SETTLEMENT, values={"ordered_at": "2026-11-10", "amount": 10})

    rows = order_record_values(
        ordered_from=datetime.date(2026, 11, 1), ordered_to=datetime.date(2026, 11, 30), keys=("sku", "amount")
    )

    by_id = {row[0]: row for row in rows}
    assert set(by_id) == {first.pk, last.pk, missing.pk, empty.pk}
    assert by_id[first.pk][1:3] == (alpha.pk, "2026-11-01")
    assert by_id[first.pk][3] == "A"
    assert by_id[last.pk][1:4] == (beta.pk, "2026-11-30", None)
    assert by_id[last.pk][4] == "2,000원"
    assert by_id[missing.pk][2] is None
    assert by_id[empty.pk][2] == ""


def test_vendor_record_titles_by_id(alpha):
    one, two = record(alpha, VendorRecord.Kind.ORDER, title="11월 발주"), record(alpha, VendorRecord.Kind.ORDER)
    record(alpha, VendorRecord.Kind.ORDER, title="다른 발주")

    assert vendor_record_titles(iter([one.pk, two.pk])) == {one.pk: "11월 발주", two.pk: two.title}


def test_settlement_record_values_reads_current_settlements_of_the_month_asked(alpha, beta):
    record(alpha, VendorRecord.Kind.SETTLEMENT, values={"amount_due": 100, "amount_paid": 40, "due_date": "2026-11-10"})
    record(beta, VendorRecord.Kind.SETTLEMENT, values={"amount_due": "200", "due_date": "2026-12-10"})
    record(
        alpha, VendorRecord.Kind.SETTLEMENT, values={"amount_due": 300, "due_date": "2026-11-20"}, retired_at=RETIRED
    )
    record(alpha, VendorRecord.Kind.ORDER, values={"amount_due": 400, "due_date": "2026-11-20"})

    assert sorted(settlement_record_values(), key=str) == sorted(
        [(alpha.pk, "100", "40", "2026-11-10"), (beta.pk, "200", None, "2026-12-10")], key=str
    )
    assert settlement_record_values(due_month="2026-12") == [(beta.pk, "200", None, "2026-12-10")]


def test_promotions_running_on_a_day_end_soonest_first_and_count_the_undated_apart(alpha, beta):
    """Running on the day: started (or open at the start) and not ended (or open at the end). Ended, later and
    retired promotions are left out; undated ones are only counted."""

    def promotion(vendor, title, start, end, **fields):
        return record(
            vendor, VendorRecord.Kind.PROMOTION, title=title, effective_from=start, effective_to=end, **fields
        )

    promotion(alpha, "상시", None, None)
    promotion(beta, "상시 2", None, None)
    promotion(alpha, "열린 끝", datetime.date(2026, 11, 1), None)
    promotion(beta, "오늘 끝", datetime.date(2026, 11, 1), DAY)
    promotion(alpha, "오늘 시작", DAY, datetime.date(2026, 11, 20))
    promotion(alpha, "열린 시작", None, datetime.date(2026, 11, 18))
    promotion(alpha, "지난", datetime.date(2026, 11, 1), datetime.date(2026, 11, 14))
    promotion(alpha, "예정", datetime.date(2026, 11, 16), datetime.date(2026, 11, 30))
    promotion(alpha, "폐기", datetime.date(2026, 11, 1), datetime.date(2026, 11, 30), retired_at=RETIRED)
    record(alpha, VendorRecord.Kind.NOTICE, effective_from=datetime.date(2026, 11, 1))

    running = promotions_running_on(DAY, limit=3)

    assert [r.title for r in running.records] == ["오늘 끝", "열린 시작", "오늘 시작"]
    assert running.records[0].vendor.code == "7002"
    assert (running.total, running.vendor_count, running.undated) == (4, 2, 2)
    assert [r.title for r in promotions_running_on(DAY, limit=10).records][-1] == "열린 끝"


# --- products --------------------------------------------------------------------------------------------------


def product(vendor, sku, **fields):
    return ProductFactory(vendor=vendor, sku=sku, brand=None, **fields)


def test_product_categories_are_keyed_by_vendor_and_sku(alpha, beta):
    product(alpha, "SOY", category="양념")
    product(beta, "SOY", category="수입 양념")
    product(alpha, "OLD", category="단종", retired_at=RETIRED)
    product(alpha, "WATER", category="음료")

    assert product_categories(vendor_ids=[alpha.pk, beta.pk], skus=["SOY", "OLD"]) == {
        (alpha.pk, "SOY"): "양념",
        (beta.pk, "SOY"): "수입 양념",
        (alpha.pk, "OLD"): "단종",
    }


def test_product_stock_by_group_sums_current_products_as_whole_numbers(alpha, beta):
    product(alpha, "A1", category="양념", unit_price=1_000, stock_quantity=10, safety_stock=10)
    product(alpha, "A2", category="음료", unit_price=500, stock_quantity=4, safety_stock=1)
    product(beta, "B1", category="양념", unit_price=3_000_000_000, stock_quantity=3, safety_stock=5)
    product(alpha, "A3", category="양념", unit_price=9_999, stock_quantity=99, retired_at=RETIRED)

    by_vendor = product_stock_by_group(group_by="vendor_id")
    assert by_vendor == [
        {"vendor_id": beta.pk, "products": 1, "stock": 3, "stock_value": 9_000_000_000, "low": 1},
        {"vendor_id": alpha.pk, "products": 2, "stock": 14, "stock_value": 12_000, "low": 1},
    ]
    assert all(type(value) is int for group in by_vendor for value in group.values())
    assert product_stock_by_group(group_by="category", category="음료") == [
        {"category": "음료", "products": 1, "stock": 4, "stock_value": 2_000, "low": 0}
    ]


def test_product_stock_alerts_largest_shortfall_first(alpha, beta):
    product(alpha, "A-OUT", category="양념", stock_quantity=0, safety_stock=5)
    product(beta, "B-SHORT", category="음료", stock_quantity=2, safety_stock=10)
    product(alpha, "A-EVEN", category="양념", stock_quantity=4, safety_stock=4)
    product(alpha, "A-FINE", category="양념", stock_quantity=9, safety_stock=4)
    product(alpha, "A-OLD", category="양념", stock_quantity=0, safety_stock=50, retired_at=RETIRED)

    alerts = product_stock_alerts(limit=2)

    assert [(p.sku, p.shortfall) for p in alerts.products] == [("B-SHORT", 8), ("A-OUT", 5)]
    assert alerts.products[0].vendor.code == "7002"
    assert (alerts.total, alerts.sold_out) == (3, 1)
    seasoning = product_stock_alerts(category="양념", limit=10)
    assert ([p.sku for p in seasoning.products], seasoning.total) == (["A-OUT", "A-EVEN"], 2)


def test_product_margins_by_group_leave_out_products_without_a_cost_or_a_price(alpha, beta):
    product(alpha, "A1", category="양념", unit_price=10_000, cost_price=7_000)
    product(alpha, "A2", category="양념", unit_price=1_000, cost_price=1_200)
    product(beta, "B1", category="음료", unit_price=3_000, cost_price=2_000)
    product(beta, "B-NOCOST", category="음료", unit_price=5_000, cost_price=None)
    product(beta, "B-FREE", category="음료", unit_price=0, cost_price=100)
    product(alpha, "A-OLD", category="양념", unit_price=1, cost_price=None, retired_at=RETIRED)

    margins = product_margins_by_group(group_by="category")

    assert margins.groups == [
        {"category": "양념", "products": 2, "price": 11_000, "cost": 8_200, "below_cost": 1},
        {"category": "음료", "products": 1, "price": 3_000, "cost": 2_000, "below_cost": 0},
    ]
    assert (margins.no_cost, margins.zero_price) == (1, 1)
    assert [g["vendor_id"] for g in product_margins_by_group(group_by="vendor_id").groups] == sorted(
        [alpha.pk, beta.pk]
    )


def test_products_matching_most_tokens_keeps_only_the_best_matches_cheapest_first(alpha, beta):
    """Products holding both tokens beat those holding one; a token found in the category counts; retired
    products are never matched."""
    sesame = BrandFactory(name="참깨")
    ProductFactory(vendor=alpha, brand=sesame, sku="A-SOY", name="참깨 간장 1L", unit_price=10_000)
    ProductFactory(vendor=beta, brand=sesame, sku="B-SOY", name="참깨 간장 1L", unit_price=9_500)
    product(beta, "B-SAUCE", name="진간장", category="참깨 양념", unit_price=100)
    product(alpha, "A-OIL", name="참깨 기름", unit_price=1)
    product(alpha, "A-OLD", name="참깨 간장 구형", unit_price=2, retired_at=RETIRED)

    matches = products_matching_most_tokens(["참깨", "간장"], limit=2)

    assert matches.hits == 2
    assert [p.sku for p in matches.products] == ["B-SAUCE", "B-SOY"]
    assert matches.products[1].brand.name == "참깨" and matches.products[1].vendor.code == "7002"
    assert (matches.total, matches.vendor_count) == (3, 2)
    assert products_matching_most_tokens(["없는상품"], limit=5) is None
