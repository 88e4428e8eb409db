"""Curation of vendor records, products and brands: admin pages that view, search, edit (through the services,
audited) and retire them; imports without source ids that warn and can replace their earlier rows; uploads with
a dry-run preview before anything is written (real PostgreSQL)."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from agent.knowledge.records import vendor_records_search
from agent.tools import ToolContext, tool_execute
from conversations.models import Room
from conversations.tests.factories import RoomFactory
from monitoring.models import AuditEvent
from vendors.models import Product, RecordImport, StagedImport, Vendor, VendorRecord
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory, VendorRecordFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def vendor():
    return VendorFactory(code="1234", name="대한물산")


def _found(vendor, query):
    return [item.reference for item in vendor_records_search(vendor=vendor, query=query, limit=10)]


# --- admin pages --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["vendorrecord", "product", "brand", "recordimport"])
def test_records_products_brands_and_imports_have_admin_pages(admin_client, vendor, model):
    VendorRecordFactory(vendor=vendor, title="2026 거래 조건")
    ProductFactory(vendor=vendor, name="참기름 500ml", sku="OIL-500")

    assert admin_client.get(f"/admin/vendors/{model}/").status_code == 200


def test_records_are_searched_by_title_body_and_vendor(admin_client, vendor):
    VendorRecordFactory(vendor=vendor, title="2026 거래 조건", body="결제는 익월 10일")
    VendorRecordFactory(vendor=VendorFactory(code="9", name="가온상사"), title="물류 단가표")

    page = admin_client.get("/admin/vendors/vendorrecord/", {"q": "대한물산"}).content.decode()

    assert "2026 거래 조건" in page and "물류 단가표" not in page


def test_editing_a_record_goes_through_the_service_with_an_audit_row_and_new_search_text(admin_client, vendor):
    record = VendorRecordFactory(vendor=vendor, title="2026 거래 조건", body="결제는 익월 10일")
    url = reverse("admin:vendors_vendorrecord_change", args=[record.pk])
    form = {
        "kind": "contract",
        "title": "2026 거래 조건",
        "body": "결제는 익월 25일 현금",
        "values": '{"결제일": "익월 25일"}',
        "effective_from": "",
        "effective_to": "",
        "source": "admin",
        "source_id": "",
    }

    response = admin_client.post(url, form)

    assert response.status_code == 302
    record.refresh_from_db()
    assert record.body == "결제는 익월 25일 현금" and "25일" in record.search_text
    event = AuditEvent.objects.get(action="records.record_save", target_id=str(record.pk))
    assert event.actor_kind == "staff" and set(event.data["changes"]) == {"body", "values", "source"}


def test_an_invalid_date_range_is_refused_on_the_form(admin_client, vendor):
    record = VendorRecordFactory(vendor=vendor)
    url = reverse("admin:vendors_vendorrecord_change", args=[record.pk])

    response = admin_client.post(
        url,
        {
            "kind": "contract",
            "title": "x",
            "values": "{}",
            "effective_from": "2026-05-01",
            "effective_to": "2026-04-01",
        },
    )

    assert response.status_code == 200 and not AuditEvent.objects.filter(action="records.record_save").exists()


def test_a_retired_record_or_product_leaves_search_and_company_tools_and_can_be_restored(admin_client, vendor):
    record = VendorRecordFactory(vendor=vendor, kind="promotion", title="참기름 행사 10% 할인")
    product = ProductFactory(vendor=vendor, name="참기름 500ml", sku="OIL-500", stock_quantity=0, safety_stock=5)
    assert set(_found(vendor, "참기름")) == {f"record:{record.pk}", f"product:{product.pk}"}

    for model, obj in (("vendorrecord", record), ("product", product)):
        admin_client.post(
            f"/admin/vendors/{model}/", {"action": "retire_selected", "_selected_action": [obj.pk]}, follow=True
        )

    assert _found(vendor, "참기름") == []
    room = RoomFactory(vendor=vendor, kind=Room.Kind.INTERNAL)
    context = ToolContext(question_id=None, vendor=vendor, room=room, room_kind=Room.Kind.INTERNAL)
    alerts = tool_execute(context, "company_stock_alerts", {})
    assert alerts.allowed and "OIL-500" not in alerts.result.text
    assert AuditEvent.objects.filter(action="records.product_retire").count() == 1
    page = admin_client.get("/admin/vendors/product/", {"state": "retired"}).content.decode()
    assert "OIL-500" in page

    admin_client.post("/admin/vendors/product/", {"action": "restore_selected", "_selected_action": [product.pk]})
    assert _found(vendor, "참기름") == [f"product:{product.pk}"]


def test_an_import_keeps_a_retired_product_retired(vendor, tmp_path):
    product = ProductFactory(vendor=vendor, sku="OIL-500", unit_price=5000)
    from vendors.services import records_retire

    records_retire(model=Product, ids=[product.pk], actor=None)
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"type": "product", "vendor_code": "1234", "sku": "OIL-500", "name": "참기름", "unit_price": 6000})
    )

    call_command("import_records", str(path))

    product.refresh_from_db()
    assert product.unit_price == 6000 and product.retired_at is not None and product.search_text == ""


def test_a_brand_alias_edit_reindexes_its_products(admin_client, vendor):
    brand = BrandFactory(name="한빛식품")
    product = ProductFactory(vendor=vendor, brand=brand, name="참기름", sku="OIL-1")

    admin_client.post(reverse("admin:vendors_brand_change", args=[brand.pk]), {"name": "한빛식품", "aliases": "HANBIT"})

    product.refresh_from_db()
    assert "hanbit" in product.search_text
    assert AuditEvent.objects.get(action="records.brand_save").data["products_reindexed"] == 1


# --- rows without source ids -------------------------------------------------------------------------------


def _unkeyed_file(tmp_path, body="월말 마감"):
    path = tmp_path / "terms.jsonl"
    rows = [
        {"vendor_code": "1234", "kind": "contract", "title": "결제 조건", "body": body},
        {"vendor_code": "1234", "kind": "notice", "title": "휴무 안내", "body": "설 연휴"},
    ]
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows))
    return path


def test_reimporting_rows_without_source_ids_warns_and_replace_keeps_one_copy(vendor, tmp_path, capsys):
    path = _unkeyed_file(tmp_path)
    call_command("import_records", str(path))
    call_command("import_records", str(path))
    assert VendorRecord.objects.count() == 4  # what a plain re-import does: the file's rows twice
    assert "중복됩니다" in capsys.readouterr().err

    path = _unkeyed_file(tmp_path, body="월말 마감, 익월 10일 결제")
    call_command("import_records", str(path), "--replace-unkeyed")

    assert VendorRecord.objects.count() == 2
    assert VendorRecord.objects.get(title="결제 조건").body == "월말 마감, 익월 10일 결제"
    assert RecordImport.objects.first().counts["records_replaced"] == 4


def test_dry_run_of_the_command_writes_nothing(vendor, tmp_path, capsys):
    call_command("import_records", str(_unkeyed_file(tmp_path)), "--dry-run")

    out = capsys.readouterr().out
    assert "미리보기" in out and "records_created=2" in out
    assert VendorRecord.objects.count() == 0 and RecordImport.objects.count() == 0


def test_a_cp949_csv_is_read_and_a_broken_xlsx_gets_a_korean_message(vendor, tmp_path, capsys):
    csv_path = tmp_path / "records.csv"
    csv_path.write_bytes("vendor_code,kind,title,body\n1234,계약 조건,결제 조건,월말 마감\n".encode("cp949"))
    call_command("import_records", str(csv_path))
    assert VendorRecord.objects.get().title == "결제 조건"

    xlsx_path = tmp_path / "records.xlsx"
    xlsx_path.write_bytes(b"not a spreadsheet")
    with pytest.raises(Exception, match="아무것도 반영하지"):
        call_command("import_records", str(xlsx_path))
    assert "엑셀(.xlsx) 파일로 읽을 수 없습니다" in capsys.readouterr().err


# --- uploads with a preview ---------------------------------------------------------------------------------


def _stage(client, name, data, kind, **extra):
    return client.post(
        reverse("admin:vendors_recordimport_upload"),
        {"kind": kind, "file": SimpleUploadedFile(name, data), **extra},
    )


def test_a_records_upload_previews_then_applies(admin_client, vendor):
    ProductFactory(vendor=vendor, sku="OIL-500", name="참기름", unit_price=5000)
    data = "\n".join(
        json.dumps(row, ensure_ascii=False)
        for row in [
            {"type": "product", "vendor_code": "1234", "sku": "OIL-500", "name": "참기름", "unit_price": 5500},
            {"vendor_code": "1234", "kind": "contract", "title": "결제 조건", "source_id": "C-1"},
        ]
    ).encode()

    response = _stage(admin_client, "prices.jsonl", data, "records")

    staged = StagedImport.objects.get()
    preview = admin_client.get(response["Location"]).content.decode()
    assert 'id="import-apply"' in preview and "unit_price" in preview and "C-1" in preview
    assert Product.objects.get().unit_price == 5000 and VendorRecord.objects.count() == 0  # nothing written yet

    admin_client.post(response["Location"], {"step": "apply"})

    staged.refresh_from_db()
    assert staged.status == "applied" and Product.objects.get().unit_price == 5500
    assert VendorRecord.objects.get().source_id == "C-1"
    admin_client.post(response["Location"], {"step": "apply"})  # applying twice does nothing
    assert RecordImport.objects.count() == 1


def test_a_records_upload_offers_to_replace_rows_without_source_ids(admin_client, vendor, tmp_path):
    call_command("import_records", str(_unkeyed_file(tmp_path)))
    data = _unkeyed_file(tmp_path).read_bytes()

    response = _stage(admin_client, "terms.jsonl", data, "records")
    page = admin_client.get(response["Location"]).content.decode()
    assert "중복됩니다" in page and 'id="import-replace-unkeyed"' in page

    admin_client.post(response["Location"], {"step": "repreview", "replace_unkeyed": "on"})
    assert StagedImport.objects.get().preview["counts"]["records_replaced"] == 2
    admin_client.post(response["Location"], {"step": "apply"})
    assert VendorRecord.objects.count() == 2


def test_a_bad_records_file_cannot_be_applied(admin_client, vendor):
    response = _stage(admin_client, "records.jsonl", "\n".join(["{bad"]).encode("cp949"), "records")
    page = admin_client.get(response["Location"]).content.decode()

    assert "JSON 형식 오류" in page and 'id="import-apply"' not in page


def test_a_vendors_upload_previews_then_applies(admin_client, vendor):
    data = "code,name,aliases\n1234,대한물산(주),대한\n5678,가온상사,\n".encode("cp949")

    response = _stage(admin_client, "vendors.csv", data, "vendors")
    page = admin_client.get(response["Location"]).content.decode()
    assert "5678" in page and Vendor.objects.count() == 1

    admin_client.post(response["Location"], {"step": "apply"})

    assert Vendor.objects.get(code="1234").name == "대한물산(주)" and Vendor.objects.filter(code="5678").exists()
