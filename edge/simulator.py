"""A simulated KakaoTalk client for tests and the demo: a real SQLite client DB and a fake send command.

The DB has the shape of a kakaocli-style client DB (the default mapping of edge/client_db.py reads it):

    chat_rooms(id INTEGER PRIMARY KEY, chat_key TEXT UNIQUE, name TEXT)
    chat_logs(id INTEGER PRIMARY KEY AUTOINCREMENT, chat_id -> chat_rooms.id, sender TEXT, is_mine INTEGER,
              message TEXT (the text, or a photo's / file's name), type TEXT (text | photo | file),
              created_at TEXT (ISO 8601 with offset), unread_count INTEGER, client_log_id TEXT)

plus three tables of the simulator itself: sim_pending (delayed deliveries), sim_counters (sends per kind) and
sim_clock (simulated time, only when a `SimulatedClock` drives the DB).

Command line (`python -m edge.simulator ...`):
    init --db PATH [--room KEY NAME]...          create the DB (and rooms)
    incoming --db PATH --room KEY --sender NAME (--text T | --photo NAME | --file NAME) [--unread N] [--mine]
    storm --db PATH --room KEY --count N [--interval 2] [--realtime]
                                                 the client's resend storm: the room's latest message again
    send --db PATH --room KEY (--text-file F | --photo P | --file P) [--faults JSON_FILE]
                                                 the fake send command: writes my message into the DB
    deliver-due --db PATH [--wait S]             deliver delayed messages whose time has come
    show --db PATH [--room KEY] [--last N]       print the latest logs

Faults for `send` (a JSON file given by --faults or VCS_SIM_FAULTS; N counts the sends of that kind, from 1):
    {"fail": {"text": [N]}}              exit 1, write nothing (the tool reports failure)
    {"drop": {"text": [N]}}              exit 0, write nothing (the tool says it sent; it never arrives)
    {"delay": {"photo": {"N": S}}}       exit 0, the message arrives S seconds after the tool exits
    {"slow": {"text": {"N": S}}}         the tool takes S seconds before it exits (combines with the others)
    {"duplicate": {"text": [N]}}         exit 0, the message arrives twice
    {"delayed_delivery": "background"}   delayed messages are written by a detached process after S seconds
                                         (default); "on_poll": only when deliver_due() / deliver-due runs

Simulated time: once a `SimulatedClock` is created on a DB, the fake send command reads the time from the DB
instead of the wall clock. A slow send then advances that clock by the time the tool takes (instead of really
sleeping) and delayed messages land when the clock passes their time, so tests drive a 12-second tool without
waiting for it.
"""

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

