"""The 11 company-wide ("Spark") tools: figures across every vendor's data, for internal (staff-only) rooms.

Scope COMPANY, grade READ: the registry neither offers nor runs them in an external room. The text a tool returns
is made here, from the rows — a compact table with totals, amounts as `12,500원`, at most _MAX_TEXT_CHARS long —
and is also returned as one evidence item, so the figures an answer quotes are verified against it.

What each tool reads from `VendorRecord.values` (other keys are ignored):
- orders (`kind=order`): `ordered_at` (YYYY-MM-DD; an order without one belongs to no period and is counted
  apart), `amount` (order total in won), `quantity`, `status` (free text), and for the category trend `category`
  or, failing that, `sku` (one of the vendor's product SKUs, whose `Product.category` is used). Orders whose
  status is a cancellation (`취소`, `주문취소`, `cancelled`, `canceled`) are left out of sales, rankings and
  trends; `company_purchase_orders` lists them.
- promotions (`kind=promotion`): the record's `effective_from` / `effective_to` are its period (a promotion with
  neither is counted apart); `discount_rate` (%) and `discount_amount` (won) are shown when present.
- settlements (`kind=settlement`): `amount_due`, `amount_paid` (won; missing means nothing paid yet),
  `due_date` (YYYY-MM-DD), `period` (a label such as `2026-10`).
Products are read from their columns: `unit_price`, `cost_price`, `category`, `stock_quantity`, `safety_stock`.

Amounts and quantities may be JSON numbers or strings such as `12,500` / `12,500원`; a row whose amount cannot be
read is left out and counted in the result, never guessed.
"""

import datetime
import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from django.utils import timezone

from agent.knowledge.types import EvidenceItem
from agent.tools.arguments import int_argument, reject_unknown, text_argument
from agent.tools.registry import Grade, Scope, Tool, ToolArgumentsInvalid, ToolContext, ToolResult, register
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

_MAX_TEXT_CHARS = 3500
_CELL_CHARS = 40
_CANCELLED_STATUSES = frozenset({"취소", "주문취소", "cancelled", "canceled"})
_UNCATEGORISED = "미분류"
_WHOLE_NUMBER = re.compile(r"([0-9]+)(?:\.0*)?")
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ISO_MONTH = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])")
# Query words that name no product: every product's search text carries `상품 단가` (vendors.records), the rest
# only ask for a price. Left in, they would match every product or none.
_GENERIC_PRODUCT_WORDS = frozenset({"상품", "단가", "가격", "제품", "최저가", "비교"})


# ---------------------------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------------------------


def _date_argument(arguments: dict, name: str) -> datetime.date | None:
    value = text_argument(arguments, name, max_length=10, required=False)
    if not value:
        return None
    if _ISO_DAY.fullmatch(value):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:  # 2026-02-30
            pass
    raise ToolArgumentsInvalid(f"'{name}' must be a date like 2026-11-30")


def _choice_argument(arguments: dict, name: str, choices: tuple[str, ...]) -> str:
    value = arguments.get(name, choices[0])
    if value not in choices:
        raise ToolArgumentsInvalid(f"'{name}' must be one of {', '.join(choices)}")
    return value


def _bool_argument(arguments: dict, name: str) -> bool:
    value = arguments.get(name, False)
    if not isinstance(value, bool):
        raise ToolArgumentsInvalid(f"'{name}' must be true or false")
    return value


def _month_argument(arguments: dict, name: str) -> str:
    value = text_argument(arguments, name, max_length=7, required=False)
    if value and not _ISO_MONTH.fullmatch(value):
        raise ToolArgumentsInvalid(f"'{name}' must be a month like 2026-11")
    return value


def _limit(arguments: dict, *, default: int, maximum: int) -> int:
    return int_argument(arguments, "limit", default=default, minimum=1, maximum=maximum)


@dataclass(frozen=True)
class _Period:
    start: datetime.date
    end: datetime.date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def label(self) -> str:
        return f"{self.start.isoformat()} ~ {self.end.isoformat()} ({self.days}일)"

    def before(self) -> "_Period":
        """The period of the same length that ends the day before this one starts."""
        end = self.start - datetime.timedelta(days=1)
        return _Period(end - datetime.timedelta(days=self.days - 1), end)


def _period_argument(arguments: dict) -> _Period:
    days = int_argument(arguments, "days", default=30, minimum=1, maximum=365)
    end = _date_argument(arguments, "end_date") or timezone.localdate()
    return _Period(end - datetime.timedelta(days=days - 1), end)


