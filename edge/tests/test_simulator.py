import json
import subprocess
import sys
import time
from datetime import datetime, timedelta
from itertools import pairwise

from edge import simulator
from edge.tests.conftest import ROOM_KEY
from edge.tests.helpers import REPO_ROOT


def _rows(db):
    with simulator.connect(db) as connection:
        return connection.execute("SELECT * FROM chat_logs ORDER BY id").fetchall()


def _run(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "edge.simulator", *args], cwd=REPO_ROOT, capture_output=True, timeout=60, env=env
    )


def test_a_resend_storm_repeats_the_latest_message_every_2_seconds(client_db):
    """Same sender, text and unread count; new log ids; timestamps 2 s apart (as the real client does)."""
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="네", unread_count=4)
    ids = simulator.resend_storm(client_db, room_key=ROOM_KEY, count=3)

    rows = _rows(client_db)
    assert [row["id"] for row in rows[1:]] == ids
    assert {(row["sender"], row["message"], row["unread_count"]) for row in rows} == {("김대리", "네", 4)}
    moments = [datetime.fromisoformat(row["created_at"]) for row in rows]
    assert [b - a for a, b in pairwise(moments)] == [timedelta(seconds=2)] * 3
    assert len({row["client_log_id"] for row in rows}) == 4


def test_fake_send_faults_fail_drop_duplicate_and_delay(client_db):
    """Each fault hits the Nth send of its kind only."""
    faults = {
        "fail": {"text": [1]},
        "drop": {"text": [2]},
        "duplicate": {"text": [3]},
        "delay": {"photo": {"1": 30}},
        "delayed_delivery": "on_poll",
    }

    def send(kind, content):
        return simulator.fake_send(client_db, room_key=ROOM_KEY, kind=kind, content=content, faults=faults)

    assert send("text", "하나") == 1
    assert send("text", "둘") == 0
    assert send("text", "셋") == 0
    assert send("text", "넷") == 0
    assert send("photo", "p.jpg") == 0
    assert [row["message"] for row in _rows(client_db)] == ["셋", "셋", "넷"]
    assert all(row["is_mine"] == 1 for row in _rows(client_db))

    assert simulator.deliver_due(client_db, now=time.time() + 10) == 0
    assert simulator.deliver_due(client_db, now=time.time() + 31) == 1
    assert [(row["type"], row["message"]) for row in _rows(client_db)][-1] == ("photo", "p.jpg")


def test_the_fake_send_command_line_with_a_faults_file(client_db, tmp_path):
    """`python -m edge.simulator send` reads the text file, applies the faults file and exits like a tool."""
    text_file = tmp_path / "t.txt"
    text_file.write_text("안녕하세요\n두 줄", encoding="utf-8")
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"fail": {"text": [2]}}), encoding="utf-8")
    photo = tmp_path / "price.jpg"
    photo.write_bytes(b"jpg")
    db = str(client_db)

    assert (
        _run("send", "--db", db, "--room", ROOM_KEY, "--text-file", str(text_file), "--faults", str(faults)).returncode
        == 0
    )
    failed = _run("send", "--db", db, "--room", ROOM_KEY, "--text-file", str(text_file), "--faults", str(faults))
    assert failed.returncode == 1
    assert b"simulated failure" in failed.stderr
    assert _run("send", "--db", db, "--room", ROOM_KEY, "--photo", str(photo)).returncode == 0
    assert _run("send", "--db", db, "--room", "no-such-room", "--photo", str(photo)).returncode == 2
    assert [(row["type"], row["message"]) for row in _rows(client_db)] == [
        ("text", "안녕하세요\n두 줄"),
        ("photo", "price.jpg"),
    ]


def test_a_background_delivery_writes_the_delayed_message_later(client_db, tmp_path):
    """With delayed_delivery 'background' a detached process writes the message after the delay."""
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"delay": {"photo": {"1": 0.2}}}), encoding="utf-8")
    photo = tmp_path / "late.jpg"
    photo.write_bytes(b"jpg")
    sent = _run("send", "--db", str(client_db), "--room", ROOM_KEY, "--photo", str(photo), "--faults", str(faults))
    assert sent.returncode == 0
    assert _rows(client_db) == []
    deadline = time.monotonic() + 30
    while not _rows(client_db) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [row["message"] for row in _rows(client_db)] == ["late.jpg"]


def test_init_incoming_storm_and_show_from_the_command_line(tmp_path):
    db = str(tmp_path / "demo.db")
    assert _run("init", "--db", db, "--room", "chat-1", "(1234) 대한물산").returncode == 0
    assert (
        _run(
            "incoming", "--db", db, "--room", "chat-1", "--sender", "김대리", "--text", "@봇 단가?", "--unread", "2"
        ).returncode
        == 0
    )
    assert _run("storm", "--db", db, "--room", "chat-1", "--count", "2").returncode == 0
    shown = _run("show", "--db", db).stdout.decode()
    assert shown.count("@봇 단가?") == 3


def test_a_slow_send_on_the_simulated_clock_takes_its_time_there(client_db):
    """On a simulated clock a slow tool advances the clock by the time it takes; its message lands at its exit
    plus the delay; a tool left running lands its message on its own once the clock gets there."""
    clock = simulator.SimulatedClock(client_db, start=1000.0)
    faults = {"slow": {"text": {"1": 11, "2": 12}}, "delay": {"text": {"1": 1.5}}}

    def send(content, **kwargs):
        return simulator.fake_send(client_db, room_key=ROOM_KEY, kind="text", content=content, faults=faults, **kwargs)

    assert send("느린 전송") == 0
    assert clock.now() == 1011.0
    assert _rows(client_db) == []
    clock.sleep(1.5)
    assert [row["message"] for row in _rows(client_db)] == ["느린 전송"]

    assert send("아직 전송 중", leave_running=True) == 0
    assert clock.now() == 1012.5
    clock.sleep(11.9)
    assert len(_rows(client_db)) == 1
    clock.sleep(0.1)
    assert [row["message"] for row in _rows(client_db)][-1] == "아직 전송 중"

    assert send("빠른 전송") == 0
    assert clock.now() == 1024.5
    assert [row["message"] for row in _rows(client_db)][-1] == "빠른 전송"


def test_a_slow_send_on_the_wall_clock_really_waits(client_db, monkeypatch):
    """Without a simulated clock the slow tool sleeps before it exits (what the demo and real runs see)."""
    slept = []
    monkeypatch.setattr(simulator.time, "sleep", slept.append)
    faults = {"slow": {"text": {"1": 12}}}
    assert simulator.fake_send(client_db, room_key=ROOM_KEY, kind="text", content="네", faults=faults) == 0
    assert slept == [12.0]
    assert [row["message"] for row in _rows(client_db)] == ["네"]
