"""Per-counterpart records, the write side: the derived search text of a record or product, import from files,
and the demo load.

`search_text` is a derived column (NFKC, lower case: `search_normalize`) every writer here keeps in sync; the
search over it is the agent's (`agent.knowledge.records`: what a question asks for, and the rows as evidence)
over the SQL passes of `vendors.selectors.vendor_rows_match`, which filter by the vendor in the same SQL as the
match. A query is normalised by the same `search_normalize`, so a token is a substring of the text it names.
"""

import csv
import datetime
import hashlib
import io
import json
import unicodedata
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from config.db import analyze_after_bulk_write
from monitoring.services import audit_record
from vendors.models import Brand, Product, RecordImport, Vendor, VendorRecord

# ---------------------------------------------------------------------------------------------------------------
# Derived text: what is indexed
# ---------------------------------------------------------------------------------------------------------------


def search_normalize(text: str) -> str:
    """The one normalisation of stored search text and queries: NFKC, lower case, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def _value_text(value) -> str:
    if isinstance(value, bool):
        return "예" if value else "아니오"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list | tuple):
        return ", ".join(_value_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_value_text(v)}" for k, v in value.items())
    return str(value)


# How a record's evidence text joins its `label: value` facts on one line; the answerer reads the line apart by it.
VALUE_SEPARATOR = " · "


def values_text(values: dict) -> str:
    return VALUE_SEPARATOR.join(f"{key}: {_value_text(value)}" for key, value in values.items())


def record_search_refresh(record: VendorRecord) -> None:
    """Set the record's derived search text from its fields (the caller saves); a retired record has none, so
    the search never returns it."""
    if record.retired_at is not None:
        record.search_text = ""
        return
    parts = [record.get_kind_display(), record.title, record.body, values_text(record.values or {})]
    record.search_text = search_normalize(" ".join(p for p in parts if p))


def product_search_refresh(product: Product, brand: Brand | None) -> None:
    """Set the product's derived search text from its fields and its brand's names (the caller saves); a
    retired product has none, so the search never returns it."""
    if product.retired_at is not None:
        product.search_text = ""
        return
    brand_names = " ".join(brand.all_names) if brand else ""
    product.search_text = search_normalize(f"{brand_names} {product.name} {product.sku} 상품 단가")


# ---------------------------------------------------------------------------------------------------------------
# Import: read rows, validate them all, then write them all in one transaction
# ---------------------------------------------------------------------------------------------------------------

ROW_TYPES = ("record", "product", "brand")
COLUMNS = {
    "record": {"type", "vendor_code", "kind", "title", "body", "values", "effective_from", "effective_to", "source",
               "source_id"},
    "product": {"type", "vendor_code", "sku", "name", "brand", "unit_price", "category", "cost_price",
                "stock_quantity", "safety_stock"},
    "brand": {"type", "brand", "aliases"},
}  # fmt: skip


class RecordImportInvalid(Exception):
    """The file has errors; nothing was written. `errors` holds one line per problem, with its row."""

    def __init__(self, errors: list[str]):
        super().__init__(f"{len(errors)} error(s)")
        self.errors = errors


@dataclass
class SourceRow:
    where: str  # "records.csv:3", "Sheet1!4", "records.jsonl:7" — what staff see in error messages
    data: dict


def _no_progress(_stage: str, _done: int, _total: int) -> None:
    return None


@dataclass
class ImportPlan:
    default_source: str
    brands: dict[str, list[str] | None] = field(default_factory=dict)  # name -> aliases (None: keep as is)
    products: list[dict] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    # What the write changed, row by row, for a dry-run preview: {"type", "action", "vendor_id", "key", "fields"}.
    changes: list[dict] = field(default_factory=list)
    progress: Callable[[str, int, int], None] = _no_progress  # (stage, done, total), for a command's progress bar


def records_file_read(path: Path) -> list[SourceRow]:
    """Rows of a CSV (UTF-8 or CP949, header row), XLSX (every sheet, header row each) or JSON Lines file."""
    path = Path(path)
    return records_content_read(path.name, path.read_bytes())


def records_content_read(file_name: str, data: bytes) -> list[SourceRow]:
    """`records_file_read` for an upload's bytes. A file that is not what its name says is refused as a whole
    with a message staff can act on (RecordImportInvalid), never a decoding traceback."""
    suffix = Path(file_name).suffix.lower()
    if suffix == ".csv":
        rows = []
        handle = io.StringIO(_decoded(file_name, data, encodings=("utf-8-sig", "cp949")), newline="")
        for number, row in enumerate(csv.DictReader(handle), start=2):
            if None in row:  # csv puts surplus cells under the key None
                row = {"__error__": "헤더보다 칸이 많습니다"}
            elif not any((value or "").strip() for value in row.values()):
                continue
            rows.append(SourceRow(f"{file_name}:{number}", row))
        return rows
    if suffix == ".xlsx":
        return _xlsx_rows(file_name, data)
    if suffix in (".jsonl", ".ndjson"):
        rows = []
        for number, line in enumerate(_decoded(file_name, data, encodings=("utf-8-sig",)).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                row = {"__error__": f"JSON 형식 오류 ({exc.msg})"}
            if not isinstance(row, dict):
                row = {"__error__": "한 줄에 JSON 객체 하나가 있어야 합니다"}
            rows.append(SourceRow(f"{file_name}:{number}", row))
        return rows
    raise RecordImportInvalid([f"{file_name}: 지원하지 않는 형식입니다 (.csv, .xlsx, .jsonl)"])


def _decoded(file_name: str, data: bytes, *, encodings: tuple[str, ...]) -> str:
    for encoding in encodings:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" in text:
            break
        return text
    names = " 또는 ".join("UTF-8" if name.startswith("utf-8") else name.upper() for name in encodings)
    raise RecordImportInvalid([f"{file_name}: {names} 텍스트 파일이 아닙니다. {names}로 저장한 파일을 올려 주세요."])


def _xlsx_rows(file_name: str, data: bytes) -> list[SourceRow]:
    from openpyxl import load_workbook

    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise RecordImportInvalid(
            [f"{file_name}: 엑셀(.xlsx) 파일로 읽을 수 없습니다. 'Excel 통합 문서(.xlsx)'로 다시 저장해 주세요."]
        ) from exc
    rows = []
    try:
        for sheet in workbook.worksheets:
            values = sheet.iter_rows(values_only=True)
            header = next(values, None)
            if not header:
                continue
            names = [str(h).strip() if h is not None else "" for h in header]
            for number, cells in enumerate(values, start=2):
                if all(c is None or str(c).strip() == "" for c in cells):
                    continue
                row = {name: cell for name, cell in zip(names, cells, strict=False) if name}
                rows.append(SourceRow(f"{sheet.title}!{number}", row))
    finally:
        workbook.close()
    return rows


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # spreadsheet numbers such as a source id 1001.0
    return str(value).strip()


def _date(value, column: str, errors: list[str]) -> datetime.date | None:
    if value is None or _text(value) == "":
        return None
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    try:
        return datetime.date.fromisoformat(_text(value))
    except ValueError:
        errors.append(f"{column}: 날짜는 YYYY-MM-DD 형식이어야 합니다 ({_text(value)!r})")
        return None


def _json_value(value, column: str, expected: type, errors: list[str]):
    if value is None or (isinstance(value, str) and not value.strip()):
        return expected()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            if expected is list:  # spreadsheets may list aliases as `a|b|c`
                return [part.strip() for part in value.split("|") if part.strip()]
            errors.append(f"{column}: JSON 형식이 아닙니다")
            return expected()
    if not isinstance(value, expected):
        errors.append(f"{column}: {'JSON 객체' if expected is dict else '목록'}이어야 합니다")
        return expected()
    return value


_WON_MAX = 9_223_372_036_854_775_807  # PositiveBigIntegerField's upper bound
_QUANTITY_MAX = 2_147_483_647  # PositiveIntegerField's upper bound on PostgreSQL


def _won(value, column: str, errors: list[str]) -> int | None:
    text = _text(value).replace(",", "").removesuffix("원").strip()
    try:
        amount = Decimal(text)
    except InvalidOperation:
        amount = None
    if amount is None or not amount.is_finite():  # `NaN` and `Infinity` parse as Decimals
        errors.append(f"{column}: 원 단위 숫자여야 합니다 ({_text(value)!r})")
        return None
    if not 0 <= amount <= _WON_MAX or amount != amount.to_integral_value():
        errors.append(f"{column}: 0 이상의 정수여야 합니다 ({_text(value)!r})")
        return None
    return int(amount)


def _quantity(value, column: str, errors: list[str]) -> int | None:
    text = _text(value).replace(",", "")
    try:
        quantity = Decimal(text)
    except InvalidOperation:
        quantity = None
    if quantity is None or not quantity.is_finite() or quantity != quantity.to_integral_value():
        errors.append(f"{column}: 정수여야 합니다 ({_text(value)!r})")
        return None
    if not 0 <= quantity <= _QUANTITY_MAX:
        errors.append(f"{column}: 0 이상 {_QUANTITY_MAX:,} 이하여야 합니다 ({_text(value)!r})")
        return None
    return int(quantity)


def _required(data: dict, column: str, max_length: int, errors: list[str]) -> str:
    value = _text(data.get(column))
    if not value:
        errors.append(f"{column}: 값이 필요합니다")
    elif len(value) > max_length:
        errors.append(f"{column}: {max_length}자를 넘습니다")
    return value


def _optional(data: dict, column: str, max_length: int, errors: list[str]) -> str:
    value = _text(data.get(column))
    if len(value) > max_length:
        errors.append(f"{column}: {max_length}자를 넘습니다")
    return value


_KIND_BY_LABEL = {label: value for value, label in VendorRecord.Kind.choices}


@dataclass
class _ValidationContext:
    vendor_ids: dict[str, int]  # vendor code -> id, for the codes the file names
    known_brands: set[str]  # brands in the database or declared by a brand row of the file


def _brand_row(data: dict, context: _ValidationContext, plan: ImportPlan, errors: list[str]) -> tuple:
    name = _required(data, "brand", 200, errors)
    aliases = _json_value(data.get("aliases"), "aliases", list, errors)
    if not all(isinstance(alias, str) and alias.strip() for alias in aliases):
        errors.append("aliases: 빈 값이 아닌 문자열 목록이어야 합니다")
    if not errors:
        plan.brands[name] = [alias.strip() for alias in aliases] if _text(data.get("aliases")) else None
    return ("brand", name)


def _vendor_id(data: dict, context: _ValidationContext, errors: list[str]) -> int | None:
    code = _required(data, "vendor_code", 32, errors)
    vendor_id = context.vendor_ids.get(code)
    if code and vendor_id is None:
        errors.append(f"vendor_code: 없는 벤더 코드입니다 ({code})")
    return vendor_id


def _product_row(data: dict, context: _ValidationContext, plan: ImportPlan, errors: list[str]) -> tuple:
    vendor_id = _vendor_id(data, context, errors)
    sku = _required(data, "sku", 64, errors)
    name = _required(data, "name", 200, errors)
    unit_price = _won(data.get("unit_price"), "unit_price", errors)
    brand = _optional(data, "brand", 200, errors)
    if brand and brand not in context.known_brands:
        errors.append(f"brand: 등록되지 않은 브랜드입니다 ({brand}) — brand 행으로 먼저 등록하세요")
    # Optional inventory columns: only the ones the row fills in are written (see PRODUCT_OPTIONAL_COLUMNS).
    inventory = {}
    if _text(data.get("category")):
        inventory["category"] = _optional(data, "category", 100, errors)
    if _text(data.get("cost_price")):
        inventory["cost_price"] = _won(data.get("cost_price"), "cost_price", errors)
    for column in ("stock_quantity", "safety_stock"):
        if _text(data.get(column)):
            inventory[column] = _quantity(data.get(column), column, errors)
    if not errors:
        plan.products.append(
            {"vendor_id": vendor_id, "sku": sku, "name": name, "unit_price": unit_price, "brand": brand, **inventory}
        )
    return ("product", vendor_id, sku)


def _record_row(data: dict, context: _ValidationContext, plan: ImportPlan, errors: list[str]) -> tuple | None:
    vendor_id = _vendor_id(data, context, errors)
    raw_kind = _text(data.get("kind"))
    kind = raw_kind.lower() if raw_kind.lower() in VendorRecord.Kind.values else _KIND_BY_LABEL.get(raw_kind)
    if kind is None:
        errors.append(f"kind: {', '.join(VendorRecord.Kind.values)} 중 하나여야 합니다 ({raw_kind!r})")
    title = _required(data, "title", 300, errors)
    values = _json_value(data.get("values"), "values", dict, errors)
    effective_from = _date(data.get("effective_from"), "effective_from", errors)
    effective_to = _date(data.get("effective_to"), "effective_to", errors)
    if effective_from and effective_to and effective_to < effective_from:
        errors.append("effective_to: 적용 종료일이 시작일보다 앞섭니다")
    source = _optional(data, "source", 100, errors) or plan.default_source
    source_id = _optional(data, "source_id", 100, errors)
    if not errors:
        plan.records.append(
            {
                "vendor_id": vendor_id,
                "kind": kind,
                "title": title,
                "body": _text(data.get("body")),
                "values": values,
                "effective_from": effective_from,
                "effective_to": effective_to,
                "source": source,
                "source_id": source_id,
            }
        )
    # Records without a source id have no identity to collide on: each row is a new record.
    return ("record", vendor_id, kind, source_id) if source_id else None


_ROW_VALIDATORS = {"brand": _brand_row, "product": _product_row, "record": _record_row}


def _row_type(data: dict) -> str:
    return _text(data.get("type")).lower() or "record"


def records_rows_validate(rows: list[SourceRow], *, default_source: str, progress=None) -> ImportPlan:
    """Check every row before anything is written. Raises RecordImportInvalid listing every bad row."""
    codes = {_text(row.data.get("vendor_code")) for row in rows} - {""}
    product_brands = {_text(row.data.get("brand")) for row in rows if _row_type(row.data) == "product"} - {""}
    declared_brands = {_text(row.data.get("brand")) for row in rows if _row_type(row.data) == "brand"}
    stored_brands = set(Brand.objects.filter(name__in=product_brands).values_list("name", flat=True))
    context = _ValidationContext(
        vendor_ids=dict(Vendor.objects.filter(code__in=codes).values_list("code", "id")),
        known_brands=declared_brands | stored_brands,
    )
    plan = ImportPlan(default_source=default_source[:100], progress=progress or _no_progress)
    first_row_of_key: dict[tuple, str] = {}
    problems: list[str] = []
    for done, row in enumerate(rows, start=1):
        plan.progress("검사", done, len(rows))
        if "__error__" in row.data:
            problems.append(f"{row.where}: {row.data['__error__']}")
            continue
        row_type = _row_type(row.data)
        if row_type not in ROW_TYPES:
            problems.append(f"{row.where}: type은 record, product, brand 중 하나여야 합니다 ({row_type!r})")
            continue
        errors: list[str] = []
        unknown = sorted(k for k, v in row.data.items() if k not in COLUMNS[row_type] and _text(v) != "")
        if unknown:
            errors.append(f"{row_type} 행에 쓸 수 없는 열: {', '.join(unknown)}")
        key = _ROW_VALIDATORS[row_type](row.data, context, plan, errors)
        if key is not None and not errors:
            if key in first_row_of_key:
                errors.append(f"{first_row_of_key[key]} 행과 중복됩니다")
            else:
                first_row_of_key[key] = row.where
        problems.extend(f"{row.where}: {error}" for error in errors)
    if problems:
        raise RecordImportInvalid(problems)
    return plan


def _brands_write(plan: ImportPlan, now) -> tuple[dict[str, Brand], int]:
    names = set(plan.brands) | {p["brand"] for p in plan.products if p["brand"]}
    brands = {b.name: b for b in Brand.objects.select_for_update().filter(name__in=names).order_by("pk")}
    new = [Brand(name=name, aliases=aliases or []) for name, aliases in plan.brands.items() if name not in brands]
    Brand.objects.bulk_create(new)
    changed = []
    for name, aliases in plan.brands.items():
        brand = brands.get(name)
        if brand is not None and aliases is not None and brand.aliases != aliases:
            brand.aliases, brand.updated_at = aliases, now
            changed.append(brand)
    Brand.objects.bulk_update(changed, ["aliases", "updated_at"])
    plan.changes += [{"type": "brand", "action": "create", "vendor_id": None, "key": b.name, "fields": []} for b in new]
    plan.changes += [
        {"type": "brand", "action": "update", "vendor_id": None, "key": b.name, "fields": ["aliases"]} for b in changed
    ]
    brands.update({b.name: b for b in Brand.objects.filter(name__in=[b.name for b in new])})
    # Products indexed under a brand's old aliases are re-indexed, including ones this file does not touch.
    stale = list(Product.objects.filter(brand__in=changed).select_related("brand"))
    for product in stale:
        product_search_refresh(product, product.brand)
    Product.objects.bulk_update(stale, ["search_text"], batch_size=1000)
    return brands, len(new) + len(changed)


# A blank or missing optional cell keeps the stored value (a new product gets the model default), so a price
# list without stock columns does not wipe the stock that another file set.
PRODUCT_OPTIONAL_COLUMNS = ("category", "cost_price", "stock_quantity", "safety_stock")


def _products_write(plan: ImportPlan, brands: dict[str, Brand], now) -> dict[str, int]:
    vendor_ids = {p["vendor_id"] for p in plan.products}
    existing = {
        (p.vendor_id, p.sku): p
        for p in Product.objects.select_for_update().filter(vendor_id__in=vendor_ids).order_by("pk")
    }
    new, changed = [], []
    for done, row in enumerate(plan.products, start=1):
        plan.progress("상품 반영", done, len(plan.products))
        brand = brands.get(row["brand"]) if row["brand"] else None
        product = existing.get((row["vendor_id"], row["sku"]))
        if product is None:
            product = Product(vendor_id=row["vendor_id"], sku=row["sku"])
            new.append(product)
        before = _product_state(product)
        product.name, product.unit_price, product.brand = row["name"], row["unit_price"], brand
        for column in PRODUCT_OPTIONAL_COLUMNS:
            if column in row:
                setattr(product, column, row[column])
        product_search_refresh(product, brand)
        product.updated_at = now
        if product.pk is None:
            plan.changes.append(_change("product", "create", product.vendor_id, product.sku, []))
        elif _product_state(product) != before:
            changed.append(product)
            fields = [
                name
                for name, old, new in zip(_PRODUCT_STATE, before, _product_state(product), strict=True)
                if old != new
            ]
            plan.changes.append(_change("product", "update", product.vendor_id, product.sku, fields))
    Product.objects.bulk_create(new, batch_size=1000)
    Product.objects.bulk_update(
        changed,
        ["name", "unit_price", "brand", *PRODUCT_OPTIONAL_COLUMNS, "search_text", "updated_at"],
        batch_size=1000,
    )
    unchanged = len(plan.products) - len(new) - len(changed)
    return {"products_created": len(new), "products_updated": len(changed), "products_unchanged": unchanged}


_PRODUCT_STATE = ("name", "unit_price", "brand", "search_text", *PRODUCT_OPTIONAL_COLUMNS)


def _change(kind: str, action: str, vendor_id, key: str, fields: list[str]) -> dict:
    return {"type": kind, "action": action, "vendor_id": vendor_id, "key": key, "fields": fields}


def _product_state(product: Product) -> tuple:
    optional = tuple(getattr(product, column) for column in PRODUCT_OPTIONAL_COLUMNS)
    return (product.name, product.unit_price, product.brand_id, product.search_text, *optional)


_RECORD_FIELDS = ["title", "body", "values", "effective_from", "effective_to", "source"]


def _records_write(plan: ImportPlan, now, *, replace_unkeyed: bool) -> dict[str, int]:
    replaced = _unkeyed_replace(plan) if replace_unkeyed else 0
    keyed = [r for r in plan.records if r["source_id"]]
    existing = {
        (r.vendor_id, r.kind, r.source_id): r
        for r in VendorRecord.objects.select_for_update()
        .filter(vendor_id__in={r["vendor_id"] for r in keyed})
        .exclude(source_id="")
        .order_by("pk")
    }
    new, changed = [], []
    for done, row in enumerate(plan.records, start=1):
        plan.progress("기록 반영", done, len(plan.records))
        record = existing.get((row["vendor_id"], row["kind"], row["source_id"])) if row["source_id"] else None
        if record is None:
            record = VendorRecord(vendor_id=row["vendor_id"], kind=row["kind"], source_id=row["source_id"])
            new.append(record)
            plan.changes.append(_change("record", "create", row["vendor_id"], row["source_id"] or row["title"], []))
        elif all(getattr(record, name) == row[name] for name in _RECORD_FIELDS):
            continue
        else:
            changed.append(record)
            fields = [name for name in _RECORD_FIELDS if getattr(record, name) != row[name]]
            plan.changes.append(_change("record", "update", row["vendor_id"], row["source_id"], fields))
        for name in _RECORD_FIELDS:
            setattr(record, name, row[name])
        record.updated_at = now
        record_search_refresh(record)
    VendorRecord.objects.bulk_create(new, batch_size=1000)
    VendorRecord.objects.bulk_update(changed, [*_RECORD_FIELDS, "search_text", "updated_at"], batch_size=1000)
    unchanged = len(plan.records) - len(new) - len(changed)
    counts = {"records_created": len(new), "records_updated": len(changed), "records_unchanged": unchanged}
    return {**counts, "records_replaced": replaced} if replace_unkeyed else counts


def _unkeyed_scope(plan: ImportPlan):
    """Stored records that the file's rows without a source id repeat: same vendor and source (the file name by
    default), no source id. Importing such a file again adds them again unless they are replaced."""
    sources_by_vendor: dict[int, set[str]] = {}
    for row in plan.records:
        if not row["source_id"]:
            sources_by_vendor.setdefault(row["vendor_id"], set()).add(row["source"])
    scope = Q(pk__in=[])
    for vendor_id, sources in sources_by_vendor.items():
        scope |= Q(vendor_id=vendor_id, source__in=sources)
    return VendorRecord.objects.filter(scope, source_id="")


def _unkeyed_replace(plan: ImportPlan) -> int:
    stale = list(_unkeyed_scope(plan).select_for_update().order_by("pk"))
    for record in stale:
        plan.changes.append(_change("record", "replace", record.vendor_id, record.title, []))
    VendorRecord.objects.filter(pk__in=[record.pk for record in stale]).delete()
    return len(stale)


@dataclass
class UnkeyedRows:
    """Rows of a file that have no source id, and the stored rows an import would duplicate (or replace)."""

    rows: int
    stored: int

    def warning(self) -> str:
        if not self.rows:
            return ""
        text = f"source_id가 없는 기록 {self.rows}건은 가져올 때마다 새 기록으로 추가됩니다."
        if self.stored:
            text += (
                f" 같은 벤더·출처의 source_id 없는 기록 {self.stored}건이 이미 있어 그대로 가져오면 중복됩니다."
                " 이 파일의 기존 기록을 교체하려면 '교체'를 고르세요 (명령: --replace-unkeyed)."
            )
        return text


def records_unkeyed_rows(plan: ImportPlan) -> UnkeyedRows:
    rows = sum(1 for row in plan.records if not row["source_id"])
    return UnkeyedRows(rows=rows, stored=_unkeyed_scope(plan).count() if rows else 0)


def records_import(
    *,
    rows: list[SourceRow],
    file_name: str,
    file_sha256: str,
    actor_kind: str,
    actor_id: str | None,
    replace_unkeyed: bool = False,
    plan: ImportPlan | None = None,
    progress=None,
) -> RecordImport:
    """Validate every row, then write brands, products and records in one transaction with an audit row.

    Products are keyed by (vendor, sku) and records with a source id by (vendor, kind, source id): importing
    them again updates them. Records without a source id are added, unless `replace_unkeyed`: then the stored
    records of the same vendor and source without a source id (what an earlier import of this file added) are
    deleted first, so the file's rows replace them instead of duplicating them.
    """
    if not rows:
        raise RecordImportInvalid([f"{file_name}: 가져올 행이 없습니다"])
    plan = plan or records_rows_validate(rows, default_source=f"import:{file_name}", progress=progress)
    now = timezone.now()
    with transaction.atomic():
        brands, brands_written = _brands_write(plan, now)
        counts = {
            "brands_written": brands_written,
            **_products_write(plan, brands, now),
            **_records_write(plan, now, replace_unkeyed=replace_unkeyed),
        }
        record_import = RecordImport.objects.create(file_name=file_name, file_sha256=file_sha256, counts=counts)
        audit_record(
            actor_kind=actor_kind,
            actor_id=actor_id,
            action="records.import",
            target=record_import,
            data={"file_name": file_name, "rows": len(rows), **counts},
        )
        analyze_after_bulk_write(VendorRecord, Product, rows=len(rows))
    return record_import


def records_import_file(
    path: Path, *, actor_kind: str, actor_id: str | None, replace_unkeyed: bool = False, progress=None
) -> RecordImport:
    path = Path(path)
    return records_import(
        rows=records_file_read(path),
        file_name=path.name,
        file_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        actor_kind=actor_kind,
        actor_id=actor_id,
        replace_unkeyed=replace_unkeyed,
        progress=progress,
    )


class _DryRunRollback(Exception):
    pass


@dataclass
class RecordImportPreview:
    """What an import of these rows would change, computed by running it in a transaction rolled back."""

    counts: dict
    changes: list[dict]
    unkeyed: UnkeyedRows


def records_import_preview(
    *, rows: list[SourceRow], file_name: str, replace_unkeyed: bool = False
) -> RecordImportPreview:
    """Dry run: the same validation and writes as `records_import`, undone before returning, so the preview is
    exactly what the import would do now. Raises RecordImportInvalid as the import would."""
    if not rows:
        raise RecordImportInvalid([f"{file_name}: 가져올 행이 없습니다"])
    plan = records_rows_validate(rows, default_source=f"import:{file_name}")
    unkeyed = records_unkeyed_rows(plan)
    result = {}
    try:
        with transaction.atomic():
            record_import = records_import(
                rows=rows,
                file_name=file_name,
                file_sha256="",
                actor_kind="system",
                actor_id="dry-run",
                replace_unkeyed=replace_unkeyed,
                plan=plan,
            )
            result["counts"] = record_import.counts
            raise _DryRunRollback
    except _DryRunRollback:
        pass
    return RecordImportPreview(counts=result["counts"], changes=plan.changes, unkeyed=unkeyed)


DEMO_RECORDS_FILE = Path(__file__).resolve().parent.parent / "demo" / "data" / "records.jsonl"


def demo_records_load() -> RecordImport:
    """Load the demo vendors' brands, products and records (idempotent: every row has a key)."""
    return records_import_file(DEMO_RECORDS_FILE, actor_kind="system", actor_id="demo")