_PERIOD_PROPERTIES = {
    "days": {"type": "integer", "minimum": 1, "maximum": 365, "description": "기간(일), 기본 30"},
    "end_date": {
        "type": "string",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        "description": "기간의 마지막 날 (YYYY-MM-DD), 기본 오늘",
    },
}


def _limit_property(default: int, maximum: int) -> dict:
    return {"type": "integer", "minimum": 1, "maximum": maximum, "description": f"표시할 최대 행 수, 기본 {default}"}


def _schema(properties: dict, required: Iterable[str] = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


# ---------------------------------------------------------------------------------------------------------------
# Reading values and writing text
# ---------------------------------------------------------------------------------------------------------------


def _amount(value) -> int | None:
    """A non-negative whole number from a JSON value or its text (12500, 12500.0, "12,500", "12,500원"), else None.

    PostgreSQL hands over a JSON number as text (`12500.0`), SQLite as a number; both read the same here."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and value >= 0 else None
    if isinstance(value, str):
        if value.isascii() and value.isdigit():  # the common case, checked first: it runs once per order
            return int(value)
        match = _WHOLE_NUMBER.fullmatch(value.replace(",", "").strip().removesuffix("원").strip())
        return int(match[1]) if match else None
    return None


def _iso_date(value) -> datetime.date | None:
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return datetime.date.fromisoformat(value[:10])
    except ValueError:
        return None


def _status_key(status) -> str:
    return "".join(str(status or "").split()).casefold()


def _won(amount: int) -> str:
    return f"{amount:,}원"


def _signed_won(amount: int) -> str:
    return _won(amount) if amount >= 0 else f"-{_won(-amount)}"


def _percent(part: int, whole: int) -> str:
    return f"{part * 100 / whole:.1f}%" if whole else "-"


def _change(current: int, previous: int) -> str:
    if previous == 0:
        return "신규" if current else "-"
    return f"{(current - previous) * 100 / previous:+.1f}%"


def _cell(value) -> str:
    text = " ".join(str(value).split()).replace("|", "/")
    return text if len(text) <= _CELL_CHARS else text[: _CELL_CHARS - 1] + "…"


def _vendor_label(code: str, name: str, is_active: bool) -> str:
    return f"({code}) {name}" + ("" if is_active else " (비활성)")


def _vendor_labels(vendor_ids: Iterable[int]) -> dict[int, str]:
    return {pk: _vendor_label(*identity) for pk, identity in vendor_codes_and_names(vendor_ids).items()}


def _table(
    title: str,
    header: list[str],
    rows: list[list],
    *,
    total: list | None = None,
    notes: Iterable[str] = (),
    hidden: int = 0,
    unit: str = "행",
) -> str:
    """Title, a `|` table, the total row and notes. `hidden` rows were cut by the limit; rows that do not fit in
    _MAX_TEXT_CHARS are cut too, and both are reported as one `… 외 N행` line."""
    notes = [note for note in notes if note]

    def render(shown: int) -> str:
        lines = [title, " | ".join(header), *(" | ".join(_cell(c) for c in row) for row in rows[:shown])]
        if hidden + len(rows) - shown:
            lines.append(f"… 외 {hidden + len(rows) - shown:,}{unit}")
        if total:
            lines.append(" | ".join(_cell(c) for c in total))
        return "\n".join([*lines, *notes])

    shown = len(rows)
    text = render(shown)
    while len(text) > _MAX_TEXT_CHARS and shown:
        shown -= 1
        text = render(shown)
    return text[:_MAX_TEXT_CHARS]


def _result(tool_name: str, arguments: dict, title: str, text: str) -> ToolResult:
    digest = hashlib.sha256(json.dumps(arguments, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]
    item = EvidenceItem(
        source_kind="company",
        reference=f"company:{tool_name}:{digest}",
        text=text,
        score=1.0,
        title=title,
        extra={"tool": tool_name, "arguments": arguments},
    )
    return ToolResult(text=text, evidence=[item])


# ---------------------------------------------------------------------------------------------------------------
# Orders
# ---------------------------------------------------------------------------------------------------------------


class _Order(NamedTuple):
    record_id: int
    vendor_id: int
    ordered_at: datetime.date
    amount: int | None
    quantity: int | None
    status: str
    cancelled: bool
    category: str
    sku: str


@dataclass
class _Orders:
    dated: list[_Order]  # orders dated inside the period
    undated: int  # orders of any time without an `ordered_at`: they belong to no period

    @property
    def undated_note(self) -> str:
        if not self.undated:
            return ""
        return f"(주문일(ordered_at)이 없는 주문 {self.undated:,}건은 기간 집계에 넣지 않았습니다.)"


_ORDER_KEYS = ("amount", "quantity", "status", "category", "sku")  # read beside `ordered_at`


def _orders(period: _Period) -> _Orders:
    """Order records dated inside the period, and the number without a date (read in the same scan).

    The date is parsed again here, after the SQL filter on its text, so a malformed one is never counted."""
    rows = order_record_values(ordered_from=period.start, ordered_to=period.end, keys=_ORDER_KEYS)
    dated, undated = [], 0
    for pk, vendor_id, ordered_at, amount, quantity, status, category, sku in rows:
        if ordered_at in (None, ""):
            undated += 1
            continue
        ordered_at = _iso_date(ordered_at)
        if ordered_at is None or not period.start <= ordered_at <= period.end:
            continue
        status = str(status or "").strip()
        dated.append(
            _Order(
                pk,
                vendor_id,
                ordered_at,
                _amount(amount),
                _amount(quantity),
                status,
                _status_key(status) in _CANCELLED_STATUSES,
                str(category or "").strip(),
                str(sku or "").strip(),
            )
        )
    return _Orders(dated, undated)


def _order_titles(orders: list[_Order]) -> dict[int, str]:
    return vendor_record_titles(order.record_id for order in orders)


@dataclass
class _OrderTotals:
    count: int = 0
    amount: int = 0
    quantity: int = 0

    def add(self, order: _Order) -> None:
        self.count += 1
        self.amount += order.amount or 0
        self.quantity += order.quantity or 0


def _counted_orders(orders: _Orders) -> tuple[list[_Order], list[str]]:
    """The orders that count as sales (not cancelled, amount readable), and notes on the ones left out."""
    counted, cancelled, unreadable = [], 0, 0
    for order in orders.dated:
        if order.cancelled:
            cancelled += 1
        elif order.amount is None:
            unreadable += 1
        else:
            counted.append(order)
    notes = []
    if cancelled:
        notes.append(f"(취소 주문 {cancelled:,}건 제외)")
    if unreadable:
        notes.append(f"(금액(amount)을 읽을 수 없는 주문 {unreadable:,}건 제외)")
    return counted, [*notes, orders.undated_note]


def _totals_by_vendor(orders: list[_Order]) -> dict[int, _OrderTotals]:
    totals: dict[int, _OrderTotals] = defaultdict(_OrderTotals)
    for order in orders:
        totals[order.vendor_id].add(order)
    return totals


def _company_sales_summary(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"days", "end_date", "limit"})
    period = _period_argument(arguments)
    limit = _limit(arguments, default=20, maximum=50)
    counted, notes = _counted_orders(_orders(period))
    totals = _totals_by_vendor(counted)
    ranked = sorted(totals.items(), key=lambda item: (-item[1].amount, -item[1].count, item[0]))
    labels = _vendor_labels(vendor_id for vendor_id, _ in ranked[:limit])
    overall = _OrderTotals(len(counted), sum(o.amount for o in counted), sum(o.quantity or 0 for o in counted))
    title = f"[전사 매출 요약] {period.label} · 주문 기록 기준"
    text = _table(
        title,
        ["벤더", "주문 수", "수량", "금액"],
        [[labels[vid], f"{t.count:,}건", f"{t.quantity:,}", _won(t.amount)] for vid, t in ranked[:limit]],
        total=[f"합계 ({len(totals):,}개 벤더)", f"{overall.count:,}건", f"{overall.quantity:,}", _won(overall.amount)],
        notes=notes,
        hidden=max(len(ranked) - limit, 0),
        unit="개 벤더",
    )
    return _result("company_sales_summary", arguments, title, text)


def _company_vendor_ranking(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"by", "days", "end_date", "limit"})
    by = _choice_argument(arguments, "by", ("amount", "count"))
    period = _period_argument(arguments)
    limit = _limit(arguments, default=10, maximum=50)
    counted, notes = _counted_orders(_orders(period))
    totals = _totals_by_vendor(counted)
    if by == "amount":
        ranked = sorted(totals.items(), key=lambda item: (-item[1].amount, -item[1].count, item[0]))
        whole = sum(t.amount for t in totals.values())
    else:
        ranked = sorted(totals.items(), key=lambda item: (-item[1].count, -item[1].amount, item[0]))
        whole = sum(t.count for t in totals.values())
    labels = _vendor_labels(vendor_id for vendor_id, _ in ranked[:limit])
    measure = "주문 금액" if by == "amount" else "주문 수"
    title = f"[벤더 순위 · {measure} 기준] {period.label}"
    rows = [
        [
            f"{rank}위",
            labels[vid],
            _won(t.amount),
            f"{t.count:,}건",
            _percent(t.amount if by == "amount" else t.count, whole),
        ]
        for rank, (vid, t) in enumerate(ranked[:limit], start=1)
    ]
    text = _table(
        title,
        ["순위", "벤더", "주문 금액", "주문 수", "비중"],
        rows,
        total=["합계", f"{len(totals):,}개 벤더", _won(sum(t.amount for t in totals.values())), f"{len(counted):,}건"],
        notes=notes,
        hidden=max(len(ranked) - limit, 0),
        unit="개 벤더",
    )
    return _result("company_vendor_ranking", arguments, title, text)


def _company_purchase_orders(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"days", "end_date", "status", "limit"})
    period = _period_argument(arguments)
    status = text_argument(arguments, "status", max_length=40, required=False)
    limit = _limit(arguments, default=20, maximum=50)
    orders = _orders(period).dated
    statuses = Counter(order.status or "(없음)" for order in orders)
    if status:
        orders = [order for order in orders if _status_key(order.status) == _status_key(status)]
    orders.sort(key=lambda order: (order.ordered_at, order.record_id), reverse=True)
    labels = _vendor_labels(order.vendor_id for order in orders[:limit])
    titles = _order_titles(orders[:limit])
    filtered = f" · 상태 '{status}'" if status else ""
    title = f"[전사 발주·주문 목록] {period.label}{filtered} · 최근 순"
    readable = [order for order in orders if order.amount is not None]
    notes = []
    if status and not orders and statuses:
        notes.append("(기간 내 주문 상태: " + ", ".join(f"{s} {n:,}건" for s, n in statuses.most_common(10)) + ")")
    if len(readable) < len(orders):
        notes.append(f"(금액(amount)을 읽을 수 없는 주문 {len(orders) - len(readable):,}건은 합계에서 제외)")
    text = _table(
        title,
        ["주문일", "벤더", "제목", "상태", "수량", "금액"],
        [
            [
                order.ordered_at.isoformat(),
                labels[order.vendor_id],
                titles[order.record_id],
                order.status or "-",
                "-" if order.quantity is None else f"{order.quantity:,}",
                "-" if order.amount is None else _won(order.amount),
            ]
            for order in orders[:limit]
        ],
        total=["합계", f"{len(orders):,}건", "", "", "", _won(sum(order.amount for order in readable))],
        notes=notes,
        hidden=max(len(orders) - limit, 0),
        unit="건",
    )
    return _result("company_purchase_orders", arguments, title, text)


def _order_categories(orders: list[_Order]) -> dict[int, str]:
    """Each order's category: its own `category`, else its product's (by the vendor's SKU), else 미분류."""
    wanted = {(order.vendor_id, order.sku) for order in orders if not order.category and order.sku}
    categories = {}
    if wanted:
        categories = product_categories(
            vendor_ids={vendor_id for vendor_id, _ in wanted}, skus={sku for _, sku in wanted}
        )
    return {
        order.record_id: order.category or categories.get((order.vendor_id, order.sku)) or _UNCATEGORISED
        for order in orders
    }


def _company_category_trends(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"days", "end_date", "limit"})
    current = _period_argument(arguments)
    previous = current.before()
    limit = _limit(arguments, default=20, maximum=50)
    counted, notes = _counted_orders(_orders(_Period(previous.start, current.end)))
    categories = _order_categories(counted)
    amounts: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # category -> [current, previous]
    for order in counted:
        amounts[categories[order.record_id]][0 if order.ordered_at >= current.start else 1] += order.amount
    ranked = sorted(amounts.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    title = f"[카테고리별 주문 추이] 이번 기간 {current.label} vs 직전 기간 {previous.label}"
    now_total, before_total = sum(a[0] for a in amounts.values()), sum(a[1] for a in amounts.values())
    text = _table(
        title,
        ["카테고리", "이번 기간", "직전 기간", "증감"],
        [[name, _won(cur), _won(prev), _change(cur, prev)] for name, (cur, prev) in ranked[:limit]],
        total=["합계", _won(now_total), _won(before_total), _change(now_total, before_total)],
        notes=notes,
        hidden=max(len(ranked) - limit, 0),
        unit="개 카테고리",
    )
    return _result("company_category_trends", arguments, title, text)


# ---------------------------------------------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------------------------------------------

_GROUP_BY = ("vendor", "category")
_GROUP_HEADERS = {"vendor": "벤더", "category": "카테고리"}
_GROUP_TITLES = {"vendor": "벤더별", "category": "카테고리별"}


def _group_label(group_by: str, key, vendor_labels: dict[int, str]) -> str:
    if group_by == "vendor":
        return vendor_labels.get(key, str(key))
    return key or _UNCATEGORISED


def _company_inventory_overview(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"group_by", "category", "limit"})
    group_by = _choice_argument(arguments, "group_by", _GROUP_BY)
    category = text_argument(arguments, "category", max_length=100, required=False)
    limit = _limit(arguments, default=20, maximum=50)
    key = "vendor_id" if group_by == "vendor" else "category"
    groups = product_stock_by_group(group_by=key, category=category)
    labels = _vendor_labels(g[key] for g in groups[:limit]) if group_by == "vendor" else {}
    scope = f" · 카테고리 '{category}'" if category else ""
    title = f"[전사 재고 현황 · {_GROUP_TITLES[group_by]}]{scope}"
    text = _table(
        title,
        [_GROUP_HEADERS[group_by], "상품 수", "재고 수량", "재고 금액(단가 기준)", "안전 재고 이하"],
        [
            [
                _group_label(group_by, g[key], labels),
                f"{g['products']:,}개",
                f"{g['stock']:,}",
                _won(g["stock_value"]),
                f"{g['low']:,}개",
            ]
            for g in groups[:limit]
        ],
        total=[
            "합계",
            f"{sum(g['products'] for g in groups):,}개",
            f"{sum(g['stock'] for g in groups):,}",
            _won(sum(g["stock_value"] for g in groups)),
            f"{sum(g['low'] for g in groups):,}개",
        ],
        hidden=max(len(groups) - limit, 0),
        unit="개 그룹",
    )
    return _result("company_inventory_overview", arguments, title, text)


def _company_stock_alerts(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"category", "limit"})
    category = text_argument(arguments, "category", max_length=100, required=False)
    limit = _limit(arguments, default=20, maximum=50)
    alerts = product_stock_alerts(category=category, limit=limit)
    scope = f" · 카테고리 '{category}'" if category else ""
    title = f"[재고 경보 · 재고 ≤ 안전 재고]{scope}"
    text = _table(
        title,
        ["벤더", "상품", "SKU", "재고", "안전 재고", "부족"],
        [
            [
                _vendor_label(p.vendor.code, p.vendor.name, p.vendor.is_active),
                p.name,
                p.sku,
                f"{p.stock_quantity:,}" + (" (품절)" if p.stock_quantity == 0 else ""),
                f"{p.safety_stock:,}",
                f"{p.shortfall:,}",
            ]
            for p in alerts.products
        ],
        total=[f"경보 {alerts.total:,}개 상품", f"품절 {alerts.sold_out:,}개"],
        hidden=max(alerts.total - limit, 0),
        unit="개 상품",
    )
    return _result("company_stock_alerts", arguments, title, text)


