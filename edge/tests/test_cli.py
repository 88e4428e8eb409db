import argparse
import json
import re
import shlex
import stat
import subprocess
import sys

import pytest

from edge import simulator
from edge.cli import DEVICE_FILE, _parser, main
from edge.errors import ExitCode
from edge.statefiles import RunLock, atomic_write_json
from edge.tests.conftest import ROOM_KEY, ROOM_NAME
from edge.tests.helpers import REPO_ROOT, FakeClock, FakeJob, simulator_command


@pytest.fixture
def env(fake_server, client_db, state_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # never read a real ~/.vcs-edge
    return {
        "VCS_EDGE_SERVER_URL": fake_server.url,
        "VCS_EDGE_STATE_DIR": str(state_dir),
        "VCS_EDGE_CLIENT_DB": str(client_db),
    }


def _paired(state_dir, fake_server, token, role):
    atomic_write_json(
        state_dir / DEVICE_FILE,
        {
            "device_id": 3,
            "role": role,
            "name": "1층 CS PC",
            "client_name": "cs-pc-03",
            "token": token,
            "server_url": fake_server.url,
        },
    )


def test_pair_stores_the_token_privately(env, fake_server, state_dir):
    """A redeemed code leaves device.json (0600) with the token, role and the name this machine reported."""
    fake_server.pairing_codes["K7M2QX"] = {
        "device_id": 12,
        "token": "new-token",
        "role": "uploader",
        "name": "1층 CS PC",
    }
    code = main(["pair", "k7m2qx ", "--name", "cs-pc-03"], environ=env)

    assert code == ExitCode.OK
    assert fake_server.calls[-1][2] == {"code": "K7M2QX", "name": "cs-pc-03"}
    stored = json.loads((state_dir / DEVICE_FILE).read_text(encoding="utf-8"))
    assert (stored["token"], stored["device_id"], stored["role"], stored["client_name"]) == (
        "new-token",
        12,
        "uploader",
        "cs-pc-03",
    )
    assert stat.S_IMODE((state_dir / DEVICE_FILE).stat().st_mode) == 0o600


def test_a_refused_pairing_code_exits_3_and_stores_nothing(env, state_dir):
    assert main(["pair", "ZZZZZZ"], environ=env) == ExitCode.AUTH_REFUSED
    assert not (state_dir / DEVICE_FILE).exists()


def test_pairing_again_needs_force(env, fake_server, state_dir):
    """An existing pairing is not replaced by accident."""
    _paired(state_dir, fake_server, "upload-token", "uploader")
    fake_server.pairing_codes["K7M2QX"] = {"device_id": 13, "token": "t2", "role": "sender", "name": "Mac"}
    assert main(["pair", "K7M2QX"], environ=env) == ExitCode.CONFIG_ERROR
    assert main(["pair", "K7M2QX", "--force"], environ=env) == ExitCode.OK
    assert json.loads((state_dir / DEVICE_FILE).read_text(encoding="utf-8"))["token"] == "t2"


def test_upload_once_uploads_and_exits_0(env, fake_server, client_db, state_dir):
    """The batch_id prefix is the name the device reported at pairing."""
    _paired(state_dir, fake_server, "upload-token", "uploader")
    log_id = simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="안녕하세요")
    assert main(["upload", "--once"], environ=env, clock=FakeClock()) == ExitCode.OK
    assert fake_server.upload_posts[0]["batch_id"] == f"cs-pc-03:{log_id:09d}-{log_id:09d}"


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (503, ExitCode.UNAVAILABLE),
        (429, ExitCode.UNAVAILABLE),
        (422, ExitCode.PARTIAL),
        (413, ExitCode.PARTIAL),
        (401, ExitCode.AUTH_REFUSED),
        (404, ExitCode.UNEXPECTED_RESPONSE),
    ],
)
def test_upload_exit_codes(env, fake_server, client_db, state_dir, status, expected):
    _paired(state_dir, fake_server, "upload-token", "uploader")
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="안녕하세요")
    fake_server.fail_next("/api/v1/uploads", status)
    assert main(["upload"], environ=env, clock=FakeClock()) == expected


def test_an_unreachable_server_exits_4(env, fake_server, state_dir):
    _paired(state_dir, fake_server, "upload-token", "uploader")
    env["VCS_EDGE_SERVER_URL"] = "http://127.0.0.1:9"
    assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.UNAVAILABLE


def test_without_pairing_or_client_db_it_is_a_config_error(env, fake_server, state_dir, tmp_path):
    assert main(["upload"], environ=env) == ExitCode.CONFIG_ERROR
    _paired(state_dir, fake_server, "upload-token", "uploader")
    env["VCS_EDGE_CLIENT_DB"] = str(tmp_path / "missing.db")
    assert main(["upload"], environ=env) == ExitCode.CONFIG_ERROR


