"""Schemathesis on the project's own OpenAPI schema against the live test server (PostgreSQL, Redis): every
operation, with the credentials it documents (device tokens of both roles, a staff session with its CSRF token),
answers no 5xx and only responses its schema describes (status, content type, headers, body).

Bounded: a fixed number of generated requests per operation and no stateful phase, so the whole file takes about
a minute on a shared machine.
"""

import pytest
import requests
import schemathesis
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection

from delivery.models import Device
from delivery.tests.factories import StaffUserFactory, active_device

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

config = schemathesis.Config.from_dict({"phases": {"stateful": {"enabled": False}}})
schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True), config=config)


class Credentials:
    """What each operation is called with: the token of the device role it serves, or the staff session."""

    def __init__(self, base_url: str):
        _, self.uploader_token = active_device(role=Device.Role.UPLOADER)
        _, self.sender_token = active_device(role=Device.Role.SENDER)
        staff = StaffUserFactory(is_superuser=True)
        browser = Client()
        browser.force_login(staff)
        self.session = requests.Session()
        self.session.cookies.set("sessionid", browser.cookies["sessionid"].value)
        self.csrf_token = "x" * 32
        self.session.cookies.set("csrftoken", self.csrf_token)
        self.base_url = base_url

    def headers(self, path: str) -> dict:
        if path == "/api/v1/send-requests":
            return {"X-CSRFToken": self.csrf_token, "Referer": self.base_url + path}
        if path.startswith("/api/v1/sender/"):
            return {"Authorization": f"Bearer {self.sender_token}"}
        return {"Authorization": f"Bearer {self.uploader_token}"}

    def after(self, path: str, response) -> None:
        """A rotated token replaces the old one, as the edge programs do."""
        rotated = path == "/api/v1/devices/token/rotate" and response.request.method == "POST"
        if rotated and response.status_code == 200:
            self.uploader_token = response.json()["token"]


UPLOADS = "/api/v1/uploads"


def upload_refuses_messages_one_by_one(ctx, response, case):
    """Uploads refuse a bad message on its own, not its batch: a body the schema refuses may be answered 200,
    but then with at least one message refused. An envelope or message the server took although the schema
    refuses it is still a failure."""
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    stored = response.request.method == "POST" and response.status_code == 200
    if negative and stored and response.json()["rejected"] == 0:
        raise AssertionError(f"A body the schema refuses was stored whole: {case.body!r}")


@pytest.fixture
def credentials(live_server):
    return Credentials(live_server.url)


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_every_operation_answers_without_5xx_and_as_its_schema_says(case, live_server, credentials):
    per_message = case.operation.path == UPLOADS
    response = case.call_and_validate(
        base_url=live_server.url,
        session=credentials.session,
        headers=credentials.headers(case.operation.path),
        excluded_checks=[negative_data_rejection] if per_message else None,
        additional_checks=[upload_refuses_messages_one_by_one] if per_message else None,
        timeout=30,
    )
    credentials.after(case.operation.path, response)