def _company_margin_report(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"group_by", "limit"})
    group_by = _choice_argument(arguments, "group_by", _GROUP_BY)
    limit = _limit(arguments, default=20, maximum=50)
    key = "vendor_id" if group_by == "vendor" else "category"
    margins = product_margins_by_group(group_by=key)
    groups = margins.groups
    for group in groups:
        group["margin"] = group["price"] - group["cost"]
    groups.sort(key=lambda g: (-g["margin"], str(g[key])))
    labels = _vendor_labels(g[key] for g in groups[:limit]) if group_by == "vendor" else {}
    price, cost = sum(g["price"] for g in groups), sum(g["cost"] for g in groups)
    title = f"[마진 보고서 · {_GROUP_TITLES[group_by]}] 마진율 = (단가 합 − 원가 합) / 단가 합"
    notes = []
    if margins.no_cost:
        notes.append(f"(원가(cost_price)가 없는 상품 {margins.no_cost:,}개 제외)")
    if margins.zero_price:
        notes.append(f"(단가 0원 상품 {margins.zero_price:,}개 제외)")
    text = _table(
        title,
        [_GROUP_HEADERS[group_by], "상품 수", "단가 합", "원가 합", "마진", "마진율", "역마진"],
        [
            [
                _group_label(group_by, g[key], labels),
                f"{g['products']:,}개",
                _won(g["price"]),
                _won(g["cost"]),
                _signed_won(g["margin"]),
                _percent(g["margin"], g["price"]),
                f"{g['below_cost']:,}개",
            ]
            for g in groups[:limit]
        ],
        total=[
            "합계",
            f"{sum(g['products'] for g in groups):,}개",
            _won(price),
            _won(cost),
            _signed_won(price - cost),
            _percent(price - cost, price),
            f"{sum(g['below_cost'] for g in groups):,}개",
        ],
        notes=notes,
        hidden=max(len(groups) - limit, 0),
        unit="개 그룹",
    )
    return _result("company_margin_report", arguments, title, text)


