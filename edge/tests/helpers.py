"""Test doubles for the edge programs: a clock that never waits and a small in-memory edge API server.

`FakeEdgeServer` implements docs/edge-api.md closely enough to drive the uploader and the sender (real HTTP on
127.0.0.1, stdlib `http.server` in a thread) and can be told to fail the next calls to a path.
"""

import hashlib
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from edge import simulator

REPO_ROOT = Path(__file__).resolve().parents[2]
DROP_CONNECTION = "drop-connection"  # close the connection without handling the request
ANSWER_LOST = "answer-lost"  # handle the request, then close the connection without answering


class FakeClock:
    """Wall-clock seconds that only move when someone sleeps. `on_sleep(now)` runs after every sleep."""

    def __init__(self, start: float | None = None, on_sleep=None):
        self._now = time.time() if start is None else start
        self.on_sleep = on_sleep
        self.slept: list[float] = []

    def now(self) -> float:
        return self._now

    def sleep(self, seconds: float) -> None:
        self._now += max(seconds, 0.0)
        self.slept.append(seconds)
        if self.on_sleep is not None:
            self.on_sleep(self._now)

    def advance(self, seconds: float) -> None:
        self.sleep(seconds)


class SimulatedCrash(BaseException):
    """Stands for the process dying (kill -9, power loss): nothing in the edge code may catch it."""


class CrashingSender:
    """Wraps the real sender and 'kills the process' around the Nth send."""

    def __init__(self, inner, *, crash_after=None, crash_before=None):
        self.inner, self.crash_after, self.crash_before, self.sends = inner, crash_after, crash_before, 0

    def _around(self, call):
        self.sends += 1
        if self.sends == self.crash_before:
            raise SimulatedCrash("killed after the attempt was persisted, before the command ran")
        result = call()
        if self.sends == self.crash_after:
            raise SimulatedCrash("killed after the command, before anything else")
        return result

    def send_text(self, **kwargs):
        return self._around(lambda: self.inner.send_text(**kwargs))

    def send_attachment(self, **kwargs):
        return self._around(lambda: self.inner.send_attachment(**kwargs))


class KilledDuringSend:
    """Wraps the real sender and 'kills the process' while its Nth send command is still running.

    The simulator's tool is started on the client DB's simulated clock and left running (it lands its message when
    it would have exited); `after_seconds` of simulated time pass; then the sender dies before the command returns.
    """

    def __init__(self, inner, *, db_path: Path, faults_path: Path, clock, nth: int = 1, after_seconds: float = 5.0):
        self.inner, self.db_path, self.faults_path, self.clock = inner, db_path, faults_path, clock
        self.nth, self.after_seconds, self.sends = nth, after_seconds, 0

    def _around(self, call, *, room_key: str, kind: str, content: str):
        self.sends += 1
        if self.sends != self.nth:
            return call()
        faults = simulator.load_faults(str(self.faults_path))
        simulator.fake_send(
            self.db_path, room_key=room_key, kind=kind, content=content, faults=faults, leave_running=True
        )
        self.clock.sleep(self.after_seconds)
        raise SimulatedCrash("killed while the send command was still running")

    def send_text(self, **kwargs):
        content = Path(kwargs["text_file"]).read_text(encoding="utf-8")
        return self._around(
            lambda: self.inner.send_text(**kwargs), room_key=kwargs["room_key"], kind="text", content=content
        )

    def send_attachment(self, **kwargs):
        return self._around(
            lambda: self.inner.send_attachment(**kwargs),
            room_key=kwargs["room_key"],
            kind=kwargs["kind"],
            content=Path(kwargs["path"]).name,
        )


@dataclass
class ScriptedResponse:
    status: int | str  # or DROP_CONNECTION
    body: dict | None = None
    headers: dict = field(default_factory=dict)


@dataclass
class FakeJob:
    id: int
    room_key: str
    items: list[dict]
    room_name: str = ""
    state: str = "queued"
    attempt: int = 1
    holder: str | None = None  # token holding the lease
    claimed_by: str | None = None  # token that claimed it last
    contents: dict[int, bytes] = field(default_factory=dict)

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "room_key": self.room_key,
            "room_name": self.room_name,
            "state": self.state,
            "items": self.items,
            "lease_expires_at": "2026-11-30T10:20:00+09:00",
            "attempt": self.attempt,
        }


