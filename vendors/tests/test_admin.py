"""Vendors admin: search by code, name and alias; edits through the service."""

import pytest
from django.urls import reverse

from monitoring.models import AuditEvent
from vendors.models import Vendor
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def vendors():
    VendorFactory(code="1001", name="대한물산", aliases=["대한 본사", "DH Trading"])
    VendorFactory(code="1234", name="가온상사", aliases=[])
    VendorFactory(code="2001", name="한빛유통", aliases=[], is_active=False)


def changelist_codes(admin_client, **params) -> list[str]:
    response = admin_client.get(reverse("admin:vendors_vendor_changelist"), params)
    assert response.status_code == 200
    return [vendor.code for vendor in response.context["cl"].result_list]


@pytest.mark.parametrize(
    ("term", "codes"),
    [
        ("1234", ["1234"]),
        ("가온", ["1234"]),
        ("대한본사", ["1001"]),  # an alias, matched normalised (its stored form has a space)
        ("dh trading", ["1001"]),  # an alias, any case
        ("유통", ["2001"]),
    ],
)
def test_search_finds_vendors_by_code_name_and_alias(admin_client, vendors, term, codes):
    """The vendor list search covers code, name and aliases (a JSON list)."""
    assert changelist_codes(admin_client, q=term) == codes


def test_alias_search_keeps_the_active_filter(admin_client, vendors):
    """An alias hit is still subject to the list filter."""
    assert changelist_codes(admin_client, q="대한본사", is_active__exact="0") == []


def test_adding_a_vendor_goes_through_the_service(admin_client):
    """The add form takes `|`-separated aliases, stores a list and writes an audit row naming the staff user."""
    response = admin_client.post(
        reverse("admin:vendors_vendor_add"),
        {"code": "３００１", "name": " 세림식품 ", "aliases": "세림| 세림 본점 |세림", "is_active": "on"},
    )

    assert response.status_code == 302
    vendor = Vendor.objects.get()
    assert (vendor.code, vendor.name, vendor.aliases) == ("3001", "세림식품", ["세림", "세림 본점"])
    audit = AuditEvent.objects.get(action="vendor.create")
    assert audit.actor_kind == "staff"
    assert audit.target_id == str(vendor.pk)


def test_invalid_vendor_is_refused_with_a_form_error(admin_client):
    """A name that is only a corporate mark is a form error, not a stored vendor."""
    response = admin_client.post(reverse("admin:vendors_vendor_add"), {"code": "3001", "name": "(주)", "aliases": ""})

    assert response.status_code == 200
    assert "벤더명이 비어 있습니다." in response.content.decode()
    assert not Vendor.objects.exists()


def test_vendors_cannot_be_deleted_only_switched_off(admin_client, vendors):
    """Rooms and records point at vendors, so the admin offers no delete."""
    vendor = Vendor.objects.get(code="1001")
    response = admin_client.post(reverse("admin:vendors_vendor_delete", args=[vendor.pk]), {"post": "yes"})

    assert response.status_code == 403
    assert Vendor.objects.filter(pk=vendor.pk).exists()