def _above_lowest(price: int, lowest: int) -> str:
    return "최저가" if price == lowest else f"+{_won(price - lowest)} ({_change(price, lowest)})"


def _company_price_comparison(context: ToolContext, arguments: dict) -> ToolResult:
    from agent.knowledge.records import query_tokens

    reject_unknown(arguments, {"query", "limit"})
    query = text_argument(arguments, "query", max_length=100)
    limit = _limit(arguments, default=10, maximum=20)
    tokens = [token for token in query_tokens(query) if token not in _GENERIC_PRODUCT_WORDS]
    if not tokens:
        raise ToolArgumentsInvalid("'query' must name a product, brand, SKU or category")
    matches = products_matching_most_tokens(tokens, limit=limit)
    if matches is None:
        title = f"[전사 단가 비교] '{query}'"
        return _result("company_price_comparison", arguments, title, f"{title}\n일치하는 상품이 없습니다.")
    rows = matches.products
    lowest = rows[0].unit_price
    hits = matches.hits
    match_kind = "모든 검색어 일치" if hits == len(tokens) else f"검색어 {len(tokens)}개 중 {hits}개 일치(비슷한 상품)"
    title = f"[전사 단가 비교] '{query}' · {match_kind} · 낮은 단가 순"
    text = _table(
        title,
        ["순위", "벤더", "브랜드", "상품", "SKU", "단가", "최저가 대비"],
        [
            [
                f"{rank}",
                _vendor_label(p.vendor.code, p.vendor.name, p.vendor.is_active),
                p.brand.name if p.brand else "-",
                p.name,
                p.sku,
                _won(p.unit_price),
                _above_lowest(p.unit_price, lowest),
            ]
            for rank, p in enumerate(rows, start=1)
        ],
        total=[f"{matches.total:,}개 상품", f"{matches.vendor_count:,}개 벤더"],
        notes=[f"최저 단가: {_won(lowest)} · ({rows[0].vendor.code}) {rows[0].vendor.name} {rows[0].name}"],
        hidden=max(matches.total - limit, 0),
        unit="개 상품",
    )
    return _result("company_price_comparison", arguments, title, text)


