"""End to end: pairing and token rotation of the real edge CLI against the live test server (PostgreSQL, Redis)."""

import json

import pytest

from conversations.models import Message
from delivery.models import Device
from delivery.services import (
    device_authenticate,
    device_pairing_code_issue,
    device_register,
    device_token_rotation_request,
)
from delivery.tests.factories import StaffUserFactory
from edge import simulator
from edge.cli import DEVICE_FILE, main
from edge.errors import ExitCode
from edge.tests.helpers import FakeClock
from monitoring.models import AuditEvent

pytestmark = pytest.mark.django_db(transaction=True)

ROOM_KEY = "chat-9912"


@pytest.fixture
def edge_env(live_server, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    client_db = simulator.create_client_db(tmp_path / "client.db", rooms=[(ROOM_KEY, "(1234) 대한물산")])
    return {
        "VCS_EDGE_SERVER_URL": live_server.url,
        "VCS_EDGE_STATE_DIR": str(tmp_path / "state"),
        "VCS_EDGE_CLIENT_DB": str(client_db),
    }


def test_a_paired_uploader_rotates_its_token_when_staff_ask_and_keeps_uploading(edge_env, settings, tmp_path):
    """Pair with a code, staff request a rotation, the next upload run rotates: the stored token is new, the old
    one is refused, the new one has a fresh expiry, and the messages still arrive."""
    settings.DEVICE_TOKEN_TTL_DAYS = 90
    staff = StaffUserFactory()
    device = device_register(name="1층 CS PC", role=Device.Role.UPLOADER, actor=staff)
    code = device_pairing_code_issue(device=device, actor=staff)
    assert main(["pair", code, "--name", "cs-pc-03"], environ=edge_env) == ExitCode.OK
    device_file = tmp_path / "state" / DEVICE_FILE
    old_token = json.loads(device_file.read_text(encoding="utf-8"))["token"]

    device_token_rotation_request(device=device, actor=staff)
    simulator.append_message(edge_env["VCS_EDGE_CLIENT_DB"], room_key=ROOM_KEY, sender="김대리", text="안녕하세요")
    assert main(["upload"], environ=edge_env, clock=FakeClock()) == ExitCode.OK

    stored = json.loads(device_file.read_text(encoding="utf-8"))
    assert stored["token"] != old_token
    assert device_authenticate(old_token) is None
    assert device_authenticate(stored["token"]) == device
    device.refresh_from_db()
    assert stored["token_expires_at"] is not None and device.token_rotation_requested_at is None
    assert Message.objects.filter(room__stable_key=ROOM_KEY, text="안녕하세요").count() == 1
    actions = list(
        AuditEvent.objects.filter(target_type="delivery.device", target_id=str(device.pk))
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions[-3:] == ["device.token_rotation_request", "device.token_rotation_begin", "device.token_rotate"]


def test_rotate_token_by_hand_against_the_server(edge_env, tmp_path):
    staff = StaffUserFactory()
    device = device_register(name="2층 발송 Mac", role=Device.Role.SENDER, actor=staff)
    code = device_pairing_code_issue(device=device, actor=staff)
    assert main(["pair", code], environ=edge_env) == ExitCode.OK
    device_file = tmp_path / "state" / DEVICE_FILE
    old_token = json.loads(device_file.read_text(encoding="utf-8"))["token"]

    assert main(["rotate-token"], environ=edge_env) == ExitCode.OK

    new_token = json.loads(device_file.read_text(encoding="utf-8"))["token"]
    assert new_token != old_token
    assert device_authenticate(new_token) == device
    assert device_authenticate(old_token) is None
