"""The 11 company-wide tools: exact figures on a small data set, read by code from products and record values.

Dates are relative to today (the tools' default period ends today), so the figures hold on any day.
"""

import datetime
from pathlib import Path

import pytest
from django.utils import timezone

from agent.tools import ToolContext, tool_execute
from agent.tools.company import COMPANY_TOOL_NAMES
from conversations.models import Room
from conversations.tests.factories import RoomFactory
from vendors.models import Product, Vendor, VendorRecord
from vendors.records import records_import_file
from vendors.services import vendors_import_csv
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory, VendorRecordFactory

pytestmark = pytest.mark.django_db

DEMO_DATA = Path(__file__).resolve().parents[2] / "demo" / "data"


def days_ago(days: int) -> datetime.date:
    return timezone.localdate() - datetime.timedelta(days=days)


def order(vendor, days: int | None, amount, **values):
    if days is not None:
        values["ordered_at"] = days_ago(days).isoformat()
    return VendorRecordFactory(vendor=vendor, kind=VendorRecord.Kind.ORDER, values={"amount": amount, **values})


@pytest.fixture
def data():
    """Three vendors (감마식품 inactive) with products, orders, promotions and settlements."""
    alpha = VendorFactory(code="7001", name="알파상사", aliases=["알파"])
    beta = VendorFactory(code="7002", name="베타유통", aliases=["BT유통"], answer_mode=Vendor.AnswerMode.REVIEW)
    gamma = VendorFactory(code="7003", name="감마식품", is_active=False)
    sesame = BrandFactory(name="참깨")

    def product(vendor, sku, name, brand, category, unit_price, cost_price, stock, safety):
        return ProductFactory(
            vendor=vendor, sku=sku, name=name, brand=brand, category=category, unit_price=unit_price,
            cost_price=cost_price, stock_quantity=stock, safety_stock=safety,
        )  # fmt: skip

    product(alpha, "A-SOY", "참깨 간장 1L", sesame, "양념", 10_000, 7_000, 50, 20)
    product(alpha, "A-GOCH", "참깨 고추장 1kg", sesame, "양념", 8_000, None, 5, 10)
    product(alpha, "A-WATER", "생수 2L", None, "음료", 1_000, 600, 0, 0)
    product(beta, "B-SOY", "참깨 간장 1L", sesame, "양념", 9_500, 7_000, 10, 30)
    product(beta, "B-JUICE", "오렌지 주스 1L", None, "음료", 3_000, 3_300, 100, 10)
    product(gamma, "C-SOY", "참깨 간장 1L", sesame, "양념", 11_000, None, 40, 5)

    # This period (the last 30 days).
    order(alpha, 1, 100_000, quantity=10, status="배송완료", sku="A-SOY")
    order(alpha, 5, "250,000원", quantity="25", status="접수", sku="A-GOCH")
    order(alpha, 10, 50_000, quantity=5, status="취소", sku="A-SOY")
    order(beta, 2, 300_000, quantity=30, status="배송완료", sku="B-SOY", category="음료")  # its own category wins
    order(beta, 3, "abc", status="접수")
    order(gamma, 20, 80_000, quantity=8, status="배송완료", sku="NO-SUCH-SKU")
    # The 30 days before.
    order(alpha, 40, 200_000, quantity=20, status="배송완료", sku="A-SOY")
    order(beta, 45, 100_000, quantity=10, status="배송완료", sku="B-JUICE")
    # Older, and undated.
    order(alpha, 70, 999_000, status="배송완료")
    order(beta, None, 5_000, status="접수")

    def promotion(vendor, title, start, end, **values):
        VendorRecordFactory(
            vendor=vendor, kind=VendorRecord.Kind.PROMOTION, title=title, values=values,
            effective_from=start and days_ago(-start), effective_to=end and days_ago(-end),
        )  # fmt: skip

    promotion(alpha, "알파 봄 할인", -5, 5, discount_rate=10)
    promotion(beta, "베타 지난 특가", -30, -1, discount_rate=20)
    promotion(beta, "베타 상시 할인", -10, None, discount_amount=1_000)
    promotion(gamma, "감마 예정 행사", 1, 10, discount_rate=5)
    promotion(alpha, "알파 기간 없는 행사", None, None)

    def settlement(vendor, **values):
        VendorRecordFactory(vendor=vendor, kind=VendorRecord.Kind.SETTLEMENT, values=values)

    settlement(alpha, amount_due=1_000_000, amount_paid=1_000_000, due_date=days_ago(10).isoformat())
    settlement(alpha, amount_due=500_000, amount_paid=200_000, due_date=days_ago(3).isoformat())
    settlement(beta, amount_due=800_000, due_date=days_ago(-10).isoformat())
    settlement(beta, amount_due="bad", due_date=days_ago(-10).isoformat())
    settlement(gamma, amount_due=400_000, amount_paid="400,000원", due_date=days_ago(-5).isoformat())
    settlement(gamma, amount_due=70_000, amount_paid=70_000, due_date="2030-01-15")

    internal = RoomFactory(vendor=alpha, kind=Room.Kind.INTERNAL, name="(7001) 알파상사 CS 내부방")
    RoomFactory(vendor=alpha)
    RoomFactory(vendor=beta)
    return {"alpha": alpha, "beta": beta, "gamma": gamma, "internal": internal}