# ---------------------------------------------------------------------------------------------------------------
# Promotions, settlements, vendors
# ---------------------------------------------------------------------------------------------------------------


def _discount_text(values: dict) -> str:
    parts = []
    rate = values.get("discount_rate")
    if isinstance(rate, int | float) and not isinstance(rate, bool):
        parts.append(f"{rate:g}% 할인")
    amount = _amount(values.get("discount_amount"))
    if amount:
        parts.append(f"{_won(amount)} 할인")
    return ", ".join(parts) or "-"


def _company_promotions(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"date", "limit"})
    day = _date_argument(arguments, "date") or timezone.localdate()
    limit = _limit(arguments, default=20, maximum=50)
    promotions = promotions_running_on(day, limit=limit)
    title = f"[진행 중인 프로모션] {day.isoformat()} 기준 · 종료 임박 순"
    text = _table(
        title,
        ["벤더", "프로모션", "기간", "할인"],
        [
            [
                _vendor_label(r.vendor.code, r.vendor.name, r.vendor.is_active),
                r.title,
                f"{r.effective_from or '시작일 없음'} ~ {r.effective_to or '종료일 없음'}",
                _discount_text(r.values if isinstance(r.values, dict) else {}),
            ]
            for r in promotions.records
        ],
        total=[f"합계 {promotions.total:,}건", f"{promotions.vendor_count:,}개 벤더"],
        notes=[f"(기간이 없는 프로모션 {promotions.undated:,}건은 제외)" if promotions.undated else ""],
        hidden=max(promotions.total - limit, 0),
        unit="건",
    )
    return _result("company_promotions", arguments, title, text)


