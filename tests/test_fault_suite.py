"""Fault suite with real processes for the edge and Redis (the agent's worker kills are in
agent/tests/test_run_faults.py):

- `python -m edge upload` killed with SIGKILL at random moments while it uploads 2,000 messages to the live test
  server, then run until done: every message stored exactly once.
- `python -m edge send` killed with SIGKILL during a slow send (its send tool lives on) and restarted: one copy.
- A separate redis-server (started here on a free port, never the shared one) restarted in the middle of a resend
  storm: the storm still leaves one copy.

Each case asserts its figures as one dict; docs/reliability.md has the table and the commands.
"""

import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest
import redis
from django.conf import settings as django_settings

from conversations.models import Message, Room, UploadBatch
from conversations.tests.conftest import uploader_client
from conversations.tests.factories import RoomFactory
from conversations.tests.test_uploads import T0, message, post
from delivery.models import Device, SendJob
from delivery.services import send_request_submit
from delivery.tests.factories import active_device
from edge import simulator
from edge.tests.helpers import simulator_command
from edge.uploader import UploadCheckpoint
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.slow

ROOM_KEY = "chat-7001"
ROOM_NAME = "(1234) 대한물산"
REPLY = "안녕하세요. 요청하신 단가표 보내드립니다."


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _client_db_with(path, count: int):
    """A client DB holding `count` distinct messages one second apart (no resend storm among them)."""
    simulator.create_client_db(path, rooms=[(ROOM_KEY, ROOM_NAME)])
    start = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
    with simulator.connect(path) as connection:
        chat_id = connection.execute("SELECT id FROM chat_rooms WHERE chat_key = ?", (ROOM_KEY,)).fetchone()[0]
        for n in range(count):
            simulator._insert_log(
                connection, chat_id, "김대리", False, f"문의 {n}번", "text", 1, start + timedelta(seconds=n)
            )
    return path


