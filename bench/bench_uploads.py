"""Upload throughput through the real HTTP API vs a raw psycopg insert of the same rows, and a resend storm.

    .venv/bin/python bench/bench_uploads.py [--batches 20] [--workers 2] [--clients 2]
    BENCH_UPLOADS_DATABASE=vcs_bench_uploads BENCH_UPLOADS_REDIS_DB=6 BENCH_UPLOADS_PORT=8765 (the defaults; set
    them to run beside another copy of this bench)

Starts gunicorn (a real server process) on PostgreSQL + Redis against a scratch database, posts 500-message
batches over HTTP, and in the same run inserts the same rows with psycopg `executemany` into a copy of the
message table. The main figure is a Redis that has run longer than the resend key TTL (its window trusted on its
own); a second pass measures the hours after a Redis restart, when keys Redis does not know are read from the
database window. Then (b) posts a resend storm — every message repeated 50 times — and checks that exactly one
copy of each message is stored. Prints a markdown block for docs/benchmarks.md.
"""

import argparse
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
import psycopg
from scratch_database import database_drop, database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = os.environ.get("BENCH_UPLOADS_DATABASE", "vcs_bench_uploads")
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
REDIS_DB = int(os.environ.get("BENCH_UPLOADS_REDIS_DB", "6"))
REDIS_URL = f"redis://127.0.0.1:6379/{REDIS_DB}"
PORT = int(os.environ.get("BENCH_UPLOADS_PORT", "8765"))
KST = ZoneInfo("Asia/Seoul")
BATCH_SIZE = 500


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clients", type=int, default=2, help="concurrent uploaders")
    parser.add_argument("--storm-messages", type=int, default=200)
    args = parser.parse_args()

    env = {
        **os.environ,
        "DATABASE_URL": DATABASE_URL,
        "REDIS_URL": REDIS_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DJANGO_DEBUG": "false",
        "UPLOAD_RATE_PER_MINUTE": "1000000",
        "LOG_LEVEL": "WARNING",
    }
    database_recreate(DB_NAME)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    _redis("flushdb")
    # A Redis up for longer than the resend key TTL: the steady state the main figure measures.
    _redis("set", "vcs:resend:since", "0")
    token = _paired_uploader_token(env)

    server = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/gunicorn"),
            "config.wsgi",
            "-b",
            f"127.0.0.1:{PORT}",
            "-w",
            str(args.workers),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        _wait_for_server()
        api = _api_throughput(token, args.batches, args.clients, prefix="bench")
        raw = _raw_executemany(args.batches)
        _redis("flushdb")  # a Redis restart: for the next RESEND_KEY_TTL_SECONDS the database window is read too
        after_restart = _api_throughput(token, args.batches, args.clients, prefix="restart")
        storm = _resend_storm(token, args.storm_messages)
    finally:
        server.terminate()
        server.wait(timeout=10)
        database_drop(DB_NAME)
        _redis("flushdb", check=False)

    ratio = api["msgs_per_s"] / raw["msgs_per_s"]
    print("\n## Conversation upload\n")
    command = f"--batches {args.batches} --workers {args.workers} --clients {args.clients}"
    print(f"Command: `.venv/bin/python bench/bench_uploads.py {command}`")
    print(
        f"(gunicorn, {args.workers} sync workers, PostgreSQL + Redis on this machine, {BATCH_SIZE}-message batches)\n"
    )
    print("| measure | value |")
    print("|---|---|")
    batch_times = f"batch p50 {api['p50_ms']:.0f} ms, p95 {api['p95_ms']:.0f} ms"
    print(f"| API throughput | {api['msgs_per_s']:,.0f} messages/s ({batch_times}) |")
    print(f"| raw psycopg executemany, same rows | {raw['msgs_per_s']:,.0f} messages/s |")
    print(f"| API / raw | {ratio:.0%} (goal ≥ 25%) |")
    restart_times = f"batch p50 {after_restart['p50_ms']:.0f} ms, p95 {after_restart['p95_ms']:.0f} ms"
    print(
        f"| API throughput in the hours after a Redis restart | {after_restart['msgs_per_s']:,.0f} messages/s "
        f"({restart_times}; API / raw {after_restart['msgs_per_s'] / raw['msgs_per_s']:.0%}) |"
    )
    print(
        f"| resend storm ({storm['unique']} messages × 50) | {storm['dropped_per_s']:,.0f} dropped/s; "
        f"stored {storm['stored']} of {storm['unique']} unique, {storm['extra_copies']} extra copies |"
    )


def _redis(*command, check=True):
    subprocess.run(["redis-cli", "-n", str(REDIS_DB), *command], check=check, capture_output=True)


