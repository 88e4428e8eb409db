"""`import_records`: CSV / XLSX / JSON Lines, per-row errors, all-or-nothing, upserts, audit row."""

import csv
import datetime
import hashlib
import json

import pytest
from django.core.management import CommandError, call_command
from openpyxl import Workbook

from agent.knowledge.records import vendor_records_search
from monitoring.models import AuditEvent
from vendors.models import Brand, Product, RecordImport, Vendor, VendorRecord
from vendors.records import RecordImportInvalid, records_import_file
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory

pytestmark = pytest.mark.django_db

CSV_COLUMNS = [
    "type", "vendor_code", "kind", "title", "body", "values", "effective_from", "effective_to", "source",
    "source_id", "sku", "name", "brand", "aliases", "unit_price",
]  # fmt: skip


@pytest.fixture
def vendors():
    return VendorFactory(code="1001", name="대한물산"), VendorFactory(code="1002", name="가온상사")


def write_csv(path, rows):
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n", encoding="utf-8")
    return path


def table_counts():
    return (Brand.objects.count(), Product.objects.count(), VendorRecord.objects.count(), RecordImport.objects.count())


def test_csv_imports_brands_products_and_records_with_an_audit_row(vendors, tmp_path):
    """One CSV holds brand, product and record rows (the `type` column; blank means record). Everything is
    written, searchable at once, and one RecordImport with its audit row describes the run."""
    daehan, gaon = vendors
    path = write_csv(
        tmp_path / "records.csv",
        [
            {"type": "brand", "brand": "한빛식품", "aliases": "한빛|HANBIT"},
            {"type": "product", "vendor_code": "1001", "sku": "HB-100", "name": "포기김치 10kg", "brand": "한빛식품",
             "unit_price": "32,000"},
            {"vendor_code": "1001", "kind": "contract", "title": "2026 거래 조건", "body": "월말 마감 익월 10일 결제",
             "values": '{"결제 조건": "익월 10일"}', "effective_from": "2026-01-01", "effective_to": "2026-12-31",
             "source_id": "C-2026"},
            {"type": "record", "vendor_code": "1002", "kind": "공지", "title": "설 연휴 배송 공지"},
        ],
    )  # fmt: skip

    record_import = records_import_file(path, actor_kind="system", actor_id="test")

    assert record_import.counts == {
        "brands_written": 1,
        "products_created": 1,
        "products_updated": 0,
        "products_unchanged": 0,
        "records_created": 2,
        "records_updated": 0,
        "records_unchanged": 0,
    }
    assert Brand.objects.get().aliases == ["한빛", "HANBIT"]
    product = Product.objects.get()
    assert (product.vendor, product.brand.name, product.unit_price) == (daehan, "한빛식품", 32000)
    contract = VendorRecord.objects.get(source_id="C-2026")
    assert contract.values == {"결제 조건": "익월 10일"}
    assert (contract.effective_from, contract.effective_to) == (datetime.date(2026, 1, 1), datetime.date(2026, 12, 31))
    assert contract.source == "import:records.csv"
    notice = VendorRecord.objects.get(vendor=gaon)
    assert notice.kind == VendorRecord.Kind.NOTICE  # the Korean label is accepted
    assert vendor_records_search(vendor=daehan, query="hanbit 김치", limit=5)[0].reference == f"product:{product.pk}"
    audit = AuditEvent.objects.get(action="records.import")
    assert (audit.target_type, audit.target_id) == ("vendors.recordimport", str(record_import.pk))
    assert audit.data["rows"] == 4
    assert record_import.file_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_xlsx_reads_every_sheet_with_date_and_number_cells(vendors, tmp_path):
    """Each sheet has its own header row; date cells, integer cells and float-typed ids are understood."""
    daehan, _ = vendors
    workbook = Workbook()
    records = workbook.active
    records.title = "기록"
    records.append(["vendor_code", "kind", "title", "body", "effective_from", "effective_to", "source_id"])
    records.append([1001, "promotion", "여름 라면 프로모션", "라면 전 품목 12% 할인", datetime.date(2026, 7, 1),
                    datetime.datetime(2026, 8, 31), 77.0])  # noqa: DTZ001 — spreadsheet cells are naive  # fmt: skip
    products = workbook.create_sheet("상품")
    products.append(["type", "vendor_code", "sku", "name", "unit_price"])
    products.append(["product", "1001", "RM-1", "진한 라면 40입", 21900])
    path = tmp_path / "records.xlsx"
    workbook.save(path)

    records_import_file(path, actor_kind="system", actor_id="test")

    record = VendorRecord.objects.get()
    assert (record.vendor, record.source_id, record.effective_to) == (daehan, "77", datetime.date(2026, 8, 31))
    assert Product.objects.get().unit_price == 21900
    [item] = vendor_records_search(vendor=daehan, query="라면 프로모션은요?", limit=1, on=datetime.date(2026, 8, 1))
    assert item.reference == f"record:{record.pk}"


