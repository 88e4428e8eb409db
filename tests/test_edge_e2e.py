"""End to end: the edge programs (in-process CLI) against the live test server on PostgreSQL and Redis, with the
simulated KakaoTalk client. Server faults are injected by wrapping the upload view; the sender's waits run on a
fake clock that also delivers the simulator's delayed messages.
"""

import json
import shlex
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.response import Response

from conversations.api.views import UploadApi
from conversations.models import Message, QuarantinedMessage, UploadBatch
from conversations.tests.factories import RoomFactory
from delivery.models import Device, SendJob
from delivery.services import send_jobs_expire_leases, send_request_submit
from delivery.tests.factories import active_device
from edge import simulator
from edge.api import EdgeApi
from edge.cli import main
from edge.client_db import SqliteChatDbReader
from edge.config import ClientDbConfig, SendConfig
from edge.errors import ExitCode
from edge.message_sender import CommandMessageSender
from edge.sender import SendJobRunner
from edge.tests.helpers import REPO_ROOT, CrashingSender, FakeClock, SimulatedCrash, simulator_command
from edge.uploader import DEAD_LETTER_FILE, UploadCheckpoint

pytestmark = pytest.mark.django_db(transaction=True)

ROOM_KEY = "chat-9912"
ROOM_NAME = "(1234) 대한물산"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
REPLY = "안녕하세요. 요청하신 단가표 보내드립니다."


@pytest.fixture
def client_db(tmp_path):
    return simulator.create_client_db(tmp_path / "client.db", rooms=[(ROOM_KEY, ROOM_NAME)])


@pytest.fixture
def state_dir(tmp_path):
    return tmp_path / "state"


@pytest.fixture
def faults_path(tmp_path):
    path = tmp_path / "faults.json"
    path.write_text(json.dumps({"delayed_delivery": "on_poll"}), encoding="utf-8")
    return path


@pytest.fixture
def edge_env(live_server, client_db, state_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # never a real ~/.vcs-edge
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))  # the simulator send command runs as a child process
    return {
        "VCS_EDGE_SERVER_URL": live_server.url,
        "VCS_EDGE_STATE_DIR": str(state_dir),
        "VCS_EDGE_CLIENT_DB": str(client_db),
        "VCS_EDGE_DEVICE_NAME": "cs-pc-03",
    }


class UploadFaults:
    """Wraps the real upload view: each call takes the next fault of the plan (None: behave normally)."""

    def __init__(self, monkeypatch):
        self.plan: list[str | None] = []
        real_post = UploadApi.post

        def post(view, request):
            fault = self.plan.pop(0) if self.plan else None
            if fault == "unavailable":
                return Response({"error": "UNAVAILABLE"}, status=503)
            if fault == "crash":
                raise RuntimeError("injected server crash")
            if fault == "rate_limited":
                return Response({"error": "RATE_LIMITED"}, status=429, headers={"Retry-After": "30"})
            response = real_post(view, request)
            if fault == "answer_lost":  # stored and committed, but the device gets a gateway error
                return Response({"error": "BAD_GATEWAY"}, status=502)
            return response

        monkeypatch.setattr(UploadApi, "post", post)


def _client_ids(client_db, *, where="1=1"):
    with simulator.connect(client_db) as connection:
        return {row[0] for row in connection.execute(f"SELECT client_log_id FROM chat_logs WHERE {where}")}


def _server_ids():
    return set(Message.objects.filter(room__stable_key=ROOM_KEY).values_list("client_message_id", flat=True))