@pytest.fixture
def run(data):
    context = ToolContext(question_id=None, vendor=data["alpha"], room=data["internal"], room_kind=Room.Kind.INTERNAL)

    def run_tool(name: str, **arguments) -> str:
        execution = tool_execute(context, name, arguments)
        assert execution.allowed, execution.blocked_reason
        assert not execution.error, execution.error
        return execution.result.text

    return run_tool


def test_sales_summary_sums_order_amounts_by_vendor(run):
    """Orders of the last 30 days by vendor, largest first; cancelled, unreadable and undated orders are counted
    apart, older orders are outside the period."""
    text = run("company_sales_summary")

    lines = text.splitlines()
    assert lines[0] == f"[전사 매출 요약] {days_ago(29)} ~ {days_ago(0)} (30일) · 주문 기록 기준"
    assert lines[1:6] == [
        "벤더 | 주문 수 | 수량 | 금액",
        "(7001) 알파상사 | 2건 | 35 | 350,000원",
        "(7002) 베타유통 | 1건 | 30 | 300,000원",
        "(7003) 감마식품 (비활성) | 1건 | 8 | 80,000원",
        "합계 (3개 벤더) | 4건 | 73 | 730,000원",
    ]
    assert "(취소 주문 1건 제외)" in lines
    assert "(금액(amount)을 읽을 수 없는 주문 1건 제외)" in lines
    assert "(주문일(ordered_at)이 없는 주문 1건은 기간 집계에 넣지 않았습니다.)" in lines


def test_sales_summary_period_follows_days_and_end_date(run):
    """`days` widens the period; `end_date` moves its end (here to before every order but the oldest)."""
    assert "(7001) 알파상사 | 3건 | 55 | 550,000원" in run("company_sales_summary", days=60).splitlines()
    text = run("company_sales_summary", days=1, end_date=days_ago(70).isoformat())
    assert "(7001) 알파상사 | 1건 | 0 | 999,000원" in text.splitlines()
    assert "합계 (1개 벤더) | 1건 | 0 | 999,000원" in text.splitlines()


def test_sales_summary_limit_reports_the_vendors_left_out(run):
    """Rows beyond `limit` are counted, and the total still covers every vendor."""
    lines = run("company_sales_summary", limit=1).splitlines()
    assert lines[2:5] == [
        "(7001) 알파상사 | 2건 | 35 | 350,000원",
        "… 외 2개 벤더",
        "합계 (3개 벤더) | 4건 | 73 | 730,000원",
    ]


def test_vendor_ranking_by_amount_and_by_count(run):
    """Rank with each vendor's share of the measure; ties on count are broken by amount."""
    by_amount = run("company_vendor_ranking").splitlines()
    assert by_amount[2:6] == [
        "1위 | (7001) 알파상사 | 350,000원 | 2건 | 47.9%",
        "2위 | (7002) 베타유통 | 300,000원 | 1건 | 41.1%",
        "3위 | (7003) 감마식품 (비활성) | 80,000원 | 1건 | 11.0%",
        "합계 | 3개 벤더 | 730,000원 | 4건",
    ]
    by_count = run("company_vendor_ranking", by="count").splitlines()
    assert by_count[0].startswith("[벤더 순위 · 주문 수 기준]")
    assert by_count[2:5] == [
        "1위 | (7001) 알파상사 | 350,000원 | 2건 | 50.0%",
        "2위 | (7002) 베타유통 | 300,000원 | 1건 | 25.0%",
        "3위 | (7003) 감마식품 (비활성) | 80,000원 | 1건 | 25.0%",
    ]