def test_jsonl_reimport_updates_keyed_rows_instead_of_adding(vendors, tmp_path):
    """Products are keyed by (vendor, sku), records with a source id by (vendor, kind, source id): a second
    import updates them, an identical one leaves them (counted unchanged). A record without a source id is added
    each time."""
    daehan, _ = vendors
    rows = [
        {"type": "product", "vendor_code": "1001", "sku": "HB-100", "name": "포기김치 10kg", "unit_price": 32000},
        {"vendor_code": "1001", "kind": "settlement", "title": "3월 정산", "values": {"정산액": "1,250,000원"},
         "source_id": "S-03"},
        {"vendor_code": "1001", "kind": "other", "title": "메모"},
    ]  # fmt: skip
    records_import_file(write_jsonl(tmp_path / "a.jsonl", rows), actor_kind="system", actor_id="test")
    rows[0]["unit_price"] = 33000
    rows[1]["values"] = {"정산액": "1,300,000원"}

    second = records_import_file(write_jsonl(tmp_path / "a.jsonl", rows), actor_kind="system", actor_id="test")

    assert second.counts["products_updated"] == 1
    assert second.counts["records_updated"] == 1
    assert second.counts["records_created"] == 1
    third = records_import_file(write_jsonl(tmp_path / "a.jsonl", rows), actor_kind="system", actor_id="test")
    assert (third.counts["products_unchanged"], third.counts["records_unchanged"]) == (1, 1)
    assert third.counts["products_updated"] == third.counts["records_updated"] == 0
    assert Product.objects.get().unit_price == 33000
    assert VendorRecord.objects.get(source_id="S-03").values == {"정산액": "1,300,000원"}
    assert VendorRecord.objects.filter(title="메모").count() == 3  # one per import
    [item] = vendor_records_search(vendor=daehan, query="HB-100", limit=1)
    assert item.text.endswith("단가 33,000원")


def test_brand_alias_change_reindexes_products_outside_the_file(vendors, tmp_path):
    """A brand row with new aliases makes the brand's existing products findable by them."""
    daehan, _ = vendors
    brand = BrandFactory(name="해태", aliases=[])
    product = ProductFactory(vendor=daehan, brand=brand, name="홈런볼", sku="HT-1")

    records_import_file(
        write_jsonl(tmp_path / "b.jsonl", [{"type": "brand", "brand": "해태", "aliases": ["해태제과"]}]),
        actor_kind="system",
        actor_id="test",
    )

    [item] = vendor_records_search(vendor=daehan, query="해태제과 홈런볼", limit=5)
    assert item.reference == f"product:{product.pk}"


