import pytest
from rest_framework.test import APIClient

from delivery.tests.factories import active_device
from vendors.tests.factories import VendorFactory


def uploader_client(name: str = "1층 CS PC") -> APIClient:
    """An API client holding a fresh uploader device's token; the device is on `client.device`."""
    device, token = active_device(role="uploader", name=name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    client.device = device
    return client


@pytest.fixture
def uploader(db):
    return uploader_client()


@pytest.fixture
def vendor(db):
    return VendorFactory(code="1234", name="대한물산", aliases=[])