KST = timezone(timedelta(hours=9))
MY_NAME = "나"
FAULTS_VARIABLE = "VCS_SIM_FAULTS"

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_rooms (
    id INTEGER PRIMARY KEY,
    chat_key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chat_logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_id INTEGER NOT NULL REFERENCES chat_rooms(id),
    sender TEXT NOT NULL,
    is_mine INTEGER NOT NULL DEFAULT 0,
    message TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL DEFAULT 'text',
    created_at TEXT NOT NULL,
    unread_count INTEGER NOT NULL DEFAULT 0,
    client_log_id TEXT
);
CREATE INDEX IF NOT EXISTS chat_logs_room ON chat_logs(chat_id, id);
CREATE TABLE IF NOT EXISTS sim_pending (
    id INTEGER PRIMARY KEY,
    due_at REAL NOT NULL,
    chat_id INTEGER NOT NULL,
    sender TEXT NOT NULL,
    is_mine INTEGER NOT NULL,
    message TEXT NOT NULL,
    type TEXT NOT NULL,
    unread_count INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sim_counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sim_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    now REAL NOT NULL
);
"""


@contextmanager
def connect(db_path: str | Path) -> Iterator[sqlite3.Connection]:
    """One transaction on a fresh connection: committed on success, rolled back on error, always closed."""
    connection = sqlite3.connect(str(db_path), timeout=10)
    connection.row_factory = sqlite3.Row
    try:
        with connection:
            yield connection
    finally:
        connection.close()


def create_client_db(db_path: str | Path, rooms: Iterable[tuple[str, str]] = ()) -> Path:
    db_path = Path(db_path)
    with connect(db_path) as connection:
        connection.executescript(SCHEMA)
    for room_key, name in rooms:
        add_room(db_path, room_key, name)
    return db_path


def add_room(db_path: str | Path, room_key: str, name: str) -> int:
    with connect(db_path) as connection:
        connection.execute(
            "INSERT INTO chat_rooms (chat_key, name) VALUES (?, ?) ON CONFLICT(chat_key) DO UPDATE SET name = ?",
            (room_key, name, name),
        )
        return connection.execute("SELECT id FROM chat_rooms WHERE chat_key = ?", (room_key,)).fetchone()[0]


def append_message(
    db_path: str | Path,
    *,
    room_key: str,
    sender: str,
    text: str = "",
    kind: str = "text",
    is_mine: bool = False,
    unread_count: int = 0,
    created_at: datetime | None = None,
) -> int:
    """Insert one message as the client would on arrival. Returns its log id."""
    with connect(db_path) as connection:
        chat_id = _room_id(connection, room_key)
        return _insert_log(connection, chat_id, sender, is_mine, text, kind, unread_count, created_at)


def resend_storm(
    db_path: str | Path,
    *,
    room_key: str,
    count: int,
    interval_seconds: float = 2.0,
    realtime: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> list[int]:
    """Re-insert the room's latest message `count` times, `interval_seconds` apart, with the same text, sender and
    unread count (what the real client does for an unread room). Timestamps advance by the interval; with
    `realtime` the function also really waits between inserts."""
    with connect(db_path) as connection:
        chat_id = _room_id(connection, room_key)
        latest = connection.execute(
            "SELECT * FROM chat_logs WHERE chat_id = ? ORDER BY id DESC LIMIT 1", (chat_id,)
        ).fetchone()
    if latest is None:
        raise ValueError(f"room {room_key} has no message to resend")
    first_moment = datetime.fromisoformat(latest["created_at"])
    log_ids = []
    for repeat in range(1, count + 1):
        if realtime:
            sleep(interval_seconds)
        with connect(db_path) as connection:
            log_ids.append(
                _insert_log(
                    connection,
                    chat_id,
                    latest["sender"],
                    bool(latest["is_mine"]),
                    latest["message"],
                    latest["type"],
                    latest["unread_count"],
                    first_moment + timedelta(seconds=interval_seconds * repeat),
                )
            )
    return log_ids


def deliver_due(db_path: str | Path, now: float | None = None) -> int:
    """Write the delayed messages whose time has come into chat_logs. Returns how many.

    `now` defaults to the DB's simulated time when a `SimulatedClock` drives it, else the wall clock."""
    with connect(db_path) as connection:
        if now is None:
            now = _current_time(connection)
        rows = connection.execute("SELECT * FROM sim_pending WHERE due_at <= ? ORDER BY due_at, id", (now,)).fetchall()
        for row in rows:
            _insert_log(
                connection,
                row["chat_id"],
                row["sender"],
                bool(row["is_mine"]),
                row["message"],
                row["type"],
                row["unread_count"],
                None,
            )
            connection.execute("DELETE FROM sim_pending WHERE id = ?", (row["id"],))
    return len(rows)


class SimulatedClock:
    """Time kept in the client DB, shared by a test and the fake send commands it starts as processes.

    It implements the edge programs' `Clock`: `sleep` moves the time on and delivers the delayed messages due by
    then, then calls `on_sleep(now)` if set. A slow fake send advances the same clock by the time it takes.
    """

    def __init__(
        self, db_path: str | Path, start: float | None = None, on_sleep: Callable[[float], None] | None = None
    ):
        self.db_path = Path(db_path)
        self.on_sleep = on_sleep
        self.slept: list[float] = []
        with connect(self.db_path) as connection:
            connection.execute(
                "INSERT INTO sim_clock (id, now) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET now = excluded.now",
                (time.time() if start is None else start,),
            )

    def now(self) -> float:
        with connect(self.db_path) as connection:
            return _current_time(connection)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        now = advance_clock(self.db_path, max(seconds, 0.0))
        if self.on_sleep is not None:
            self.on_sleep(now)

    def advance(self, seconds: float) -> None:
        self.sleep(seconds)


def advance_clock(db_path: str | Path, seconds: float) -> float:
    """Move the DB's simulated time on by `seconds` and deliver what is due by then; returns the new time."""
    with connect(db_path) as connection:
        connection.execute("UPDATE sim_clock SET now = now + ? WHERE id = 1", (seconds,))
        now = _current_time(connection)
    deliver_due(db_path, now)
    return now


def load_faults(path: str | None = None, environ=None) -> dict:
    environ = os.environ if environ is None else environ
    source = path or environ.get(FAULTS_VARIABLE, "")
    if not source:
        return {}
    text = source if source.lstrip().startswith("{") else Path(source).read_text(encoding="utf-8")
    faults = json.loads(text)
    if not isinstance(faults, dict):
        raise ValueError("faults must be a JSON object")
    return faults


