"""Upload latency while anonymous clients flood the staff and pairing endpoints, against the same run without them.

    .venv/bin/python bench/bench_auth_flood.py [--batches 40] [--flooders 8] [--workers 2]

Starts gunicorn (production password hashing: `config.settings.local`) on PostgreSQL + Redis against a scratch
database `vcs_bench_auth_flood`, posts 100-message upload batches from one uploader, first alone, then while
`--flooders` threads post a staff password over HTTP Basic to `/api/v1/send-requests` (a wrong one, as a guesser
would), then while they post pairing guesses to `/api/v1/devices/pair`. Reports each phase's batch p50/p95 and
the ratio to the quiet phase, and what the flood requests were answered. Also times the device token lookup every
upload makes (`device_authenticate`, current token, rotated token pending) against a plain lookup by token hash
in the same process. Prints a markdown block for docs/benchmarks.md.
"""

import argparse
import base64
import collections
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
from scratch_database import database_drop, database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_auth_flood"
REDIS_DB = 8
PORT = 8766
BATCH_SIZE = 100
KST = ZoneInfo("Asia/Seoul")
STAFF_PASSWORD = "bench-staff-pass-1234"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=40, help="upload batches per phase")
    parser.add_argument("--flooders", type=int, default=8, help="concurrent flooding connections")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
        "REDIS_URL": f"redis://127.0.0.1:6379/{REDIS_DB}",
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DJANGO_DEBUG": "false",
        "UPLOAD_RATE_PER_MINUTE": "1000000",
        "LOG_LEVEL": "ERROR",
    }
    database_recreate(DB_NAME)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run(["redis-cli", "-n", str(REDIS_DB), "flushdb"], check=True, capture_output=True)
    token = _setup(env)
    lookup = _token_lookup_timing(env)
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "config.wsgi", "-b", f"127.0.0.1:{PORT}", "-w", str(args.workers),
         "--log-level", "error"],
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    try:
        _wait_for_server()
        _uploads(token, range(0, 3))  # warm-up
        quiet = _uploads(token, range(3, 3 + args.batches))
        basic = _with_flood(_basic_guess, args.flooders, lambda: _uploads(token, range(1000, 1000 + args.batches)))
        pairing = _with_flood(_pairing_guess, args.flooders, lambda: _uploads(token, range(2000, 2000 + args.batches)))
    finally:
        server.terminate()
        server.wait(timeout=10)
        database_drop(DB_NAME)
        subprocess.run(["redis-cli", "-n", str(REDIS_DB), "flushdb"], check=False, capture_output=True)

    print("\n## Upload latency under an authentication flood\n")
    print(
        f"Command: `.venv/bin/python bench/bench_auth_flood.py --batches {args.batches} --flooders {args.flooders} "
        f"--workers {args.workers}`"
    )
    print(f"(gunicorn, {args.workers} sync workers, PBKDF2 password hashing, {BATCH_SIZE}-message batches)\n")
    print(
        f"Token lookup per request: `device_authenticate` {lookup['authenticate_us']:.0f} µs, with a rotated token "
        f"pending {lookup['pending_us']:.0f} µs, plain `token_hash` lookup {lookup['plain_us']:.0f} µs "
        f"(median of {lookup['rounds']} rounds of {lookup['calls']} calls).\n"
    )
    print("| phase | batch p50 | batch p95 | p95 / quiet | flood requests answered |")
    print("|---|---|---|---|---|")
    print(f"| quiet | {quiet['p50_ms']:.0f} ms | {quiet['p95_ms']:.0f} ms | 1.0 | — |")
    for label, phase in (("Basic password guesses on /send-requests", basic), ("guesses on /devices/pair", pairing)):
        ratio = phase["p95_ms"] / quiet["p95_ms"]
        answers = ", ".join(f"{status}: {count}" for status, count in sorted(phase["flood"].items()))
        print(f"| {label} | {phase['p50_ms']:.0f} ms | {phase['p95_ms']:.0f} ms | {ratio:.1f} | {answers} |")