def test_a_damaged_checkpoint_exits_6(env, fake_server, state_dir):
    _paired(state_dir, fake_server, "upload-token", "uploader")
    (state_dir / "upload-checkpoint.json").write_text("{", encoding="utf-8")
    assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.LOCAL_STATE_ERROR


def test_a_second_concurrent_run_exits_8(env, fake_server, state_dir):
    _paired(state_dir, fake_server, "upload-token", "uploader")
    with RunLock(state_dir / "upload.lock"):
        assert main(["upload"], environ=env, clock=FakeClock()) == ExitCode.ALREADY_RUNNING


def test_upload_loop_keeps_going_through_outages_and_honours_retry_after(env, fake_server, client_db, state_dir):
    """--loop: a 429 makes the next pass wait Retry-After (longer than the interval); messages that arrive
    between passes are uploaded; Ctrl-C ends the loop with 0."""
    _paired(state_dir, fake_server, "upload-token", "uploader")
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="첫째")
    fake_server.fail_next("/api/v1/uploads", 429, headers={"Retry-After": "45"})
    passes = []

    def between_passes(now):
        passes.append(now)
        if len(passes) == 2:
            simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="둘째")
        if len(passes) == 4:
            raise KeyboardInterrupt

    clock = FakeClock(on_sleep=between_passes)
    assert main(["upload", "--loop", "5"], environ=env, clock=clock) == ExitCode.OK
    assert clock.slept[0] == 45
    assert sorted(fake_server.stored_texts()) == ["둘째", "첫째"]


def test_a_refused_token_ends_the_loop_with_3(env, fake_server, state_dir):
    _paired(state_dir, fake_server, "revoked", "uploader")
    assert main(["upload", "--loop", "5"], environ=env, clock=FakeClock()) == ExitCode.AUTH_REFUSED


def test_send_once_delivers_a_job_with_the_configured_command(
    env, fake_server, client_db, state_dir, subprocess_env, monkeypatch
):
    """`send --once` with the simulator as the send tool: claimed, sent, counted, reported."""
    _paired(state_dir, fake_server, "send-token", "sender")
    fake_server.add_job(
        FakeJob(id=7, room_key=ROOM_KEY, room_name=ROOM_NAME, items=[{"index": 0, "kind": "text", "text": "안내"}])
    )
    env["VCS_EDGE_SEND_COMMAND"] = shlex.join(simulator_command(client_db, "--text-file", "{file}"))
    monkeypatch.setenv("PYTHONPATH", subprocess_env["PYTHONPATH"])  # the send command inherits it

    assert main(["send", "--once"], environ=env, clock=FakeClock()) == ExitCode.OK
    assert fake_server.results[7]["outcome"] == "sent"


def test_send_without_a_send_command_is_a_config_error(env, fake_server, state_dir):
    _paired(state_dir, fake_server, "send-token", "sender")
    assert main(["send"], environ=env) == ExitCode.CONFIG_ERROR


def test_the_package_runs_without_django():
    """The edge programs run on staff machines that have no Django: nothing here may import it."""
    script = (
        "import sys, edge.cli, edge.simulator, edge.sender, edge.uploader; "
        "assert not [m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework')], 'django imported'"
    )
    checked = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, timeout=60)
    assert checked.returncode == 0, checked.stderr.decode()
    helped = subprocess.run([sys.executable, "-m", "edge", "--help"], cwd=REPO_ROOT, capture_output=True, timeout=60)
    assert helped.returncode == 0
    assert "종료 코드" in helped.stdout.decode()


HANGUL = re.compile(r"[\uac00-\ud7a3]")
COMMANDS = [[], ["pair"], ["rotate-token"], ["upload"], ["send"], ["replay-dead-letters"]]


def _names(parser: argparse.ArgumentParser) -> set[str]:
    """Option strings, metavars and command names: the only words a help line may hold without Hangul."""
    names = {"[-h]", "..."}
    for action in parser._actions:
        names.update(action.option_strings)
        names.update(str(item) for item in (action.metavar, action.dest) if item)
        names.update(getattr(action, "choices", None) or ())
    return names


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: " ".join(command) or "edge")
def test_every_help_line_is_korean(command, capsys, monkeypatch):
    """Staff read this help: every line of `python -m edge [command] --help` has Hangul, except lines that hold
    only option names, metavars and command names."""
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    parser = _parser()
    names = _names(parser)
    for subparser in parser._subparsers._group_actions[0].choices.values():
        names |= _names(subparser)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert lines[0].startswith("사용법: ")
    for line in lines:
        words = {word.strip(",") for word in line.split()}
        assert HANGUL.search(line) or words <= names, f"help line without Korean: {line!r}"
