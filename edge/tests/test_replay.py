"""`python -m edge replay-dead-letters`: what the uploader set aside goes up again, stored once however often."""

import json
import subprocess
import sys

import pytest

from edge import simulator
from edge.cli import main
from edge.config import UploadConfig
from edge.errors import ExitCode
from edge.replay import replay_parts
from edge.tests.conftest import ROOM_KEY
from edge.tests.helpers import REPO_ROOT
from edge.tests.test_cli import _paired
from edge.uploader import DEAD_LETTER_FILE, UploadCheckpoint

UPLOADS = "/api/v1/uploads"


@pytest.fixture
def env(fake_server, client_db, state_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    _paired(state_dir, fake_server, "upload-token", "uploader")
    return {
        "VCS_EDGE_SERVER_URL": fake_server.url,
        "VCS_EDGE_STATE_DIR": str(state_dir),
        "VCS_EDGE_CLIENT_DB": str(client_db),
    }


def _dead_letter_two_batches(env, fake_server, client_db, state_dir):
    """A real uploader run in which the server refused the first two batches whole (as servers did for one bad
    message) and took the third."""
    for n in range(1, 6):
        simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text=f"메시지 {n}", unread_count=1)
    refused = {"error": "INVALID_BATCH", "items": [{"index": 0, "field": "text", "message": "too long"}]}
    fake_server.fail_next(UPLOADS, 422, body=refused, times=2)
    assert main(["upload"], environ={**env, "VCS_EDGE_BATCH_SIZE": "2"}) == ExitCode.PARTIAL
    assert sorted(fake_server.stored_texts()) == ["메시지 5"]
    lines = (state_dir / DEAD_LETTER_FILE).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    return [json.loads(line) for line in lines]


def test_replay_stores_the_dead_lettered_batches_under_their_own_batch_ids(
    env, fake_server, client_db, state_dir, caplog
):
    records = _dead_letter_two_batches(env, fake_server, client_db, state_dir)
    checkpoint = UploadCheckpoint(state_dir).load()
    fake_server.upload_posts.clear()

    with caplog.at_level("INFO", logger="edge"):
        assert main(["replay-dead-letters"], environ=env) == ExitCode.OK

    assert [post["batch_id"] for post in fake_server.upload_posts] == [record["batch_id"] for record in records]
    assert sorted(fake_server.stored_texts()) == [f"메시지 {n}" for n in range(1, 6)]
    summary = caplog.records[-1].getMessage()
    assert "2 dead-lettered batches; 2 posted (0 answered from an earlier replay), 4 messages: stored 4" in summary
    assert UploadCheckpoint(state_dir).load() == checkpoint  # the uploader's own state is not touched
    assert len((state_dir / DEAD_LETTER_FILE).read_text(encoding="utf-8").splitlines()) == 2  # the file stays


def test_replaying_twice_stores_once(env, fake_server, client_db, state_dir, caplog):
    _dead_letter_two_batches(env, fake_server, client_db, state_dir)
    assert main(["replay-dead-letters"], environ=env) == ExitCode.OK
    with caplog.at_level("INFO", logger="edge"):
        assert main(["replay-dead-letters"], environ=env) == ExitCode.OK
    assert len(fake_server.stored) == 5
    assert "2 posted (2 answered from an earlier replay)" in caplog.records[-1].getMessage()


def test_a_batch_too_big_for_the_server_is_replayed_in_parts(env, fake_server, client_db, state_dir):
    """A 413 record is cut by the config's limits; each part has a stable id of its own."""
    for n in range(1, 6):
        simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text=f"큰 배치 {n}", unread_count=1)
    fake_server.upload_limit_messages = 2
    assert main(["upload"], environ={**env, "VCS_EDGE_BATCH_SIZE": "5"}) == ExitCode.PARTIAL
    (record,) = [json.loads(line) for line in (state_dir / DEAD_LETTER_FILE).read_text(encoding="utf-8").splitlines()]
    assert record["status"] == 413

    assert main(["replay-dead-letters"], environ={**env, "VCS_EDGE_BATCH_SIZE": "2"}) == ExitCode.OK
    posted = [post["batch_id"] for post in fake_server.upload_posts[1:]]
    assert posted == [f"{record['batch_id']}/{k}of3" for k in (1, 2, 3)]
    assert sorted(fake_server.stored_texts()) == [f"큰 배치 {n}" for n in range(1, 6)]


def test_parts_respect_the_byte_limit_too():
    messages = [{"text": "가" * 100, "n": n} for n in range(4)]
    parts = replay_parts({"batch_id": "pc:1-4", "messages": messages}, UploadConfig(batch_size=10, max_batch_bytes=700))
    assert [len(part) for _, part in parts] == [2, 2]
    assert [batch_id for batch_id, _ in parts] == ["pc:1-4/1of2", "pc:1-4/2of2"]


def test_a_batch_refused_again_and_a_damaged_line_exit_5_and_the_rest_goes_up(env, fake_server, client_db, state_dir):
    records = _dead_letter_two_batches(env, fake_server, client_db, state_dir)
    with (state_dir / DEAD_LETTER_FILE).open("a", encoding="utf-8") as handle:
        handle.write('{"batch_id": "torn", "messa\n')
    fake_server.fail_next(UPLOADS, 422, body={"error": "INVALID_BATCH", "items": []})
    assert main(["replay-dead-letters"], environ=env) == ExitCode.PARTIAL
    assert fake_server.batches.keys() >= {records[1]["batch_id"]}
    assert records[0]["batch_id"] not in fake_server.batches


def test_a_server_outage_stops_the_replay_with_4(env, fake_server, client_db, state_dir):
    _dead_letter_two_batches(env, fake_server, client_db, state_dir)
    fake_server.fail_next(UPLOADS, 503)
    assert main(["replay-dead-letters"], environ=env) == ExitCode.UNAVAILABLE
    assert main(["replay-dead-letters"], environ=env) == ExitCode.OK


def test_without_dead_letters_there_is_nothing_to_do(env, fake_server):
    assert main(["replay-dead-letters"], environ=env) == ExitCode.OK
    assert fake_server.upload_posts == []


def test_the_command_has_korean_help():
    result = subprocess.run(
        [sys.executable, "-m", "edge", "replay-dead-letters", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    help_text = " ".join(result.stdout.split())  # argparse wraps lines
    assert "다시 보냅니다" in help_text
    assert "한 번만 저장됩니다" in help_text