@pytest.mark.django_db(transaction=True)
def test_an_uploader_killed_at_random_moments_over_2000_messages_stores_every_message_exactly_once(
    live_server, tmp_path
):
    client_db = _client_db_with(tmp_path / "client.db", 2000)
    state_dir = tmp_path / "state"
    _, token = active_device(role=Device.Role.UPLOADER)
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "PYTHONPATH": str(django_settings.BASE_DIR),
        "VCS_EDGE_SERVER_URL": live_server.url,
        "VCS_EDGE_TOKEN": token,
        "VCS_EDGE_STATE_DIR": str(state_dir),
        "VCS_EDGE_CLIENT_DB": str(client_db),
        "VCS_EDGE_DEVICE_NAME": "cs-pc-07",
        "VCS_EDGE_BATCH_SIZE": "20",
    }
    chance = random.Random(2000)  # the same kill moments on every run
    last_log_id = 2000
    kills, runs, stored_at_kills = 0, 0, []
    while UploadCheckpoint(state_dir).load().last_log_id < last_log_id and runs < 60:
        runs += 1
        uploader = subprocess.Popen(
            [sys.executable, "-m", "edge", "upload"],
            cwd=django_settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if kills < 7:
            # Killed a random moment after its first new batch was stored, however long start-up took: in the
            # middle of a batch, between a stored batch and its checkpoint, or between two batches.
            stored_before = Message.objects.count()
            while uploader.poll() is None and Message.objects.count() == stored_before:
                time.sleep(0.02)
            try:
                uploader.wait(timeout=chance.uniform(0, 0.3))
            except subprocess.TimeoutExpired:
                os.kill(uploader.pid, signal.SIGKILL)
                kills += 1
                stored_at_kills.append(Message.objects.count())
        uploader.wait(timeout=300)

    with simulator.connect(client_db) as connection:
        client_ids = {row[0] for row in connection.execute("SELECT client_log_id FROM chat_logs")}
    server_ids = list(Message.objects.values_list("client_message_id", flat=True))
    assert {
        "kills": kills,
        "checkpoint": UploadCheckpoint(state_dir).load().last_log_id,
        "stored": len(server_ids),
        "distinct": len(set(server_ids)),
        "missing": len(client_ids - set(server_ids)),
    } == {"kills": 7, "checkpoint": last_log_id, "stored": 2000, "distinct": 2000, "missing": 0}
    assert UploadBatch.objects.count() >= 100
    assert all(0 < stored < 2000 for stored in stored_at_kills), stored_at_kills  # every kill mid-upload


@pytest.fixture
def own_redis(tmp_path, settings):
    """A redis-server of this test's own on a free port, without persistence (a restart forgets everything, as
    the shared resend window does when Redis restarts). `own_redis.restart()` kills it and starts a new one."""
    if shutil.which("redis-server") is None:
        pytest.fail(
            "this test starts a redis-server of its own (the shared one is never restarted): install redis-server"
        )
    port = _free_port()

    class OwnRedis:
        process = None

        def start(self):
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                cwd=tmp_path,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            probe = redis.Redis(port=port)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    if probe.ping():
                        return
                except redis.ConnectionError:
                    time.sleep(0.05)
            raise RuntimeError("redis-server did not start")

        def restart(self):
            self.process.kill()
            self.process.wait()
            self.start()

    own = OwnRedis()
    own.start()
    settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
    yield own
    own.process.kill()
    own.process.wait()


@pytest.mark.django_db
def test_redis_restarted_during_a_resend_storm_leaves_one_copy(own_redis):
    VendorFactory(code="1234", name="대한물산", aliases=[])
    uploader = uploader_client()
    storm = [message("네 확인했습니다", at=T0 + timedelta(seconds=2 * i), unread=3) for i in range(60)]
    answers = []
    for number, start in enumerate(range(0, 60, 10)):
        if number == 3:
            own_redis.restart()
        answers.append(post(uploader, f"storm-{number}", storm[start : start + 10]).status_code)
    assert {
        "answers": answers,
        "stored": Message.objects.count(),
        "dropped": Room.objects.get().resend_dropped_count,
    } == {"answers": [200] * 6, "stored": 1, "dropped": 59}


def _my_texts(client_db) -> list[str]:
    with simulator.connect(client_db) as connection:
        rows = connection.execute("SELECT message FROM chat_logs WHERE is_mine = 1 AND type = 'text'").fetchall()
    return [row[0] for row in rows]


@pytest.mark.django_db(transaction=True)
def test_a_sender_killed_during_a_slow_send_and_restarted_leaves_one_copy(live_server, tmp_path):
    """`python -m edge send --once` with a send tool that takes 4 s, killed with SIGKILL 1 s into the send: the tool
    it started lives on and lands the text at 4 s. The restarted sender finds an attempt with a start and no end,
    waits out command timeout + text wait from that start, counts the text and reports `sent` without a resend."""
    client_db = simulator.create_client_db(tmp_path / "client.db", rooms=[(ROOM_KEY, ROOM_NAME)])
    faults = tmp_path / "faults.json"
    faults.write_text('{"slow": {"text": {"1": 4}}}', encoding="utf-8")
    config = tmp_path / "edge.toml"
    config.write_text("[send]\ncommand_timeout_seconds = 6\n", encoding="utf-8")
    _, token = active_device(role=Device.Role.SENDER)
    room = RoomFactory(stable_key=ROOM_KEY, name=ROOM_NAME)
    job, _ = send_request_submit(
        room=room, items=[{"kind": "text", "text": REPLY}], idempotency_key="slow-kill", actor="agent"
    )
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "PYTHONPATH": str(django_settings.BASE_DIR),
        "VCS_EDGE_CONFIG": str(config),
        "VCS_EDGE_SERVER_URL": live_server.url,
        "VCS_EDGE_TOKEN": token,
        "VCS_EDGE_STATE_DIR": str(tmp_path / "state"),
        "VCS_EDGE_CLIENT_DB": str(client_db),
        "VCS_EDGE_DEVICE_NAME": "cs-mac-01",
        "VCS_EDGE_TEXT_WAIT_SECONDS": "2",
        "VCS_EDGE_POLL_INTERVAL_SECONDS": "0.2",
        "VCS_EDGE_SEND_COMMAND": shlex.join(simulator_command(client_db, "--text-file", "{file}", faults)),
    }

    def sender() -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "edge", "send", "--once"],
            cwd=django_settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    first = sender()
    deadline = time.monotonic() + 120
    while SendJob.objects.get(pk=job.pk).state != SendJob.State.SENDING and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    texts_at_kill = len(_my_texts(client_db))

    assert sender().wait(timeout=120) == 0
    job.refresh_from_db()
    assert {
        "texts_at_kill": texts_at_kill,
        "texts_in_room": _my_texts(client_db),
        "state": job.state,
        "resent": job.resent_counts.get("texts"),
    } == {"texts_at_kill": 0, "texts_in_room": [REPLY], "state": SendJob.State.SENT, "resent": 0}
