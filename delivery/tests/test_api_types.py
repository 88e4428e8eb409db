"""Request fields take the JSON type their schema names, and the schema names what the server refuses (found by
schemathesis in tests/test_api_fuzz.py; each case here failed before the fix)."""

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from conversations.tests.factories import RoomFactory
from delivery.models import SendJob
from delivery.tests.factories import StaffUserFactory
from delivery.tests.test_sender_api import CLAIM, _body, _device_client, _job_url, _request_send

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def staff_client(db):
    client = APIClient()
    client.force_login(StaffUserFactory(is_staff=True))
    return client


@pytest.fixture
def room(db):
    return RoomFactory(vendor=None, name="(1234) 대한물산", stable_key="chat-9912")


def _schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def test_a_room_name_that_is_a_number_is_refused():
    _, client = _device_client()
    response = client.post(
        "/api/v1/devices/heartbeat", {"rooms": [{"room_key": "chat-1", "room_name": 0}]}, format="json"
    )
    assert response.status_code == 400


def test_counts_take_integral_numbers_and_refuse_strings(staff_client, room):
    job_id = _request_send(staff_client, _body(room)).json()["job"]["id"]
    _, client = _device_client(rooms=[room])
    client.post(CLAIM, {}, format="json")
    as_string = client.post(_job_url(job_id, "result"), {"outcome": "sent", "observed": {"texts": "1"}}, format="json")
    integral_float = client.post(
        _job_url(job_id, "result"),
        {"outcome": "sent", "observed": {"texts": 1.0, "photos": 1e0}, "resent": {"texts": 0}},
        format="json",
    )
    assert as_string.status_code == 400
    assert integral_float.status_code == 200
    assert SendJob.objects.get(pk=job_id).observed_counts["texts"] == 1


def test_the_send_request_schema_names_what_the_server_refuses():
    schema = _schema()
    items = schema["components"]["schemas"]["SendRequestInputRequest"]["properties"]["items"]
    item = schema["components"]["schemas"]["SendRequestItemInputRequest"]["properties"]
    (header,) = schema["paths"]["/api/v1/send-requests"]["post"]["parameters"]
    assert items["minItems"] == 1
    assert item["content_base64"]["format"] == "byte" and item["content_base64"]["pattern"].startswith("^([A-Za-z")
    assert header["schema"] == {"type": "string", "minLength": 1, "maxLength": 200, "pattern": r"\S"}


def test_a_whitespace_only_room_key_is_refused_and_the_schema_says_so():
    _, client = _device_client()
    response = client.post(
        "/api/v1/devices/heartbeat", {"rooms": [{"room_key": "  ", "room_name": "방"}]}, format="json"
    )
    room_key = _schema()["components"]["schemas"]["DeviceRoomRequest"]["properties"]["room_key"]
    assert response.status_code == 400
    assert room_key["pattern"] == r"^[^\x00]*[^\s\x00][^\x00]*$"


def test_item_content_is_documented_as_any_media_type():
    content = _schema()["paths"]["/api/v1/sender/jobs/{job_id}/items/{index}/content"]["get"]["responses"]["200"]
    assert list(content["content"]) == ["*/*"]


def test_the_upload_schema_says_a_nul_in_the_batch_id_refuses_the_batch():
    batch_id = _schema()["components"]["schemas"]["UploadBatchInputRequest"]["properties"]["batch_id"]
    assert batch_id["pattern"] == r"^[^\x00]*$"