@dataclass
class _SettlementTotals:
    count: int = 0
    due: int = 0
    paid: int = 0
    outstanding: int = 0
    overdue: int = 0


def _company_settlement_overview(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"month", "unpaid_only", "limit"})
    month = _month_argument(arguments, "month")
    unpaid_only = _bool_argument(arguments, "unpaid_only")
    limit = _limit(arguments, default=20, maximum=50)
    today = timezone.localdate()
    totals: dict[int, _SettlementTotals] = defaultdict(_SettlementTotals)
    unreadable = 0
    for vendor_id, amount_due, amount_paid, due_on in settlement_record_values(due_month=month):
        due = _amount(amount_due)
        paid = 0 if amount_paid in (None, "") else _amount(amount_paid)  # nothing paid yet
        if due is None or paid is None:
            unreadable += 1
            continue
        outstanding = max(due - paid, 0)
        due_date = _iso_date(due_on)
        row = totals[vendor_id]
        row.count += 1
        row.due += due
        row.paid += paid
        row.outstanding += outstanding
        if due_date and due_date < today:
            row.overdue += outstanding
    if unpaid_only:
        totals = {vendor_id: t for vendor_id, t in totals.items() if t.outstanding}
    ranked = sorted(totals.items(), key=lambda item: (-item[1].outstanding, -item[1].due, item[0]))
    labels = _vendor_labels(vendor_id for vendor_id, _ in ranked[:limit])
    scope = f" · 지급일 {month}" if month else ""
    title = f"[정산 현황]{scope}{' · 미지급 있는 벤더만' if unpaid_only else ''} · {today.isoformat()} 기준"
    overall = _SettlementTotals(
        *(sum(getattr(t, name) for t in totals.values()) for name in ("count", "due", "paid", "outstanding", "overdue"))
    )
    text = _table(
        title,
        ["벤더", "건수", "지급 예정액", "지급 완료", "미지급", "연체(지급일 경과)"],
        [
            [labels[vid], f"{t.count:,}건", _won(t.due), _won(t.paid), _won(t.outstanding), _won(t.overdue)]
            for vid, t in ranked[:limit]
        ],
        total=[
            "합계",
            f"{overall.count:,}건",
            _won(overall.due),
            _won(overall.paid),
            _won(overall.outstanding),
            _won(overall.overdue),
        ],
        notes=[f"(금액(amount_due/amount_paid)을 읽을 수 없는 정산 {unreadable:,}건 제외)" if unreadable else ""],
        hidden=max(len(ranked) - limit, 0),
        unit="개 벤더",
    )
    return _result("company_settlement_overview", arguments, title, text)