def test_inventory_overview_by_vendor_and_by_category(run):
    """Product count, stock, stock value at unit price and products at or below safety stock, with totals."""
    by_vendor = run("company_inventory_overview").splitlines()
    assert by_vendor[1:6] == [
        "벤더 | 상품 수 | 재고 수량 | 재고 금액(단가 기준) | 안전 재고 이하",
        "(7001) 알파상사 | 3개 | 55 | 540,000원 | 2개",
        "(7003) 감마식품 (비활성) | 1개 | 40 | 440,000원 | 0개",
        "(7002) 베타유통 | 2개 | 110 | 395,000원 | 1개",
        "합계 | 6개 | 205 | 1,375,000원 | 3개",
    ]
    by_category = run("company_inventory_overview", group_by="category").splitlines()
    assert by_category[2:5] == [
        "양념 | 4개 | 105 | 1,075,000원 | 2개",
        "음료 | 2개 | 100 | 300,000원 | 1개",
        "합계 | 6개 | 205 | 1,375,000원 | 3개",
    ]
    assert run("company_inventory_overview", category="음료").splitlines()[-1] == "합계 | 2개 | 100 | 300,000원 | 1개"


def test_price_comparison_lists_the_same_product_lowest_first(run):
    """Products matching every word, across vendors, cheapest first, with the gap to the lowest price."""
    lines = run("company_price_comparison", query="참깨 간장").splitlines()
    assert lines[0] == "[전사 단가 비교] '참깨 간장' · 모든 검색어 일치 · 낮은 단가 순"
    assert lines[2:7] == [
        "1 | (7002) 베타유통 | 참깨 | 참깨 간장 1L | B-SOY | 9,500원 | 최저가",
        "2 | (7001) 알파상사 | 참깨 | 참깨 간장 1L | A-SOY | 10,000원 | +500원 (+5.3%)",
        "3 | (7003) 감마식품 (비활성) | 참깨 | 참깨 간장 1L | C-SOY | 11,000원 | +1,500원 (+15.8%)",
        "3개 상품 | 3개 벤더",
        "최저 단가: 9,500원 · (7002) 베타유통 참깨 간장 1L",
    ]


def test_price_comparison_falls_back_to_similar_products(run):
    """When nothing matches every word, the best partial matches are compared, and the text says so."""
    lines = run("company_price_comparison", query="참깨 된장").splitlines()
    assert lines[0] == "[전사 단가 비교] '참깨 된장' · 검색어 2개 중 1개 일치(비슷한 상품) · 낮은 단가 순"
    assert [line.split(" | ")[4] for line in lines[2:6]] == ["A-GOCH", "B-SOY", "A-SOY", "C-SOY"]
    assert lines[3].endswith("| B-SOY | 9,500원 | +1,500원 (+18.8%)")
    assert run("company_price_comparison", query="없는물건") == "[전사 단가 비교] '없는물건'\n일치하는 상품이 없습니다."


def test_margin_report_excludes_and_counts_products_without_cost(run):
    """Margin = (sum of unit prices − sum of costs) / sum of unit prices; products below cost are counted."""
    by_vendor = run("company_margin_report").splitlines()
    assert by_vendor[1:5] == [
        "벤더 | 상품 수 | 단가 합 | 원가 합 | 마진 | 마진율 | 역마진",
        "(7001) 알파상사 | 2개 | 11,000원 | 7,600원 | 3,400원 | 30.9% | 0개",
        "(7002) 베타유통 | 2개 | 12,500원 | 10,300원 | 2,200원 | 17.6% | 1개",
        "합계 | 4개 | 23,500원 | 17,900원 | 5,600원 | 23.8% | 1개",
    ]
    assert by_vendor[5] == "(원가(cost_price)가 없는 상품 2개 제외)"
    by_category = run("company_margin_report", group_by="category").splitlines()
    assert by_category[2:4] == [
        "양념 | 2개 | 19,500원 | 14,000원 | 5,500원 | 28.2% | 0개",
        "음료 | 2개 | 4,000원 | 3,900원 | 100원 | 2.5% | 1개",
    ]