def fake_send(
    db_path: str | Path,
    *,
    room_key: str,
    kind: str,
    content: str,
    faults: dict | None = None,
    leave_running: bool = False,
) -> int:
    """What a real send tool does, with injected faults. `content` is the text, or the sent file's name.
    Returns the process exit code (0: the tool says it sent).

    A `slow` send takes its seconds before it exits: really, or on the DB's simulated clock when one drives it.
    With `leave_running` (simulated clock only) the tool is left running: its message is scheduled for when it
    would exit, the clock is not moved, and the caller stands for a sender killed while waiting for the tool.
    """
    faults = faults or {}
    with connect(db_path) as connection:
        chat_id = _room_id(connection, room_key)
        connection.execute(
            "INSERT INTO sim_counters (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1",
            (kind,),
        )
        nth = connection.execute("SELECT value FROM sim_counters WHERE name = ?", (kind,)).fetchone()[0]
        simulated_start = _simulated_time(connection)
    took = float(faults.get("slow", {}).get(kind, {}).get(str(nth), 0))
    if leave_running and simulated_start is None:
        raise ValueError("leave_running needs a simulated clock on the client DB")
    if simulated_start is None:
        if took:
            time.sleep(took)  # a slow tool on the wall clock really takes its time
        exits_at = time.time()
    else:
        exits_at = simulated_start + took
    exit_code = _send_effects(
        db_path=db_path,
        chat_id=chat_id,
        kind=kind,
        content=content,
        nth=nth,
        faults=faults,
        exits_at=exits_at,
        took=took,
        simulated=simulated_start is not None,
    )
    if simulated_start is not None and not leave_running:
        advance_clock(db_path, took)
    return exit_code


def _send_effects(*, db_path, chat_id, kind, content, nth, faults, exits_at, took, simulated) -> int:
    """The tool's outcome for its `nth` send of `kind`, as of the moment it exits (`exits_at`)."""
    with connect(db_path) as connection:
        if nth in faults.get("fail", {}).get(kind, []):
            print(f"simulated failure of {kind} send #{nth}", file=sys.stderr)
            return 1
        if nth in faults.get("drop", {}).get(kind, []):
            return 0
        delay = float(faults.get("delay", {}).get(kind, {}).get(str(nth), 0))
        copies = 2 if nth in faults.get("duplicate", {}).get(kind, []) else 1
        if not delay and not (simulated and took):
            for _ in range(copies):
                _insert_log(connection, chat_id, MY_NAME, True, content, kind, 0, None)
            return 0
        # Lands later (or, on a simulated clock, when the clock reaches the tool's exit): a pending delivery.
        for _ in range(copies):
            connection.execute(
                "INSERT INTO sim_pending (due_at, chat_id, sender, is_mine, message, type, unread_count)"
                " VALUES (?, ?, ?, 1, ?, ?, 0)",
                (exits_at + delay, chat_id, MY_NAME, content, kind),
            )
    if not simulated and faults.get("delayed_delivery", "background") == "background":
        _spawn_background_delivery(str(db_path), delay)
    return 0