def test_every_bad_row_is_reported_and_nothing_is_written(vendors, tmp_path):
    """One file with good and bad rows: each bad row is named with its problem, and no row at all is written."""
    BrandFactory(name="한빛식품")
    before = table_counts()
    path = tmp_path / "bad.jsonl"
    lines = [
        {"type": "brand", "brand": "새브랜드"},  # good
        {"vendor_code": "1001", "kind": "contract", "title": "좋은 행"},  # good
        {"vendor_code": "9999", "kind": "contract", "title": "없는 벤더"},
        {"vendor_code": "1001", "kind": "계약", "title": "틀린 종류"},
        {"vendor_code": "1001", "kind": "notice", "title": ""},
        {"vendor_code": "1001", "kind": "notice", "title": "날짜", "effective_from": "2026/01/01"},
        {"vendor_code": "1001", "kind": "notice", "title": "기간", "effective_from": "2026-02-01",
         "effective_to": "2026-01-01"},
        {"type": "product", "vendor_code": "1001", "sku": "X-1", "name": "상품", "brand": "한빚식품",
         "unit_price": 1000},
        {"type": "product", "vendor_code": "1001", "sku": "X-2", "name": "상품", "unit_price": "12.5"},
        {"type": "product", "vendor_code": "1001", "sku": "X-3", "name": "상품", "unit_price": 100},
        {"type": "product", "vendor_code": "1001", "sku": "X-3", "name": "상품 중복", "unit_price": 100},
        {"vendor_code": "1001", "kind": "notice", "title": "열", "vender": "오타"},
        {"type": "coupon", "vendor_code": "1001"},
        {"vendor_code": "1001", "kind": "notice", "title": "값", "values": "[1, 2]"},
    ]  # fmt: skip
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n{not json\n"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(RecordImportInvalid) as raised:
        records_import_file(path, actor_kind="system", actor_id="test")

    assert raised.value.errors == [
        "bad.jsonl:3: vendor_code: 없는 벤더 코드입니다 (9999)",
        "bad.jsonl:4: kind: contract, order, promotion, settlement, notice, other 중 하나여야 합니다 ('계약')",
        "bad.jsonl:5: title: 값이 필요합니다",
        "bad.jsonl:6: effective_from: 날짜는 YYYY-MM-DD 형식이어야 합니다 ('2026/01/01')",
        "bad.jsonl:7: effective_to: 적용 종료일이 시작일보다 앞섭니다",
        "bad.jsonl:8: brand: 등록되지 않은 브랜드입니다 (한빚식품) — brand 행으로 먼저 등록하세요",
        "bad.jsonl:9: unit_price: 0 이상의 정수여야 합니다 ('12.5')",
        "bad.jsonl:11: bad.jsonl:10 행과 중복됩니다",
        "bad.jsonl:12: record 행에 쓸 수 없는 열: vender",
        "bad.jsonl:13: type은 record, product, brand 중 하나여야 합니다 ('coupon')",
        "bad.jsonl:14: values: JSON 객체이어야 합니다",
        "bad.jsonl:15: JSON 형식 오류 (Expecting property name enclosed in double quotes)",
    ]
    assert table_counts() == before
    assert not AuditEvent.objects.filter(action="records.import").exists()


def test_csv_row_with_more_cells_than_the_header_is_an_error(vendors, tmp_path):
    """Surplus cells (a comma inside an unquoted body, say) make the row an error instead of being dropped."""
    path = tmp_path / "records.csv"
    path.write_text("vendor_code,kind,title\n1001,notice,제목,넘치는 칸\n", encoding="utf-8")

    with pytest.raises(RecordImportInvalid) as raised:
        records_import_file(path, actor_kind="system", actor_id="test")

    assert raised.value.errors == ["records.csv:2: 헤더보다 칸이 많습니다"]


def test_command_reports_success(vendors, tmp_path, capsys):
    """`manage.py import_records FILE` prints what it wrote."""
    path = write_jsonl(tmp_path / "ok.jsonl", [{"vendor_code": "1001", "kind": "notice", "title": "공지"}])

    call_command("import_records", str(path))

    assert "records_created=1" in capsys.readouterr().out
    assert VendorRecord.objects.count() == 1


def test_command_lists_row_errors_and_fails_without_writing(vendors, tmp_path, capsys):
    """On errors the command prints each one, fails, and the database is unchanged."""
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [{"vendor_code": "1001", "kind": "notice", "title": "좋은 행"}, {"vendor_code": "404", "title": "x"}],
    )

    with pytest.raises(CommandError, match="오류 2건"):
        call_command("import_records", str(path))

    err = capsys.readouterr().err
    assert "bad.jsonl:2: vendor_code: 없는 벤더 코드입니다 (404)" in err
    assert "bad.jsonl:2: kind:" in err
    assert VendorRecord.objects.count() == 0