def test_margin_report_shows_a_negative_margin_with_its_sign(run, data):
    """A group sold below cost shows a minus margin, never a positive one."""
    Product.objects.filter(sku="B-SOY").update(cost_price=12_000)
    lines = run("company_margin_report").splitlines()
    assert "(7002) 베타유통 | 2개 | 12,500원 | 15,300원 | -2,800원 | -22.4% | 2개" in lines


def test_purchase_orders_lists_recent_orders_newest_first(run):
    """Every order of the period (cancelled ones too), newest first, with the total of readable amounts."""
    lines = run("company_purchase_orders").splitlines()
    assert lines[1] == "주문일 | 벤더 | 제목 | 상태 | 수량 | 금액"
    rows = [line.split(" | ") for line in lines[2:8]]
    assert [(row[0], row[1], row[3], row[5]) for row in rows] == [
        (days_ago(1).isoformat(), "(7001) 알파상사", "배송완료", "100,000원"),
        (days_ago(2).isoformat(), "(7002) 베타유통", "배송완료", "300,000원"),
        (days_ago(3).isoformat(), "(7002) 베타유통", "접수", "-"),
        (days_ago(5).isoformat(), "(7001) 알파상사", "접수", "250,000원"),
        (days_ago(10).isoformat(), "(7001) 알파상사", "취소", "50,000원"),
        (days_ago(20).isoformat(), "(7003) 감마식품 (비활성)", "배송완료", "80,000원"),
    ]
    assert lines[8] == "합계 | 6건 |  |  |  | 780,000원"
    assert lines[9] == "(금액(amount)을 읽을 수 없는 주문 1건은 합계에서 제외)"


def test_purchase_orders_filter_by_status(run):
    """The status filter ignores spacing and case; with no match, the statuses of the period are listed."""
    lines = run("company_purchase_orders", status=" 접 수 ").splitlines()
    assert lines[0].endswith("· 상태 '접 수' · 최근 순")
    assert len(lines[2:-2]) == 2
    assert lines[-2] == "합계 | 2건 |  |  |  | 250,000원"
    nothing = run("company_purchase_orders", status="반품").splitlines()
    assert nothing[-1] == "(기간 내 주문 상태: 배송완료 3건, 접수 2건, 취소 1건)"
    assert nothing[-2] == "합계 | 0건 |  |  |  | 0원"


def test_promotions_active_on_a_date(run):
    """Promotions whose period contains the date, ending soonest first; ones without any period are counted."""
    lines = run("company_promotions").splitlines()
    assert lines[0] == f"[진행 중인 프로모션] {days_ago(0)} 기준 · 종료 임박 순"
    assert lines[2:6] == [
        f"(7001) 알파상사 | 알파 봄 할인 | {days_ago(5)} ~ {days_ago(-5)} | 10% 할인",
        f"(7002) 베타유통 | 베타 상시 할인 | {days_ago(10)} ~ 종료일 없음 | 1,000원 할인",
        "합계 2건 | 2개 벤더",
        "(기간이 없는 프로모션 1건은 제외)",
    ]
    tomorrow = run("company_promotions", date=days_ago(-1).isoformat()).splitlines()
    assert "합계 3건 | 3개 벤더" in tomorrow
    assert any(line.startswith("(7003) 감마식품 (비활성) | 감마 예정 행사") for line in tomorrow)


def test_settlement_overview_due_paid_outstanding_and_overdue(run):
    """Per vendor: due, paid (missing = nothing paid), outstanding and the outstanding part past its due date."""
    lines = run("company_settlement_overview").splitlines()
    assert lines[1:6] == [
        "벤더 | 건수 | 지급 예정액 | 지급 완료 | 미지급 | 연체(지급일 경과)",
        "(7002) 베타유통 | 1건 | 800,000원 | 0원 | 800,000원 | 0원",
        "(7001) 알파상사 | 2건 | 1,500,000원 | 1,200,000원 | 300,000원 | 300,000원",
        "(7003) 감마식품 (비활성) | 2건 | 470,000원 | 470,000원 | 0원 | 0원",
        "합계 | 5건 | 2,770,000원 | 1,670,000원 | 1,100,000원 | 300,000원",
    ]
    assert lines[6] == "(금액(amount_due/amount_paid)을 읽을 수 없는 정산 1건 제외)"


