"""Schemathesis on the project's own OpenAPI schema against the live test server (PostgreSQL, Redis): every
operation, with the credentials it documents (device tokens of both roles, a staff session with its CSRF token),
answers no 5xx and only responses its schema describes (status, content type, headers, body).

Bounded: a fixed number of generated requests per operation and no stateful phase. Requests the schema allows are
pointed at a real send job and room, so the job endpoints answer more than 404; the rate limits are raised so the
generated requests reach the views instead of stopping at 429 after a few.
"""

import pytest
import schemathesis
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from conversations.tests.factories import RoomFactory
from delivery.models import Device
from delivery.services import device_heartbeat, send_job_claim, send_request_submit
from delivery.tests.factories import StaffUserFactory, active_device

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

config = schemathesis.Config.from_dict({"phases": {"stateful": {"enabled": False}}})
schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True), config=config)

UPLOADS = "/api/v1/uploads"
SEND_REQUESTS = "/api/v1/send-requests"
ROTATE = "/api/v1/devices/token/rotate"
CSRF_TOKEN = "fuzzcsrf" * 4


class Credentials:
    """What each operation is called with: the token of the device role it serves, or the staff session."""

    def __init__(self, base_url: str):
        _, self.uploader_token = active_device(role=Device.Role.UPLOADER)
        sender, self.sender_token = active_device(role=Device.Role.SENDER)
        browser = Client()
        browser.force_login(StaffUserFactory(is_superuser=True))
        self.session_id = browser.cookies["sessionid"].value
        self.base_url = base_url
        self.room = RoomFactory(stable_key="chat-fuzz", name="(1234) 대한물산")
        device_heartbeat(device=sender, rooms=[{"room_key": self.room.stable_key, "room_name": self.room.name}])
        send_request_submit(
            room=self.room,
            items=[
                {"kind": "text", "text": "단가표 보내드립니다."},
                {"kind": "file", "name": "단가.pdf", "content": b"%PDF"},
            ],
            idempotency_key="fuzz-job",
            actor="agent",
        )
        self.job = send_job_claim(device=sender)

    def headers(self, path: str) -> dict:
        if path == SEND_REQUESTS:
            # Schemathesis writes its own Cookie header for the documented session cookie: ours replaces it.
            return {
                "Cookie": f"sessionid={self.session_id}; csrftoken={CSRF_TOKEN}",
                "X-CSRFToken": CSRF_TOKEN,
                "Referer": self.base_url + path,
            }
        if path.startswith("/api/v1/sender/"):
            return {"Authorization": f"Bearer {self.sender_token}"}
        return {"Authorization": f"Bearer {self.uploader_token}"}

    def steer(self, case) -> None:
        """A request the schema allows is sent to the real job (its items 0 and 1) and room."""
        if case.meta is None or case.meta.generation.mode.is_negative:
            return
        parameters = case.path_parameters or {}
        if "job_id" in parameters:
            parameters["job_id"] = self.job.pk
        if "index" in parameters:
            parameters["index"] = parameters["index"] % 2 if isinstance(parameters["index"], int) else 0
        if case.operation.path == SEND_REQUESTS and isinstance(case.body, dict):
            case.body["room_key"] = self.room.stable_key
            case.body.pop("question_id", None)

    def after(self, path: str, response) -> None:
        """A rotated token replaces the old one, as the edge programs do."""
        if path == ROTATE and response.request.method == "POST" and response.status_code == 200:
            self.uploader_token = response.json()["token"]


def upload_refuses_messages_one_by_one(ctx, response, case):
    """Uploads refuse a bad message on its own, not its batch: a body the schema refuses may be answered 200,
    but then with at least one message refused. An envelope or message the server took although the schema
    refuses it is still a failure."""
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    stored = response.request.method == "POST" and response.status_code == 200
    if negative and stored and response.json()["rejected"] == 0:
        raise AssertionError(f"A body the schema refuses was stored whole: {case.body!r}")


# Refusals of a schema-valid request that no schema can express: a pairing code the server never issued, an
# idempotency key used before with another body, an item the send rules refuse (a photo that is not an image, a
# text item without text: reported with the item's index, field and message).
BUSINESS_REFUSALS = {
    "/api/v1/devices/pair": {"PAIRING_CODE_INVALID"},
    SEND_REQUESTS: {"IDEMPOTENCY_KEY_REUSED", "INVALID_SEND_REQUEST:item"},
}


def _refusal_code(body: dict) -> str:
    detail = body.get("detail")
    if isinstance(detail, dict) and {"index", "field", "message"} <= set(detail):
        return f"{body.get('error')}:item"
    return str(body.get("error"))


def refused_only_for_a_business_rule(ctx, response, case):
    """Where a schema-valid request can be refused for what the schema cannot know, that refusal has its own
    code, and no other 400 or 422 happens (a lax schema would show up as one)."""
    positive = case.meta is not None and not case.meta.generation.mode.is_negative
    if positive and response.request.method == case.method.upper() and response.status_code in (400, 422):
        code = _refusal_code(response.json())
        if code not in BUSINESS_REFUSALS[case.operation.path]:
            raise AssertionError(f"A schema-valid request was refused with {code}: {response.text[:300]}")


@pytest.fixture
def credentials(live_server, settings):
    settings.UPLOAD_RATE_PER_MINUTE = 100_000
    settings.PAIRING_FAILURES_PER_ADDRESS = 100_000
    settings.PAIRING_FAILURES_GLOBAL = 100_000
    return Credentials(live_server.url)


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
def test_every_operation_answers_without_5xx_and_as_its_schema_says(case, live_server, credentials):
    credentials.steer(case)
    excluded, additional = [], []
    if case.operation.path == UPLOADS:
        excluded, additional = [negative_data_rejection], [upload_refuses_messages_one_by_one]
    if case.operation.path in BUSINESS_REFUSALS:
        excluded, additional = [positive_data_acceptance], [refused_only_for_a_business_rule]
    response = case.call_and_validate(
        base_url=live_server.url,
        headers=credentials.headers(case.operation.path),
        excluded_checks=excluded,
        additional_checks=additional,
        timeout=30,
    )
    credentials.after(case.operation.path, response)