@pytest.mark.parametrize(("name", "content"), [("records.txt", "x"), ("empty.jsonl", "\n\n")])
def test_command_rejects_unsupported_and_empty_files(tmp_path, name, content):
    """Only .csv, .xlsx and .jsonl are read, and a file without rows is an error, not an empty import."""
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")

    with pytest.raises(CommandError, match="오류 1건"):
        call_command("import_records", str(path))

    assert RecordImport.objects.count() == 0


def test_demo_records_load_for_the_demo_vendors_and_reload_idempotently():
    """The demo file loads cleanly for demo/data/vendors.csv; every row has a key, so a second load adds nothing.
    It has one-character brand pairs (한빛식품/한빚식품, 다온푸드/다은푸드 …) and the same SKU at different prices
    for different vendors, each vendor seeing only its own."""
    from vendors.records import DEMO_RECORDS_FILE, demo_records_load
    from vendors.services import vendors_import_csv

    vendors_import_csv(DEMO_RECORDS_FILE.parent / "vendors.csv")

    first = demo_records_load()
    second = demo_records_load()

    assert first.counts["records_created"] >= 150 and first.counts["products_created"] >= 60
    assert second.counts["records_created"] == second.counts["products_created"] == 0
    assert second.counts["records_unchanged"] == first.counts["records_created"]
    assert second.counts["products_unchanged"] == first.counts["products_created"]
    brand_names = set(Brand.objects.values_list("name", flat=True))
    assert {"한빛식품", "한빚식품", "다온푸드", "다은푸드", "고운뜰", "고운들"} <= brand_names
    daehan, selim = Vendor.objects.get(code="1001"), Vendor.objects.get(code="1007")
    [daehan_kimchi] = vendor_records_search(vendor=daehan, query="HB-100 단가", limit=1)
    [selim_kimchi] = vendor_records_search(vendor=selim, query="HB-100 단가", limit=1)
    assert daehan_kimchi.reference != selim_kimchi.reference
    assert Product.objects.get(vendor=daehan, sku="HB-100").unit_price == daehan_kimchi.extra["unit_price"]
    [promotion] = vendor_records_search(vendor=selim, query="이번 달 프로모션 할인율이 얼마인가요?", limit=1)
    assert promotion.extra["values"]["대상 브랜드"] == "한빛식품"


def test_a_large_import_refreshes_the_planner_statistics_after_commit(
    vendors, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    """A bulk import is followed, once committed, by ANALYZE of the searched tables, so the next searches are
    planned on their indexes instead of the statistics of the table before the import (config.db)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    monkeypatch.setattr("config.db.BULK_WRITE_ROWS", 2)
    rows = [{"vendor_code": "1001", "kind": "notice", "title": f"공지 {n}", "body": "내용"} for n in range(2)]
    path = write_jsonl(tmp_path / "records.jsonl", rows)
    with CaptureQueriesContext(connection) as queries:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            records_import_file(path, actor_kind="system", actor_id="test")
        assert not [query for query in queries if query["sql"].startswith("ANALYZE")]  # not before the commit
        for callback in callbacks:
            callback()
    analyzed = [query["sql"] for query in queries if query["sql"].startswith("ANALYZE")]
    assert analyzed == ['ANALYZE "vendors_vendorrecord", "vendors_product"']