def test_settlement_overview_filters(run):
    """`unpaid_only` keeps vendors with something outstanding; `month` keeps settlements due in that month."""
    unpaid = run("company_settlement_overview", unpaid_only=True).splitlines()
    assert [line.split(" | ")[0] for line in unpaid[2:5]] == ["(7002) 베타유통", "(7001) 알파상사", "합계"]
    assert unpaid[4] == "합계 | 3건 | 2,300,000원 | 1,200,000원 | 1,100,000원 | 300,000원"
    month = run("company_settlement_overview", month="2030-01").splitlines()
    assert month[2:4] == [
        "(7003) 감마식품 (비활성) | 1건 | 70,000원 | 70,000원 | 0원 | 0원",
        "합계 | 1건 | 70,000원 | 70,000원 | 0원 | 0원",
    ]


def test_stock_alerts_lists_products_at_or_below_safety_stock(run):
    """Largest shortfall first; a product with no stock is marked sold out even when its safety stock is 0."""
    lines = run("company_stock_alerts").splitlines()
    assert lines[1:6] == [
        "벤더 | 상품 | SKU | 재고 | 안전 재고 | 부족",
        "(7002) 베타유통 | 참깨 간장 1L | B-SOY | 10 | 30 | 20",
        "(7001) 알파상사 | 참깨 고추장 1kg | A-GOCH | 5 | 10 | 5",
        "(7001) 알파상사 | 생수 2L | A-WATER | 0 (품절) | 0 | 0",
        "경보 3개 상품 | 품절 1개",
    ]
    assert run("company_stock_alerts", category="음료").splitlines()[2:4] == [
        "(7001) 알파상사 | 생수 2L | A-WATER | 0 (품절) | 0 | 0",
        "경보 1개 상품 | 품절 1개",
    ]


def test_category_trends_compare_two_consecutive_periods(run):
    """Order amounts by category (the order's own category, else its product's, else 미분류), this period against
    the one before, with the change in percent."""
    lines = run("company_category_trends").splitlines()
    assert lines[0] == (
        f"[카테고리별 주문 추이] 이번 기간 {days_ago(29)} ~ {days_ago(0)} (30일) vs "
        f"직전 기간 {days_ago(59)} ~ {days_ago(30)} (30일)"
    )
    assert lines[1:6] == [
        "카테고리 | 이번 기간 | 직전 기간 | 증감",
        "양념 | 350,000원 | 200,000원 | +75.0%",
        "음료 | 300,000원 | 100,000원 | +200.0%",
        "미분류 | 80,000원 | 0원 | 신규",
        "합계 | 730,000원 | 300,000원 | +143.3%",
    ]


def test_vendor_directory(run):
    """Code, name, aliases, active flag, answer mode and room count; filters by name, alias and status."""
    lines = run("company_vendor_directory").splitlines()
    assert lines[1:6] == [
        "코드 | 벤더명 | 별칭 | 활성 | 답변 모드 | 대화방 수",
        "7001 | 알파상사 | 알파 | 예 | 자동 발송 | 2개",
        "7002 | 베타유통 | BT유통 | 예 | 검토 후 발송 | 1개",
        "7003 | 감마식품 | - | 아니오 | 자동 발송 | 0개",
        "합계 3개 벤더 | 활성 2개 | 비활성 1개",
    ]
    assert (
        run("company_vendor_directory", query="bt").splitlines()[2]
        == "7002 | 베타유통 | BT유통 | 예 | 검토 후 발송 | 1개"
    )
    assert run("company_vendor_directory", status="inactive").splitlines()[2:4] == [
        "7003 | 감마식품 | - | 아니오 | 자동 발송 | 0개",
        "합계 1개 벤더 | 활성 0개 | 비활성 1개",
    ]


