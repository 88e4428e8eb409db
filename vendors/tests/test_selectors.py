"""Reads of the vendors app other apps call: vendors by id, one record looked up for its vendor or by id; every
name, and the table revisions the name caches of other apps are rebuilt on."""

import datetime

import pytest

from vendors.models import Vendor, VendorRecord
from vendors.selectors import (
    brand_carriers,
    brand_name_rows,
    brand_table_revision,
    product_names,
    product_table_revision,
    vendor_id_names,
    vendor_name_rows,
    vendor_record_current_get,
    vendor_record_get,
    vendor_table_revision,
)
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import BrandFactory, ProductFactory, VendorRecordFactory

pytestmark = pytest.mark.django_db

RETIRED = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)


def test_vendor_id_names_reads_the_vendors_asked_for_by_name_up_to_the_limit():
    """Ids as a list or as a subquery; by name, not by code."""
    ga = VendorFactory(code="1003", name="가온상사")
    na = VendorFactory(code="1001", name="나래유통")
    da = VendorFactory(code="1002", name="다온식품", is_active=False)
    VendorFactory(code="1004", name="라온물산")

    assert vendor_id_names([da.pk, na.pk, ga.pk], limit=10) == [
        (ga.pk, "가온상사"),
        (na.pk, "나래유통"),
        (da.pk, "다온식품"),
    ]
    assert vendor_id_names([da.pk, na.pk, ga.pk], limit=2) == [(ga.pk, "가온상사"), (na.pk, "나래유통")]
    inactive = Vendor.objects.filter(is_active=False).values("pk")
    assert vendor_id_names(inactive, limit=10) == [(da.pk, "다온식품")]


def test_vendor_record_current_get_finds_only_the_vendors_own_current_record():
    """Another vendor's record and a retired one are answered like a record that does not exist."""
    own, other = VendorFactory(code="1001"), VendorFactory(code="1002")
    record = VendorRecordFactory(vendor=own)
    others = VendorRecordFactory(vendor=other)
    retired = VendorRecordFactory(vendor=own, retired_at=RETIRED)

    assert vendor_record_current_get(vendor=own, record_id=record.pk) == record
    assert vendor_record_current_get(vendor=own, record_id=others.pk) is None
    assert vendor_record_current_get(vendor=own, record_id=retired.pk) is None
    assert vendor_record_current_get(vendor=own, record_id=others.pk + retired.pk + 1) is None


def test_vendor_record_get_finds_any_record_and_raises_for_a_missing_one():
    retired = VendorRecordFactory(vendor=VendorFactory(code="1001"), retired_at=RETIRED)

    assert vendor_record_get(retired.pk) == retired
    with pytest.raises(VendorRecord.DoesNotExist):
        vendor_record_get(retired.pk + 1)


# --- every name, and the table revisions ----------------------------------------------------------------------


def test_vendor_name_rows_include_inactive_vendors_by_code():
    """A former counterpart's name is still another vendor's name: inactive vendors are read too."""
    later = VendorFactory(code="1002", name="베타유통", aliases=["BT유통", "베타"])
    first = VendorFactory(code="1001", name="알파상사", is_active=False)

    assert vendor_name_rows() == [(first.pk, "알파상사", []), (later.pk, "베타유통", ["BT유통", "베타"])]


def test_brand_name_rows_by_name():
    sesame = BrandFactory(name="참깨", aliases=["참깨식품"])
    hanbit = BrandFactory(name="한빛")

    assert brand_name_rows() == [(sesame.pk, "참깨", ["참깨식품"]), (hanbit.pk, "한빛", [])]


def test_brand_carriers_are_the_vendors_of_current_products_only():
    """A retired product carries its brand no longer; a brand nobody carries, or a product without a brand, adds
    nothing."""
    alpha, beta, gamma = VendorFactory(code="1001"), VendorFactory(code="1002"), VendorFactory(code="1003")
    shared, own, gone = BrandFactory(name="참깨"), BrandFactory(name="한빛"), BrandFactory(name="고운들")
    BrandFactory(name="아무도")
    ProductFactory(vendor=alpha, brand=shared, sku="A-1")
    ProductFactory(vendor=alpha, brand=shared, sku="A-2")
    ProductFactory(vendor=beta, brand=shared, sku="B-1")
    ProductFactory(vendor=beta, brand=own, sku="B-2")
    ProductFactory(vendor=gamma, brand=gone, sku="C-1", retired_at=RETIRED)
    ProductFactory(vendor=gamma, brand=None, sku="C-2")

    assert brand_carriers() == {shared.pk: {alpha.pk, beta.pk}, own.pk: {beta.pk}}


def test_product_names_are_read_once_each_retired_ones_included():
    alpha, beta = VendorFactory(code="1001"), VendorFactory(code="1002")
    ProductFactory(vendor=alpha, sku="A-1", name="참깨 간장")
    ProductFactory(vendor=beta, sku="B-1", name="참깨 간장")
    ProductFactory(vendor=beta, sku="B-2", name="생수", retired_at=RETIRED)

    assert sorted(product_names()) == ["생수", "참깨 간장"]


def test_table_revisions_move_when_a_row_is_added_or_saved():
    vendor = VendorFactory(code="1001")
    brand = BrandFactory(name="참깨")
    product = ProductFactory(vendor=vendor, brand=brand, sku="A-1")
    before = (vendor_table_revision(), brand_table_revision(), product_table_revision())
    assert before == (vendor_table_revision(), brand_table_revision(), product_table_revision())
    assert [count for count, _ in before] == [1, 1, 1]

    vendor.save()
    assert vendor_table_revision() != before[0]
    assert (brand_table_revision(), product_table_revision()) == before[1:]
    BrandFactory(name="한빛")
    assert brand_table_revision()[0] == 2
    product.retired_at = RETIRED
    product.save()
    assert product_table_revision() != before[2]