def _spawn_background_delivery(db_path: str, delay: float) -> None:
    command = [sys.executable, "-m", "edge.simulator", "deliver-due", "--db", db_path, "--wait", str(delay)]
    options = {"start_new_session": True} if os.name != "nt" else {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    subprocess.Popen(  # detached on purpose: the message "arrives" after the send command has exited
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=str(Path(__file__).resolve().parent.parent),
        **options,
    )


def _simulated_time(connection: sqlite3.Connection) -> float | None:
    row = connection.execute("SELECT now FROM sim_clock WHERE id = 1").fetchone()
    return None if row is None else row[0]


def _current_time(connection: sqlite3.Connection) -> float:
    simulated = _simulated_time(connection)
    return time.time() if simulated is None else simulated


def _room_id(connection: sqlite3.Connection, room_key: str) -> int:
    row = connection.execute("SELECT id FROM chat_rooms WHERE chat_key = ?", (room_key,)).fetchone()
    if row is None:
        raise LookupError(f"no room {room_key!r} in the client DB")
    return row[0]


def _insert_log(connection, chat_id, sender, is_mine, message, kind, unread_count, created_at) -> int:
    moment = created_at or datetime.now(tz=KST)
    cursor = connection.execute(
        "INSERT INTO chat_logs (chat_id, sender, is_mine, message, type, created_at, unread_count, client_log_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chat_id,
            sender,
            int(is_mine),
            message,
            kind,
            moment.isoformat(timespec="milliseconds"),
            unread_count,
            f"sim-{uuid.uuid4().hex[:16]}",
        ),
    )
    return cursor.lastrowid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m edge.simulator", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    init = commands.add_parser("init", help="create the client DB")
    init.add_argument("--db", required=True)
    init.add_argument("--room", nargs=2, action="append", default=[], metavar=("KEY", "NAME"))

    incoming = commands.add_parser("incoming", help="append a message as received")
    incoming.add_argument("--db", required=True)
    incoming.add_argument("--room", required=True)
    incoming.add_argument("--sender", required=True)
    incoming_content = incoming.add_mutually_exclusive_group(required=True)
    incoming_content.add_argument("--text")
    incoming_content.add_argument("--photo")
    incoming_content.add_argument("--file")
    incoming.add_argument("--unread", type=int, default=0)
    incoming.add_argument("--mine", action="store_true")

    storm = commands.add_parser("storm", help="re-insert the room's latest message (resend storm)")
    storm.add_argument("--db", required=True)
    storm.add_argument("--room", required=True)
    storm.add_argument("--count", type=int, required=True)
    storm.add_argument("--interval", type=float, default=2.0)
    storm.add_argument("--realtime", action="store_true")

    send = commands.add_parser("send", help="the fake send command")
    send.add_argument("--db", required=True)
    send.add_argument("--room", required=True)
    send_content = send.add_mutually_exclusive_group(required=True)
    send_content.add_argument("--text-file")
    send_content.add_argument("--photo")
    send_content.add_argument("--file")
    send.add_argument("--faults", help=f"JSON file of faults (default: ${FAULTS_VARIABLE})")

    deliver = commands.add_parser("deliver-due", help="write delayed messages whose time has come")
    deliver.add_argument("--db", required=True)
    deliver.add_argument("--wait", type=float, default=0.0)

    show = commands.add_parser("show", help="print the latest logs")
    show.add_argument("--db", required=True)
    show.add_argument("--room")
    show.add_argument("--last", type=int, default=20)

    args = parser.parse_args(argv)
    try:
        return _run(args)
    except (LookupError, ValueError, OSError) as exc:
        print(f"simulator: {exc}", file=sys.stderr)
        return 2


def _run(args) -> int:
    if args.command == "init":
        create_client_db(args.db, rooms=[tuple(room) for room in args.room])
        return 0
    if args.command == "incoming":
        kind, content = _content_of(text=args.text, photo=args.photo, file=args.file)
        log_id = append_message(
            args.db,
            room_key=args.room,
            sender=args.sender,
            text=content,
            kind=kind,
            is_mine=args.mine,
            unread_count=args.unread,
        )
        print(log_id)
        return 0
    if args.command == "storm":
        for log_id in resend_storm(
            args.db, room_key=args.room, count=args.count, interval_seconds=args.interval, realtime=args.realtime
        ):
            print(log_id)
        return 0
    if args.command == "send":
        if args.text_file:
            kind, content = "text", Path(args.text_file).read_text(encoding="utf-8")
        else:
            path = Path(args.photo or args.file)
            if not path.is_file():
                raise LookupError(f"no such file {path}")
            kind, content = ("photo" if args.photo else "file"), path.name
        faults = load_faults(args.faults)
        return fake_send(args.db, room_key=args.room, kind=kind, content=content, faults=faults)
    if args.command == "deliver-due":
        time.sleep(max(args.wait, 0.0))
        deliver_due(args.db)
        return 0
    if args.command == "show":
        _show(args.db, room_key=args.room, last=args.last)
        return 0
    raise AssertionError(args.command)


def _content_of(*, text, photo, file) -> tuple[str, str]:
    if text is not None:
        return "text", text
    return ("photo", photo) if photo is not None else ("file", file)


def _show(db_path: str, *, room_key: str | None, last: int) -> None:
    with connect(db_path) as connection:
        query = (
            "SELECT l.id, r.chat_key, l.sender, l.is_mine, l.type, l.message, l.created_at, l.unread_count"
            " FROM chat_logs l JOIN chat_rooms r ON r.id = l.chat_id"
        )
        params: tuple = ()
        if room_key:
            query += " WHERE r.chat_key = ?"
            params = (room_key,)
        rows = connection.execute(query + " ORDER BY l.id DESC LIMIT ?", (*params, last)).fetchall()
    for row in reversed(rows):
        mine = "*" if row["is_mine"] else " "
        print(
            f"{row['id']:>6} {row['chat_key']} {mine}{row['sender']} [{row['type']}] {row['message']!r} "
            f"unread={row['unread_count']} {row['created_at']}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