def test_every_result_is_evidence_and_bounded(data):
    """Each tool returns its text as one evidence item (so quoted figures verify), at most 3,500 characters."""
    context = ToolContext(question_id=None, vendor=data["alpha"], room=data["internal"], room_kind=Room.Kind.INTERNAL)
    for index in range(300):
        VendorFactory(code=str(8000 + index), name=f"긴이름을가진테스트벤더{index:03d}" * 2)
    for name in COMPANY_TOOL_NAMES:
        arguments = {"query": "참깨"} if name == "company_price_comparison" else {}
        if name == "company_vendor_directory":
            arguments["limit"] = 100
        execution = tool_execute(context, name, arguments)
        assert execution.allowed and not execution.error, (name, execution.error)
        result = execution.result
        assert len(result.text) <= 3500, name
        assert [item.text for item in result.evidence] == [result.text]
        assert result.evidence[0].source_kind == "company"
        assert result.evidence[0].reference.startswith(f"company:{name}:")
        assert result.confirmed_action is None
    directory = tool_execute(context, "company_vendor_directory", {"limit": 100}).result.text
    assert "… 외 " in directory and directory.splitlines()[-1] == "합계 303개 벤더 | 활성 302개 | 비활성 1개"


def test_the_demo_company_file_loads_and_feeds_the_tools():
    """`demo/data/company.jsonl` imports after the demo vendors (again: nothing changes) and carries
    the keys the tools read: categories, costs, stock, dated orders with amounts, settlements, promotions."""
    vendors_import_csv(DEMO_DATA / "vendors.csv")
    first = records_import_file(DEMO_DATA / "company.jsonl", actor_kind="system", actor_id="test")
    again = records_import_file(DEMO_DATA / "company.jsonl", actor_kind="system", actor_id="test")
    assert first.counts["products_created"] == 17 and first.counts["records_created"] == 36
    assert (again.counts["products_unchanged"], again.counts["records_unchanged"]) == (17, 36)
    internal = RoomFactory(vendor=Vendor.objects.get(code="1001"), kind=Room.Kind.INTERNAL)
    context = ToolContext(question_id=None, vendor=internal.vendor, room=internal, room_kind=Room.Kind.INTERNAL)

    def text(name, **arguments):
        return tool_execute(context, name, arguments).result.text

    prices = text("company_price_comparison", query="참맛골 간장").splitlines()
    assert prices[2].startswith("1 | (1001) 대한물산 | 참맛골 | 참맛골 간장 1.8L | CP-CMG-SOY18 | 8,900원 | 최저가")
    assert prices[5] == "3개 상품 | 3개 벤더"
    november = text("company_sales_summary", days=30, end_date="2026-11-30").splitlines()
    assert november[-2:] == ["합계 (8개 벤더) | 14건 | 2,410 | 18,646,000원", "(취소 주문 1건 제외)"]
    assert "참맛골 고추장 1kg | CP-CMG-GOCH1K | 0 (품절)" in text("company_stock_alerts")
    assert "(원가(cost_price)가 없는 상품 2개 제외)" in text("company_margin_report")
    assert "양념·소스" in text("company_category_trends", end_date="2026-11-30")
    assert "미지급" in text("company_settlement_overview", month="2026-12")
    assert "참맛골 간장 겨울 할인" in text("company_promotions", date="2026-12-01")


def test_amounts_may_be_json_numbers_or_text():
    """`12500`, `12500.0`, `"12,500"` and `"12,500원"` are read alike; fractions, negatives, booleans and other
    currencies are not amounts and are counted as unreadable."""
    vendor = VendorFactory(code="7101", name="델타상사")
    room = RoomFactory(vendor=vendor, kind=Room.Kind.INTERNAL)
    for amount in [1_000, 2_000.0, "3,000", "4,000원", " 5000 ", 1.5, -5, True, "6,000달러", None]:
        VendorRecordFactory(
            vendor=vendor, kind=VendorRecord.Kind.ORDER, values={"amount": amount, "ordered_at": "2031-01-31"}
        )
    context = ToolContext(question_id=None, vendor=vendor, room=room, room_kind=Room.Kind.INTERNAL)

    lines = tool_execute(
        context, "company_sales_summary", {"days": 1, "end_date": "2031-01-31"}
    ).result.text.splitlines()

    assert lines[2:5] == [
        "(7101) 델타상사 | 5건 | 0 | 15,000원",
        "합계 (1개 벤더) | 5건 | 0 | 15,000원",
        "(금액(amount)을 읽을 수 없는 주문 5건 제외)",
    ]