class FakeEdgeServer:
    def __init__(self, tokens: dict[str, str] | None = None):
        self.tokens = tokens if tokens is not None else {"upload-token": "uploader", "send-token": "sender"}
        self.pairing_codes: dict[str, dict] = {}
        self.pending_tokens: dict[str, str] = {}  # new token -> the token it replaces at its first use
        self.rotation_due: set[str] = set()  # tokens the server asks to rotate
        self.token_expiry: dict[str, str] = {}
        self.rotations = 0
        self.scripted: dict[str, list[ScriptedResponse]] = {}
        self.calls: list[tuple[str, str, dict]] = []
        self.batches: dict[str, dict] = {}
        self.stored: dict[tuple[str, str], dict] = {}  # (room_key, client_message_id) -> message
        self.upload_posts: list[dict] = []  # every upload body that reached the handler (not scripted away)
        self.jobs: dict[int, FakeJob] = {}
        self.results: dict[int, dict] = {}
        self.progress: list[tuple[int, str]] = []
        self.job_heartbeats: list[int] = []
        self.device_heartbeats: list[dict] = []
        self.upload_limit_messages: int | None = None  # more messages in one upload → 413, like the server
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # --- lifecycle ---

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> "FakeEdgeServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- scripting ---

    def fail_next(self, path: str, status, *, body: dict | None = None, headers: dict | None = None, times=1):
        for _ in range(times):
            self.scripted.setdefault(path, []).append(ScriptedResponse(status, body, headers or {}))

    def add_job(self, job: FakeJob, *, contents: dict[int, bytes] | None = None) -> FakeJob:
        for item in job.items:
            if item["kind"] != "text":
                data = (contents or {}).get(item["index"], f"bytes of {item['name']}".encode())
                job.contents[item["index"]] = data
                item.setdefault("sha256", hashlib.sha256(data).hexdigest())
                item.setdefault("content_url", f"/api/v1/sender/jobs/{job.id}/items/{item['index']}/content")
        self.jobs[job.id] = job
        return job

    def give_to_another_device(self, job_id: int) -> None:
        """The job went to another sender (staff re-queued it and another device claimed it)."""
        with self._lock:
            job = self.jobs[job_id]
            job.holder = job.claimed_by = "another-sender-token"
            job.state = "claimed"

    def take_lease_away(self, job_id: int) -> None:
        """What the server does when a lease lapses: the job becomes unknown and nobody holds it."""
        with self._lock:
            self.jobs[job_id].holder = None
            self.jobs[job_id].state = "unknown"

    def stored_texts(self) -> list[str]:
        return [message["text"] for message in self.stored.values()]

    # --- request handling ---

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                server._dispatch(self, "GET")

            def do_POST(self):
                server._dispatch(self, "POST")

        return Handler

    def _dispatch(self, request: BaseHTTPRequestHandler, method: str) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else {}
        path = request.path
        with self._lock:
            self.calls.append((method, path, body))
            scripted = self.scripted.get(path)
            response = scripted.pop(0) if scripted else None
        if response is not None and response.status == ANSWER_LOST:
            with self._lock:
                self._route(method, path, body, (request.headers.get("Authorization") or "")[7:])
            request.close_connection = True
            request.connection.shutdown(2)
            return
        if response is not None:
            if response.status == DROP_CONNECTION:
                request.close_connection = True
                request.connection.shutdown(2)
                return
            self._send(request, response.status, response.body or {"error": "SCRIPTED"}, response.headers)
            return
        token = (request.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        with self._lock:
            status, payload = self._route(method, path, body, token)
        if isinstance(payload, bytes):
            self._send_bytes(request, status, payload)
        else:
            self._send(request, status, payload)

    def _route(self, method: str, path: str, body: dict, token: str):
        if path == "/api/v1/devices/pair":
            code = self.pairing_codes.pop(body.get("code", ""), None)
            if code is None:
                return 400, {"error": "PAIRING_CODE_INVALID"}
            return 201, code
        if token in self.pending_tokens:  # like the server: a rotated token takes over at its first use
            replaced = self.pending_tokens.pop(token)
            self.tokens[token] = self.tokens.pop(replaced)
            self.rotation_due.discard(replaced)
        role = self.tokens.get(token)
        if role is None:
            return 401, {"error": "DEVICE_TOKEN_INVALID"}
        if path == "/api/v1/devices/token":
            return 200, {
                "device_id": 3,
                "role": role,
                "expires_at": self.token_expiry.get(token),
                "rotation_due": token in self.rotation_due,
            }
        if path == "/api/v1/devices/token/rotate":
            self.rotations += 1
            self.pending_tokens = {new: old for new, old in self.pending_tokens.items() if old != token}
            new_token = f"rotated-token-{self.rotations}"
            self.pending_tokens[new_token] = token
            return 200, {"token": new_token}
        if path == "/api/v1/devices/heartbeat":
            self.device_heartbeats.append(body)
            return 200, {"ok": True, "server_time": "2026-11-30T10:00:00+09:00"}
        if path == "/api/v1/uploads":
            if role != "uploader":
                return 403, {"error": "DEVICE_ROLE_FORBIDDEN"}
            return self._upload(body)
        if role != "sender":
            return 403, {"error": "DEVICE_ROLE_FORBIDDEN"}
        if path == "/api/v1/sender/claim":
            for job in sorted(self.jobs.values(), key=lambda job: job.id):
                if job.state == "queued":
                    job.state, job.holder, job.claimed_by = "claimed", token, token
                    return 200, {"job": job.as_json()}
            return 204, {}
        parts = path.strip("/").split("/")  # api v1 sender jobs {id} ...
        job = self.jobs.get(int(parts[4]))
        if job is None or job.claimed_by != token:
            # Like the server: another device's job is answered exactly like a missing one.
            return 404, {"error": "SEND_JOB_NOT_FOUND"}
        if action_is_repeated_report(job, parts, body, self.results):
            return 200, job.as_json()
        if job.holder != token:
            return 409, {"error": "LEASE_NOT_HELD"}
        action = parts[5]
        if action == "heartbeat":
            self.job_heartbeats.append(job.id)
            return 200, {"lease_expires_at": "2026-11-30T10:20:00+09:00"}
        if action == "progress":
            job.state = body["state"]
            self.progress.append((job.id, body["state"]))
            return 200, job.as_json()
        if action == "result":
            job.state, job.holder = body["outcome"], None
            self.results[job.id] = body
            return 200, job.as_json()
        if action == "items" and method == "GET":
            return 200, job.contents[int(parts[6])]
        return 404, {"error": "NOT_FOUND"}

    def _upload(self, body: dict):
        self.upload_posts.append(body)
        batch_id = body["batch_id"]
        if self.upload_limit_messages is not None and len(body["messages"]) > self.upload_limit_messages:
            return 413, {"error": "PAYLOAD_TOO_LARGE", "limit_messages": self.upload_limit_messages, "limit_bytes": 0}
        if batch_id in self.batches:
            return 200, {**self.batches[batch_id], "replayed": True}
        stored = duplicates = 0
        for message in body["messages"]:
            key = (message["room_key"], message["client_message_id"])
            if key in self.stored:
                duplicates += 1
            else:
                self.stored[key] = message
                stored += 1
        result = {
            "batch_id": batch_id,
            "received": len(body["messages"]),
            "stored": stored,
            "dropped_resends": 0,
            "duplicates": duplicates,
            "rejected": 0,
            "cleaned": 0,
            "questions": 0,
            "replayed": False,
            "rejections": [],
        }
        self.batches[batch_id] = result
        return 200, result

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None) -> None:
        data = b"" if status == 204 else json.dumps(payload).encode()
        request.send_response(status)
        for name, value in (headers or {}).items():
            request.send_header(name, value)
        if status != 204:
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    @staticmethod
    def _send_bytes(request: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
        request.send_response(status)
        request.send_header("Content-Type", "application/octet-stream")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)


def action_is_repeated_report(job: FakeJob, parts: list[str], body: dict, results: dict[int, dict]) -> bool:
    """Like the server: the same result again after the lease ended answers 200 without a change."""
    return parts[5] == "result" and job.holder is None and results.get(job.id) == body


def simulator_command(db_path: Path, flag: str, placeholder: str, faults_path: Path | None = None) -> tuple:
    """The fake send command line, as an operator would put it in the config."""
    command = [sys.executable, "-m", "edge.simulator", "send", "--db", str(db_path), "--room", "{room}"]
    command += [flag, placeholder]
    if faults_path is not None:
        command += ["--faults", str(faults_path)]
    return tuple(command)
