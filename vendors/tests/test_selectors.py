"""Reads of the vendors app other apps call: one record, looked up for its vendor or by id."""

import datetime

import pytest

from vendors.models import VendorRecord
from vendors.selectors import vendor_record_current_get, vendor_record_get
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import VendorRecordFactory

pytestmark = pytest.mark.django_db

RETIRED = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)


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