_VENDOR_STATUS_LABELS = {"all": "전체", "active": "활성 벤더만", "inactive": "비활성 벤더만"}


def _company_vendor_directory(context: ToolContext, arguments: dict) -> ToolResult:
    reject_unknown(arguments, {"query", "status", "limit"})
    query = text_argument(arguments, "query", max_length=100, required=False)
    status = _choice_argument(arguments, "status", ("all", "active", "inactive"))
    limit = _limit(arguments, default=30, maximum=100)
    directory = vendor_directory(query=query, is_active=None if status == "all" else status == "active", limit=limit)
    total = directory.total
    scope = f" · 검색어 '{query}'" if query else ""
    title = f"[벤더 목록]{scope} · {_VENDOR_STATUS_LABELS[status]}"
    text = _table(
        title,
        ["코드", "벤더명", "별칭", "활성", "답변 모드", "대화방 수"],
        [
            [
                v.code,
                v.name,
                ", ".join(v.aliases) or "-",
                "예" if v.is_active else "아니오",
                v.get_answer_mode_display(),
                f"{v.room_count:,}개",
            ]
            for v in directory.vendors
        ],
        total=[f"합계 {total:,}개 벤더", f"활성 {directory.active:,}개", f"비활성 {total - directory.active:,}개"],
        hidden=max(total - limit, 0),
        unit="개 벤더",
    )
    return _result("company_vendor_directory", arguments, title, text)


# ---------------------------------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------------------------------

_GROUP_BY_PROPERTY = {"type": "string", "enum": list(_GROUP_BY), "description": "vendor(벤더별), category(카테고리별)"}
_CATEGORY_PROPERTY = {"type": "string", "maxLength": 100, "description": "이 카테고리만 (정확한 이름)"}

