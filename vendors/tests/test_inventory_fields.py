"""Product inventory columns in `import_records` (category, cost, stock, safety stock) and the vendor answer mode
(auto / review) through the service and the admin."""

import json

import pytest
from django.urls import reverse

from monitoring.models import AuditEvent
from vendors.models import Product, Vendor
from vendors.records import RecordImportInvalid, records_import_file
from vendors.services import VendorInvalid, vendor_upsert
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.django_db


def import_rows(tmp_path, rows):
    path = tmp_path / "products.jsonl"
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n", encoding="utf-8")
    return records_import_file(path, actor_kind="system", actor_id="test")


def product_row(**columns):
    return {"type": "product", "vendor_code": "1001", "sku": "S-1", "name": "간장 1.8L", "unit_price": 8900, **columns}


@pytest.fixture
def vendor():
    return VendorFactory(code="1001", name="대한물산")


def stored(sku="S-1"):
    return Product.objects.values("category", "cost_price", "stock_quantity", "safety_stock").get(sku=sku)


def test_product_rows_carry_category_cost_and_stock(vendor, tmp_path):
    """The optional columns are stored; amounts and counts accept thousands separators and `원`."""
    import_rows(
        tmp_path,
        [product_row(category="양념·소스", cost_price="6,200원", stock_quantity="1,200", safety_stock=100)],
    )
    assert stored() == {"category": "양념·소스", "cost_price": 6200, "stock_quantity": 1200, "safety_stock": 100}


def test_a_new_product_without_the_columns_gets_the_defaults(vendor, tmp_path):
    """No category, no cost (not zero: unknown), no stock."""
    import_rows(tmp_path, [product_row()])
    assert stored() == {"category": "", "cost_price": None, "stock_quantity": 0, "safety_stock": 0}


def test_blank_columns_keep_what_another_file_stored(vendor, tmp_path):
    """A price list without stock columns updates the price and leaves category, cost and stock as they were;
    a filled cell replaces the stored value."""
    import_rows(tmp_path, [product_row(category="양념", cost_price=6000, stock_quantity=50, safety_stock=10)])
    import_rows(tmp_path, [product_row(unit_price=9100, category="", cost_price=None)])
    assert Product.objects.get().unit_price == 9100
    assert stored() == {"category": "양념", "cost_price": 6000, "stock_quantity": 50, "safety_stock": 10}
    import_rows(tmp_path, [product_row(stock_quantity=0)])
    assert stored()["stock_quantity"] == 0


@pytest.mark.parametrize(
    ("columns", "error"),
    [
        ({"cost_price": "abc"}, "cost_price: 원 단위 숫자여야 합니다 ('abc')"),
        ({"cost_price": "NaN"}, "cost_price: 원 단위 숫자여야 합니다 ('NaN')"),
        ({"cost_price": -5}, "cost_price: 0 이상의 정수여야 합니다 ('-5')"),
        ({"cost_price": "1e30"}, "cost_price: 0 이상의 정수여야 합니다 ('1e30')"),
        ({"unit_price": "Infinity"}, "unit_price: 원 단위 숫자여야 합니다 ('Infinity')"),
        ({"stock_quantity": "-1"}, "stock_quantity: 0 이상 2,147,483,647 이하여야 합니다 ('-1')"),
        ({"stock_quantity": "3000000000"}, "stock_quantity: 0 이상 2,147,483,647 이하여야 합니다 ('3000000000')"),
        ({"safety_stock": 1.5}, "safety_stock: 정수여야 합니다 ('1.5')"),
        ({"safety_stock": "많음"}, "safety_stock: 정수여야 합니다 ('많음')"),
        ({"category": "가" * 101}, "category: 100자를 넘습니다"),
    ],
)
def test_invalid_inventory_cells_are_row_errors_and_nothing_is_written(vendor, tmp_path, columns, error):
    """A bad cell is reported with its row like any other column error; the file is not imported at all."""
    with pytest.raises(RecordImportInvalid) as raised:
        import_rows(tmp_path, [product_row(sku="OK-1"), product_row(**columns)])
    assert raised.value.errors == [f"products.jsonl:2: {error}"]
    assert not Product.objects.exists()


def test_answer_mode_defaults_to_auto_and_changes_through_the_service_with_an_audit_row():
    """New vendors answer automatically; switching to review is an audited change; an unknown mode is refused."""
    vendor, _ = vendor_upsert(code="1001", name="대한물산")
    assert vendor.answer_mode == Vendor.AnswerMode.AUTO

    vendor_upsert(code="1001", name="대한물산", answer_mode="review", actor_kind="staff", actor_id=7)

    vendor.refresh_from_db()
    assert vendor.answer_mode == Vendor.AnswerMode.REVIEW
    audit = AuditEvent.objects.get(action="vendor.update")
    assert audit.data == {"changes": {"answer_mode": ["auto", "review"]}}
    with pytest.raises(VendorInvalid):
        vendor_upsert(code="1001", name="대한물산", answer_mode="manual")
    vendor_upsert(code="1001", name="대한물산")  # None keeps the mode
    vendor.refresh_from_db()
    assert vendor.answer_mode == Vendor.AnswerMode.REVIEW


def test_admin_shows_and_edits_the_answer_mode(admin_client):
    """The list shows and filters by answer mode; the change form saves it through the service."""
    vendor = VendorFactory(code="1001", name="대한물산")
    VendorFactory(code="1002", name="가온상사", answer_mode=Vendor.AnswerMode.REVIEW)
    change_url = reverse("admin:vendors_vendor_change", args=[vendor.pk])

    form_page = admin_client.get(change_url).content.decode()
    assert 'name="answer_mode"' in form_page and "검토 후 발송" in form_page
    response = admin_client.post(
        change_url, {"name": "대한물산", "aliases": "", "is_active": "on", "answer_mode": "review"}
    )

    assert response.status_code == 302
    vendor.refresh_from_db()
    assert vendor.answer_mode == Vendor.AnswerMode.REVIEW
    assert AuditEvent.objects.get(action="vendor.update").data == {"changes": {"answer_mode": ["auto", "review"]}}
    listed = admin_client.get(reverse("admin:vendors_vendor_changelist"), {"answer_mode__exact": "review"})
    assert [v.code for v in listed.context["cl"].result_list] == ["1001", "1002"]
    assert "검토 후 발송" in listed.content.decode()
