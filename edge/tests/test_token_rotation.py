"""Token rotation on the edge: `python -m edge rotate-token`, and upload / send passes rotating when the server
says a rotation is due; crash-safe at every step (the server keeps the old token until the new one is used)."""

import json

import pytest

from edge import simulator
from edge.api import EdgeApi
from edge.cli import DEVICE_FILE, main
from edge.errors import ExitCode
from edge.statefiles import atomic_write_json
from edge.tests.conftest import ROOM_KEY
from edge.tests.helpers import ANSWER_LOST, FakeClock, SimulatedCrash
from edge.token_rotation import TokenRotator


@pytest.fixture
def env(fake_server, client_db, state_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    return {
        "VCS_EDGE_SERVER_URL": fake_server.url,
        "VCS_EDGE_STATE_DIR": str(state_dir),
        "VCS_EDGE_CLIENT_DB": str(client_db),
    }


@pytest.fixture
def paired_uploader(state_dir, fake_server):
    atomic_write_json(
        state_dir / DEVICE_FILE,
        {"device_id": 3, "role": "uploader", "name": "1층 CS PC", "client_name": "cs-pc-03", "token": "upload-token",
         "server_url": fake_server.url},
    )  # fmt: skip
    return state_dir / DEVICE_FILE


def _stored(device_file) -> dict:
    return json.loads(device_file.read_text(encoding="utf-8"))


def test_rotate_token_stores_the_new_token_and_the_server_switches_to_it(env, fake_server, paired_uploader):
    fake_server.token_expiry["rotated-token-1"] = "2027-03-01T10:00:00+09:00"

    assert main(["rotate-token"], environ=env) == ExitCode.OK

    stored = _stored(paired_uploader)
    assert stored["token"] == "rotated-token-1"
    assert stored["token_expires_at"] == "2027-03-01T10:00:00+09:00"
    assert stored["device_id"] == 3 and stored["role"] == "uploader"
    assert "upload-token" not in fake_server.tokens  # the first use with the new token made it the only one
    assert fake_server.tokens["rotated-token-1"] == "uploader"


def test_an_upload_pass_rotates_when_the_server_asks_and_uploads_with_the_new_token(
    env, fake_server, client_db, paired_uploader
):
    fake_server.rotation_due.add("upload-token")
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="안녕하세요")

    assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.OK

    assert _stored(paired_uploader)["token"] == "rotated-token-1"
    assert fake_server.stored_texts() == ["안녕하세요"]
    assert set(fake_server.tokens) == {"rotated-token-1", "send-token"}


def test_a_pass_without_a_due_rotation_keeps_the_token(env, fake_server, paired_uploader):
    assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.OK
    assert _stored(paired_uploader)["token"] == "upload-token"
    assert fake_server.rotations == 0


def test_a_lost_rotation_answer_keeps_the_old_token_working_and_the_next_run_rotates(env, fake_server, paired_uploader):
    """The server issued a token the device never received: the device still works with the old one, and the
    next check rotates again (the unused token is replaced)."""
    fake_server.rotation_due.add("upload-token")
    fake_server.fail_next("/api/v1/devices/token/rotate", ANSWER_LOST)

    assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.OK
    assert _stored(paired_uploader)["token"] == "upload-token"
    assert "rotated-token-1" in fake_server.pending_tokens

    assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.OK
    assert _stored(paired_uploader)["token"] == "rotated-token-2"
    assert set(fake_server.pending_tokens) == set()
    assert "upload-token" not in fake_server.tokens


def test_killed_after_storing_the_new_token_the_next_run_completes_the_switch(fake_server, paired_uploader, env):
    """Killed between writing device.json and the first call with the new token: the next run sends the new
    token, which the server then makes the only one."""

    class KilledAfterStoring(EdgeApi):
        def use_token(self, token):
            raise SimulatedCrash("killed after device.json was written")

    with KilledAfterStoring(server_url=fake_server.url, token="upload-token") as api, pytest.raises(SimulatedCrash):
        TokenRotator(api=api, device_file=paired_uploader, clock=FakeClock()).rotate()
    assert _stored(paired_uploader)["token"] == "rotated-token-1"
    assert "upload-token" in fake_server.tokens

    assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.OK
    assert "upload-token" not in fake_server.tokens
    assert fake_server.tokens["rotated-token-1"] == "uploader"


def test_a_loop_asks_at_most_once_an_hour(fake_server, paired_uploader):
    clock = FakeClock()
    with EdgeApi(server_url=fake_server.url, token="upload-token") as api:
        rotator = TokenRotator(api=api, device_file=paired_uploader, clock=clock)
        rotator.rotate_if_due()
        clock.advance(3599)
        rotator.rotate_if_due()
        clock.advance(1)
        rotator.rotate_if_due()
    assert [path for _, path, _ in fake_server.calls].count("/api/v1/devices/token") == 2


def test_a_server_without_the_token_endpoint_does_not_stop_the_pass(env, fake_server, client_db, paired_uploader):
    """An older server answers 404: the check is skipped with a warning and the upload goes on."""
    fake_server.fail_next("/api/v1/devices/token", 404, body={"error": "NOT_FOUND"})
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="안녕하세요")

    assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.OK
    assert fake_server.stored_texts() == ["안녕하세요"]


def test_a_token_from_the_configuration_is_not_rotated(env, fake_server, paired_uploader):
    fake_server.rotation_due.add("upload-token")
    env = {**env, "VCS_EDGE_TOKEN": "upload-token"}

    assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.OK
    assert main(["rotate-token"], environ=env) == ExitCode.CONFIG_ERROR
    assert fake_server.rotations == 0