def _paired_uploader_token(env) -> str:
    script = (
        "from django.contrib.auth import get_user_model;"
        "from delivery.services import device_register, device_pairing_code_issue, device_pair;"
        "staff = get_user_model().objects.create_user('bench', is_staff=True);"
        "d = device_register(name='bench uploader', role='uploader', actor=staff);"
        "code = device_pairing_code_issue(device=d, actor=staff);"
        "print(device_pair(code=code, client_name='bench')[1])"
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return out.stdout.decode().strip().splitlines()[-1]


def _wait_for_server():
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{PORT}/api/schema/", timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise SystemExit("gunicorn did not start")


def _messages(batch: int, count: int = BATCH_SIZE, *, prefix: str = "bench") -> list[dict]:
    day = 0 if prefix == "bench" else 10
    start = datetime(2026, 11, 30, 9, 0, tzinfo=KST) + timedelta(days=day, hours=batch)
    return [
        {
            "room_key": f"bench-room-{i % 10}",
            "room_name": f"벤치 방 {i % 10}",
            "sender_name": "김대리",
            "sent_by_me": False,
            "text": f"{prefix} 배치 {batch} 메시지 {i}: 이번 주 발주 수량 확인 부탁드립니다",
            "sent_at": (start + timedelta(seconds=i)).isoformat(),
            "unread_count": 1,
            "client_message_id": f"{prefix}-b{batch}-m{i}",
            "attachments": {"photos": 0, "files": 0},
        }
        for i in range(count)
    ]


def _api_throughput(token: str, batches: int, clients: int, *, prefix: str) -> dict:
    """`clients` uploaders post their share of the batches at the same time, as several staff PCs do. Bodies are
    encoded before the clock starts: the server's work is measured, not the client's JSON encoding."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    bodies = [
        json.dumps({"batch_id": f"{prefix}-{b}", "messages": _messages(b, prefix=prefix)}).encode()
        for b in range(batches + 1)
    ]
    durations: list[float] = []

    def upload(share: list[bytes]):
        with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", headers=headers, timeout=60) as client:
            for body in share:
                t = time.perf_counter()
                response = client.post("/api/v1/uploads", content=body)
                response.raise_for_status()
                assert response.json()["stored"] == BATCH_SIZE, response.json()
                durations.append(time.perf_counter() - t)

    upload(bodies[:1])  # warm-up: rooms, connections
    durations.clear()
    threads = [threading.Thread(target=upload, args=(bodies[1 + i :: clients],)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    durations.sort()
    return {
        "msgs_per_s": batches * BATCH_SIZE / elapsed,
        "p50_ms": statistics.median(durations) * 1000,
        "p95_ms": durations[max(0, int(len(durations) * 0.95) - 1)] * 1000,
    }


def _raw_executemany(batches: int) -> dict:
    """The floor: the same rows, one executemany per batch, one commit each, no validation or dedup."""
    with psycopg.connect(DATABASE_URL) as conn:
        conn.execute("CREATE TABLE raw_message (LIKE conversations_message INCLUDING ALL)")
        conn.commit()
        room_ids = [r[0] for r in conn.execute("SELECT id FROM conversations_room ORDER BY id").fetchall()]
        batch_id = conn.execute("SELECT id FROM conversations_uploadbatch LIMIT 1").fetchone()[0]
        sql = (
            "INSERT INTO raw_message (room_id, batch_id, sender_name, sent_by_me, text, sent_at, unread_count,"
            " client_message_id, photo_count, file_count, is_tagged, cleaning, created_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, '{}', now())"
        )
        rows_by_batch = [
            [
                (
                    room_ids[i % len(room_ids)],
                    batch_id,
                    m["sender_name"],
                    m["sent_by_me"],
                    m["text"],
                    datetime.fromisoformat(m["sent_at"]),
                    m["unread_count"],
                    m["client_message_id"],
                    0,
                    0,
                    False,
                )
                for i, m in enumerate(_messages(b))
            ]
            for b in range(1, batches + 1)
        ]
        started = time.perf_counter()
        for rows in rows_by_batch:
            with conn.cursor() as cur:
                cur.executemany(sql, rows)
            conn.commit()
        elapsed = time.perf_counter() - started
    return {"msgs_per_s": batches * BATCH_SIZE / elapsed}


def _resend_storm(token: str, unique: int) -> dict:
    """Every message repeated 50 times at 2 s spacing, as the client does; 500 messages per batch."""
    start = datetime(2026, 12, 1, 9, 0, tzinfo=KST)
    storm = []
    for i in range(unique):
        for repeat in range(50):
            storm.append(
                {
                    "room_key": f"storm-room-{i % 5}",
                    "room_name": f"스톰 방 {i % 5}",
                    "sender_name": "박과장",
                    "sent_by_me": False,
                    "text": f"스톰 메시지 {i}",
                    "sent_at": (start + timedelta(minutes=i, seconds=2 * repeat)).isoformat(),
                    "unread_count": 2,
                    "attachments": {"photos": 0, "files": 0},
                }
            )
    storm.sort(key=lambda m: m["sent_at"])
    headers = {"Authorization": f"Bearer {token}"}
    dropped = 0
    with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", headers=headers, timeout=60) as client:
        started = time.perf_counter()
        for n in range(0, len(storm), BATCH_SIZE):
            response = client.post("/api/v1/uploads", json={"batch_id": f"storm-{n}", "messages": storm[n : n + 500]})
            response.raise_for_status()
            dropped += response.json()["dropped_resends"]
        elapsed = time.perf_counter() - started
    with psycopg.connect(DATABASE_URL) as conn:
        counts = conn.execute(
            "SELECT m.text, count(*) FROM conversations_message m JOIN conversations_room r ON r.id = m.room_id"
            " WHERE r.stable_key LIKE 'storm-room-%%' GROUP BY m.text"
        ).fetchall()
    return {
        "unique": unique,
        "stored": len(counts),
        "extra_copies": sum(c - 1 for _, c in counts),
        "dropped_per_s": dropped / elapsed,
    }


if __name__ == "__main__":
    main()