def _setup(env) -> str:
    """A staff user with a real (PBKDF2) password and a paired uploader; returns the uploader's token."""
    script = (
        "from django.contrib.auth import get_user_model;"
        "from delivery.services import device_register, device_pairing_code_issue, device_pair;"
        f"staff = get_user_model().objects.create_user('bench', password='{STAFF_PASSWORD}', is_staff=True);"
        "d = device_register(name='bench uploader', role='uploader', actor=staff);"
        "code = device_pairing_code_issue(device=d, actor=staff);"
        "print(device_pair(code=code, client_name='bench')[1])"
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return out.stdout.decode().strip().splitlines()[-1]


def _token_lookup_timing(env) -> dict:
    script = """
import json, statistics, time
from delivery.models import Device
from delivery.services import device_authenticate, device_token_rotate
from delivery.services.devices import _token_hash
from delivery.tests.factories import active_device
device, token = active_device()
for n in range(200):
    active_device(name=f"filler {n}")
calls, rounds = 500, 7
def timed(call):
    started = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - started) / calls * 1e6
plain = lambda: Device.objects.filter(token_hash=_token_hash(token), status="active").first()
results = {"plain_us": [], "authenticate_us": [], "pending_us": []}
for _ in range(rounds):
    results["plain_us"].append(timed(plain))
    results["authenticate_us"].append(timed(lambda: device_authenticate(token)))
device_token_rotate(device=device)
for _ in range(rounds):
    results["pending_us"].append(timed(lambda: device_authenticate(token)))
print(json.dumps({**{k: statistics.median(v) for k, v in results.items()}, "calls": calls, "rounds": rounds}))
"""
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return json.loads(out.stdout.decode().strip().splitlines()[-1])


def _wait_for_server():
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{PORT}/api/schema/", timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise SystemExit("gunicorn did not start")


def _uploads(token: str, batch_numbers) -> dict:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    bodies = [json.dumps({"batch_id": f"flood-{b}", "messages": _messages(b)}).encode() for b in batch_numbers]
    durations = []
    with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", headers=headers, timeout=120) as client:
        for body in bodies:
            started = time.perf_counter()
            response = client.post("/api/v1/uploads", content=body)
            response.raise_for_status()
            durations.append(time.perf_counter() - started)
    durations.sort()
    return {
        "p50_ms": statistics.median(durations) * 1000,
        "p95_ms": durations[max(0, int(len(durations) * 0.95) - 1)] * 1000,
    }


def _messages(batch: int) -> list[dict]:
    start = datetime(2026, 11, 30, 9, 0, tzinfo=KST) + timedelta(hours=batch)
    return [
        {
            "room_key": f"flood-room-{i % 10}",
            "room_name": f"벤치 방 {i % 10}",
            "sender_name": "김대리",
            "sent_by_me": False,
            "text": f"배치 {batch} 메시지 {i}: 이번 주 발주 수량 확인 부탁드립니다",
            "sent_at": (start + timedelta(seconds=i)).isoformat(),
            "unread_count": 1,
            "client_message_id": f"f{batch}-m{i}",
            "attachments": {"photos": 0, "files": 0},
        }
        for i in range(BATCH_SIZE)
    ]


def _basic_guess(client: httpx.Client, n: int) -> int:
    credentials = base64.b64encode(f"bench:wrong-{n}".encode()).decode()
    response = client.post(
        "/api/v1/send-requests",
        json={"room_key": "flood-room-1", "items": [{"kind": "text", "text": "안녕하세요"}]},
        headers={"Authorization": f"Basic {credentials}", "Idempotency-Key": f"flood-{n}"},
    )
    return response.status_code


def _pairing_guess(client: httpx.Client, n: int) -> int:
    return client.post("/api/v1/devices/pair", json={"code": f"{n:06d}"[-6:], "name": "guess"}).status_code


def _with_flood(guess, flooders: int, measure) -> dict:
    stop = threading.Event()
    answers: collections.Counter = collections.Counter()
    lock = threading.Lock()

    def flood(offset: int):
        with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=120) as client:
            n = offset
            while not stop.is_set():
                status = guess(client, n)
                with lock:
                    answers[status] += 1
                n += flooders

    threads = [threading.Thread(target=flood, args=(i,)) for i in range(flooders)]
    for thread in threads:
        thread.start()
    time.sleep(1)  # the flood is under way before the first upload
    try:
        result = measure()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return {**result, "flood": dict(answers)}


if __name__ == "__main__":
    main()