def test_uploads_survive_a_sequence_of_faults_with_nothing_lost_and_nothing_stored_twice(
    edge_env, client_db, state_dir, monkeypatch
):
    """5xx, a server crash, a stored-but-unanswered batch, 429, a message the server refuses and a resend storm,
    one after the other: every valid message is stored exactly once, resends are dropped, the bad message is
    quarantined on the server."""
    _, token = active_device(role=Device.Role.UPLOADER)
    env = {**edge_env, "VCS_EDGE_TOKEN": token, "VCS_EDGE_BATCH_SIZE": "2"}
    faults = UploadFaults(monkeypatch)
    clock = FakeClock()
    for n in range(1, 7):
        simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text=f"문의 {n}", unread_count=1)

    faults.plan = ["unavailable"]
    assert main(["upload"], environ=env, clock=clock) == ExitCode.UNAVAILABLE
    assert (Message.objects.count(), UploadCheckpoint(state_dir).load().last_log_id) == (0, 0)

    faults.plan = ["crash"]
    assert main(["upload"], environ=env, clock=clock) == ExitCode.UNAVAILABLE
    assert (Message.objects.count(), UploadCheckpoint(state_dir).load().last_log_id) == (0, 0)

    faults.plan = ["answer_lost"]
    assert main(["upload"], environ=env, clock=clock) == ExitCode.UNAVAILABLE
    assert Message.objects.count() == 2  # the server has them; the device does not know
    assert UploadCheckpoint(state_dir).load().last_log_id == 0

    faults.plan = [None, "rate_limited"]  # the same batch again (replayed), then a 429 on the next one
    assert main(["upload"], environ=env, clock=clock) == ExitCode.UNAVAILABLE
    assert Message.objects.count() == 2
    assert UploadBatch.objects.count() == 1  # the retry was answered from the first result
    assert main(["upload"], environ=env, clock=clock) == ExitCode.UNAVAILABLE  # still inside Retry-After

    clock.advance(31)
    assert main(["upload"], environ=env, clock=clock) == ExitCode.OK
    assert _server_ids() == _client_ids(client_db)
    assert Message.objects.count() == 6

    # A message the server refuses (an unread count past its limit) is refused alone: its batch neighbour is
    # stored, the refused one is kept in the quarantine, nothing is dead-lettered, the run reports it set aside.
    bad = simulator.append_message(
        client_db, room_key=ROOM_KEY, sender="김대리", text="이상한 행", unread_count=200_000
    )
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="같은 배치", unread_count=1)
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="다음 배치", unread_count=1)
    simulator.resend_storm(client_db, room_key=ROOM_KEY, count=3)
    assert main(["upload"], environ=env, clock=clock) == ExitCode.PARTIAL

    assert not (state_dir / DEAD_LETTER_FILE).exists()
    quarantined = QuarantinedMessage.objects.get()
    assert (quarantined.reason, quarantined.room.stable_key) == ("invalid", ROOM_KEY)
    assert json.loads(quarantined.raw)["client_message_id"] == _client_ids(client_db, where=f"id = {bad}").pop()
    texts = list(Message.objects.filter(room__stable_key=ROOM_KEY).values_list("text", flat=True))
    assert sorted(texts) == sorted([f"문의 {n}" for n in range(1, 7)] + ["같은 배치", "다음 배치"])  # storm dropped
    assert len(set(_server_ids())) == Message.objects.count() == 8
    assert UploadCheckpoint(state_dir).load().last_log_id == _all_log_ids(client_db)[-1]


def test_replay_dead_letters_against_the_server_stores_once(edge_env, client_db, state_dir):
    """A batch an older server refused whole for one over-long message: replayed, its 49 valid neighbours are
    stored and the long one is quarantined; a second replay stores nothing more."""
    _, token = active_device(role=Device.Role.UPLOADER)
    env = {**edge_env, "VCS_EDGE_TOKEN": token}
    messages = [
        {
            "room_key": ROOM_KEY,
            "room_name": ROOM_NAME,
            "sender_name": "김대리",
            "sent_by_me": False,
            "text": "가" * 20001 if n == 17 else f"메시지 {n}",
            "sent_at": f"2026-11-30T10:{n:02d}:00+09:00",
            "unread_count": 1,
            "client_message_id": f"log-{n}",
            "attachments": {"photos": 0, "files": 0},
        }
        for n in range(50)
    ]
    state_dir.mkdir(mode=0o700, exist_ok=True)
    record = {"batch_id": "cs-pc-03:000000001-000000050", "status": 422, "response": {}, "messages": messages}
    (state_dir / DEAD_LETTER_FILE).write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")

    assert main(["replay-dead-letters"], environ=env) == ExitCode.PARTIAL  # one message is in the quarantine
    assert main(["replay-dead-letters"], environ=env) == ExitCode.PARTIAL
    assert Message.objects.count() == 49
    assert UploadBatch.objects.get().batch_id == "cs-pc-03:000000001-000000050"
    assert QuarantinedMessage.objects.get().index == 17


def _all_log_ids(client_db):
    with simulator.connect(client_db) as connection:
        return [row[0] for row in connection.execute("SELECT id FROM chat_logs ORDER BY id")]


@pytest.fixture
def sender_room():
    return RoomFactory(stable_key=ROOM_KEY, name=ROOM_NAME)


def _submit(room, key="e2e-job-1", items=None):
    items = items or [{"kind": "text", "text": REPLY}, {"kind": "photo", "name": "price.png", "content": PNG}]
    job, _ = send_request_submit(room=room, items=items, idempotency_key=key, actor="agent")
    return job


def _sender_env(edge_env, client_db, faults_path, token):
    return {
        **edge_env,
        "VCS_EDGE_TOKEN": token,
        "VCS_EDGE_SEND_COMMAND": shlex.join(simulator_command(client_db, "--text-file", "{file}", faults_path)),
        "VCS_EDGE_SEND_PHOTO_COMMAND": shlex.join(simulator_command(client_db, "--photo", "{path}", faults_path)),
    }


def _my_rows(client_db, kind):
    with simulator.connect(client_db) as connection:
        return connection.execute(
            "SELECT message FROM chat_logs WHERE is_mine = 1 AND type = ? ORDER BY id", (kind,)
        ).fetchall()