_COMPANY_TOOLS = [
    (
        "company_sales_summary",
        "최근 N일(1–365) 동안 주문 기록의 금액을 벤더별로 합산한 전사 매출 요약입니다. 취소 주문은 제외합니다.",
        _schema({**_PERIOD_PROPERTIES, "limit": _limit_property(20, 50)}),
        _company_sales_summary,
    ),
    (
        "company_inventory_overview",
        "전체 벤더 상품의 재고 수량과 재고 금액을 벤더별 또는 카테고리별로 보여 줍니다.",
        _schema({"group_by": _GROUP_BY_PROPERTY, "category": _CATEGORY_PROPERTY, "limit": _limit_property(20, 50)}),
        _company_inventory_overview,
    ),
    (
        "company_price_comparison",
        "상품명·브랜드·SKU·카테고리로 찾은 같은(또는 비슷한) 상품의 벤더별 단가를 낮은 순으로 비교합니다.",
        _schema(
            {
                "query": {"type": "string", "maxLength": 100, "description": "상품명, 브랜드, SKU 또는 카테고리"},
                "limit": _limit_property(10, 20),
            },
            required=["query"],
        ),
        _company_price_comparison,
    ),
    (
        "company_vendor_ranking",
        "최근 N일 동안의 주문 금액 또는 주문 수로 벤더 순위를 매깁니다.",
        _schema(
            {
                "by": {"type": "string", "enum": ["amount", "count"], "description": "amount(금액) 또는 count(건수)"},
                **_PERIOD_PROPERTIES,
                "limit": _limit_property(10, 50),
            }
        ),
        _company_vendor_ranking,
    ),
    (
        "company_margin_report",
        "상품 단가와 원가로 벤더별 또는 카테고리별 마진과 마진율을 계산합니다. 원가 없는 상품은 빼고 그 수를 알립니다.",
        _schema({"group_by": _GROUP_BY_PROPERTY, "limit": _limit_property(20, 50)}),
        _company_margin_report,
    ),
    (
        "company_purchase_orders",
        "전체 벤더의 최근 주문(발주) 기록을 최신순으로 보여 줍니다. 기간과 상태로 거를 수 있습니다.",
        _schema(
            {
                **_PERIOD_PROPERTIES,
                "status": {"type": "string", "maxLength": 40, "description": "이 상태의 주문만 (예: 접수, 배송완료)"},
                "limit": _limit_property(20, 50),
            }
        ),
        _company_purchase_orders,
    ),
    (
        "company_promotions",
        "지정한 날짜(기본 오늘)에 진행 중인 모든 벤더의 프로모션을 보여 줍니다.",
        _schema(
            {
                "date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "description": "YYYY-MM-DD"},
                "limit": _limit_property(20, 50),
            }
        ),
        _company_promotions,
    ),
    (
        "company_settlement_overview",
        "정산 기록의 지급 예정액, 지급 완료액, 미지급액과 연체액을 벤더별로 합산합니다.",
        _schema(
            {
                "month": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$", "description": "지급일의 월 (YYYY-MM)"},
                "unpaid_only": {"type": "boolean", "description": "미지급액이 있는 벤더만"},
                "limit": _limit_property(20, 50),
            }
        ),
        _company_settlement_overview,
    ),
    (
        "company_stock_alerts",
        "재고가 안전 재고 이하인 상품(품절 포함)을 부족 수량이 큰 순으로 보여 줍니다.",
        _schema({"category": _CATEGORY_PROPERTY, "limit": _limit_property(20, 50)}),
        _company_stock_alerts,
    ),
    (
        "company_category_trends",
        "상품 카테고리별 주문 금액을 최근 N일과 그 직전 N일로 나눠 비교하고 증감률을 보여 줍니다.",
        _schema({**_PERIOD_PROPERTIES, "limit": _limit_property(20, 50)}),
        _company_category_trends,
    ),
    (
        "company_vendor_directory",
        "벤더 코드, 이름, 별칭, 활성 여부, 답변 모드와 대화방 수를 보여 줍니다.",
        _schema(
            {
                "query": {"type": "string", "maxLength": 100, "description": "코드, 벤더명 또는 별칭의 일부"},
                "status": {"type": "string", "enum": ["all", "active", "inactive"]},
                "limit": _limit_property(30, 100),
            }
        ),
        _company_vendor_directory,
    ),
]

COMPANY_TOOL_NAMES = tuple(name for name, *_ in _COMPANY_TOOLS)

for _name, _description, _parameters, _handler in _COMPANY_TOOLS:
    register(
        Tool(
            name=_name,
            description=_description,
            parameters=_parameters,
            scope=Scope.COMPANY,
            grade=Grade.READ,
            handler=_handler,
        )
    )