def _sends(client_db, kind):
    with simulator.connect(client_db) as connection:
        row = connection.execute("SELECT value FROM sim_counters WHERE name = ?", (kind,)).fetchone()
    return row[0] if row else 0


def test_a_queued_job_is_delivered_counted_and_reported_sent(edge_env, client_db, faults_path, sender_room):
    """Queued through delivery.services, claimed by `send --once`: the dropped text is resent once, the late
    photo (inside the grace) is not, and the job ends `sent` with the counts the device observed."""
    _, token = active_device(role=Device.Role.SENDER)
    job = _submit(sender_room)
    faults_path.write_text(
        json.dumps({"drop": {"text": [1]}, "delay": {"photo": {"1": 40}}, "delayed_delivery": "on_poll"}),
        encoding="utf-8",
    )
    clock = FakeClock(on_sleep=lambda now: simulator.deliver_due(client_db, now))

    code = main(["send", "--once"], environ=_sender_env(edge_env, client_db, faults_path, token), clock=clock)

    assert code == ExitCode.OK
    job.refresh_from_db()
    assert job.state == SendJob.State.SENT
    assert job.observed_counts == {"texts": 1, "photos": 1, "files": 0}
    assert job.resent_counts == {"texts": 1, "photos": 0, "files": 0}
    assert job.lease_holder is None
    assert [row[0] for row in _my_rows(client_db, "text")] == [REPLY]
    assert [row[0] for row in _my_rows(client_db, "photo")] == ["price.png"]
    assert (_sends(client_db, "text"), _sends(client_db, "photo")) == (2, 1)


def _runner(live_server, token, client_db, faults_path, state_dir, clock, sender=None):
    command_sender = CommandMessageSender(
        text_command=simulator_command(client_db, "--text-file", "{file}", faults_path),
        photo_command=simulator_command(client_db, "--photo", "{path}", faults_path),
        timeout_seconds=60,
    )
    runner = SendJobRunner(
        api=EdgeApi(server_url=live_server.url, token=token),
        reader=SqliteChatDbReader(ClientDbConfig(path=client_db)),
        sender=command_sender,
        state_dir=state_dir,
        config=SendConfig(),
        clock=clock,
    )
    if sender is not None:
        runner.sender = sender(command_sender)
    return runner


def test_a_crash_between_send_and_report_is_verified_by_counting_on_restart(
    live_server, edge_env, client_db, faults_path, state_dir, sender_room
):
    """The sender dies after both sends; `send --once` after the restart counts the room and reports `sent`
    without sending anything again."""
    _, token = active_device(role=Device.Role.SENDER)
    job = _submit(sender_room)
    clock = FakeClock()
    crashing = _runner(
        live_server,
        token,
        client_db,
        faults_path,
        state_dir,
        clock,
        sender=lambda inner: CrashingSender(inner, crash_after=2),
    )
    with pytest.raises(SimulatedCrash):
        crashing.run_once()
    job.refresh_from_db()
    assert job.state == SendJob.State.SENDING

    code = main(["send", "--once"], environ=_sender_env(edge_env, client_db, faults_path, token), clock=clock)

    assert code == ExitCode.OK
    job.refresh_from_db()
    assert job.state == SendJob.State.SENT
    assert job.resent_counts == {"texts": 0, "photos": 0, "files": 0}
    assert (_sends(client_db, "text"), _sends(client_db, "photo")) == (1, 1)


def test_a_lease_that_lapsed_during_the_crash_leaves_the_job_unknown_and_nothing_resent(
    live_server, edge_env, client_db, faults_path, state_dir, sender_room
):
    """The device was gone past its lease: the server moved the job to unknown; the restarted device does not
    send or report anything, and exits 5."""
    _, token = active_device(role=Device.Role.SENDER)
    job = _submit(sender_room)
    faults_path.write_text(json.dumps({"drop": {"photo": [1]}, "delayed_delivery": "on_poll"}), encoding="utf-8")
    clock = FakeClock()
    crashing = _runner(
        live_server,
        token,
        client_db,
        faults_path,
        state_dir,
        clock,
        sender=lambda inner: CrashingSender(inner, crash_after=2),
    )
    with pytest.raises(SimulatedCrash):
        crashing.run_once()
    assert send_jobs_expire_leases(now=timezone.now() + timedelta(hours=1)) == 1

    code = main(["send", "--once"], environ=_sender_env(edge_env, client_db, faults_path, token), clock=clock)

    assert code == ExitCode.PARTIAL
    job.refresh_from_db()
    assert job.state == SendJob.State.UNKNOWN
    assert (_sends(client_db, "text"), _sends(client_db, "photo")) == (1, 1)  # the missing photo is not resent
    assert len(_my_rows(client_db, "photo")) == 0
