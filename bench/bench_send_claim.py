"""Send-job claims on PostgreSQL: 4 concurrent claimer processes against a single-claimer baseline.

    .venv/bin/python bench/bench_send_claim.py [--jobs 2000] [--claimers 4] [--rate 20] [--seconds 15]

Recreates a scratch database `vcs_bench_send_claim`, migrates it, and runs two phases, each once with one
claimer (the baseline) and once with `--claimers` processes. Every claimer is its own process with its own
database connection, claiming through `send_job_claim` (select_for_update skip_locked, CAS, audit row) as a
sender device.

  drain   `--jobs` jobs are queued first; the claimers drain them as fast as they can → claims/s, and the
          latency of one claim call (p50/p95).
  steady  a producer process queues jobs at `--rate` per second for `--seconds`; the claimers poll (sleeping
          `--idle-ms` when nothing is waiting) → latency from queue to claim (`claimed_at - created_at`, p50/p95).

After each run it asserts zero double claims from the audit rows: exactly one `send_job.claimed` per job, every
job claimed, and no job id returned to two claimers. Prints a markdown block for docs/benchmarks.md.
"""

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from scratch_database import database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_send_claim"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
ENV = {
    "DATABASE_URL": DATABASE_URL,
    "REDIS_URL": "",
    "DJANGO_SETTINGS_MODULE": "config.settings.local",
    "DJANGO_DEBUG": "false",
    "LOG_LEVEL": "WARNING",
}


def _django_setup():
    os.environ.update(ENV)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


# --- processes ---


def _claimer(device_id, ready, start, stop, results, idle_seconds):
    """Claim until nothing is left (drain: `stop` is None) or until the producer is done and nothing is left."""
    _django_setup()
    from django.db import connection

    from delivery.models import Device
    from delivery.services import send_job_claim

    device = Device.objects.get(pk=device_id)
    claimed, call_seconds = [], []
    ready.put(device_id)
    start.wait()
    while True:
        # Read before claiming: once the producer has stopped, an empty claim means nothing is left.
        producer_done = stop is None or stop.is_set()
        began = time.perf_counter()
        job = send_job_claim(device=device)
        if job is not None:
            call_seconds.append(time.perf_counter() - began)
            claimed.append(job.pk)
            continue
        if producer_done:
            break
        time.sleep(idle_seconds)
    connection.close()
    results.put((device_id, claimed, call_seconds))


def _producer(room_id, prefix, ready, start, stop, rate, seconds):
    _django_setup()
    from django.db import connection

    from conversations.models import Room
    from delivery.services import send_request_submit

    room = Room.objects.get(pk=room_id)
    ready.put("producer")
    start.wait()
    began = time.perf_counter()
    n = 0
    while time.perf_counter() - began < seconds:
        due = began + n / rate
        pause = due - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        _submit(send_request_submit, room, f"{prefix}-{n}")
        n += 1
    stop.set()
    connection.close()


def _submit(send_request_submit, room, key):
    send_request_submit(room=room, items=[{"kind": "text", "text": f"답변 {key}"}], idempotency_key=key, actor="bench")


# --- phases ---


def _phase_setup(label, claimers):
    """A room of its own and `claimers` sender devices that serve it."""
    from conversations.room_services import room_create
    from delivery.models import Device
    from delivery.services import sender_rooms_report

    room = room_create(stable_key=f"bench-{label}", name=f"(9999) 벤치 {label}", actor_id="bench")
    devices = []
    for n in range(claimers):
        device = Device.objects.create(name=f"bench-{label}-{n}", role=Device.Role.SENDER, status=Device.Status.ACTIVE)
        sender_rooms_report(device=device, rooms=[{"room_key": room.stable_key}])
        devices.append(device)
    return room, devices


def _run_claimers(ctx, devices, stop, idle_seconds, producer_args=None):
    ready, start, results = ctx.Queue(), ctx.Event(), ctx.Queue()
    processes = [
        ctx.Process(target=_claimer, args=(device.pk, ready, start, stop, results, idle_seconds)) for device in devices
    ]
    if producer_args:
        room_id, prefix, rate, seconds = producer_args
        processes.append(ctx.Process(target=_producer, args=(room_id, prefix, ready, start, stop, rate, seconds)))
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=120)  # every process has set Django up and waits on `start`
    began = time.perf_counter()
    start.set()
    outcomes = [results.get(timeout=600) for _ in devices]
    elapsed = time.perf_counter() - began
    for process in processes:
        process.join(timeout=60)
    return outcomes, elapsed


def _assert_no_double_claims(room, outcomes):
    from django.db.models import Count

    from delivery.models import SendJob
    from monitoring.models import AuditEvent

    returned = [job_id for _, claimed, _ in outcomes for job_id in claimed]
    job_ids = set(SendJob.objects.filter(room=room).values_list("pk", flat=True))
    per_job = dict(
        AuditEvent.objects.filter(
            action="send_job.claimed", target_type="delivery.sendjob", target_id__in=[str(pk) for pk in job_ids]
        )
        .values_list("target_id")
        .annotate(claims=Count("id"))
    )
    assert len(returned) == len(set(returned)), "a job was returned to two claimers"
    assert set(returned) == job_ids, "not every job was claimed"
    assert {int(pk) for pk in per_job} == job_ids, "a job has no claim audit row"
    assert set(per_job.values()) == {1}, "a job has more than one claim audit row"
    assert not SendJob.objects.filter(room=room).exclude(state=SendJob.State.CLAIMED).exists()
    return len(returned)


def _drain(ctx, label, claimers, jobs):
    from delivery.services import send_request_submit

    room, devices = _phase_setup(label, claimers)
    for n in range(jobs):
        _submit(send_request_submit, room, f"{label}-{n}")
    outcomes, elapsed = _run_claimers(ctx, devices, stop=None, idle_seconds=0)
    claimed = _assert_no_double_claims(room, outcomes)
    calls = sorted(seconds for _, _, call_seconds in outcomes for seconds in call_seconds)
    return {
        "claimers": claimers,
        "claims": claimed,
        "seconds": elapsed,
        "claims_per_s": claimed / elapsed,
        "call_p50_ms": statistics.median(calls) * 1000,
        "call_p95_ms": _p95(calls) * 1000,
        "per_claimer": sorted(len(claimed_ids) for _, claimed_ids, _ in outcomes),
    }


def _steady(ctx, label, claimers, rate, seconds, idle_seconds):
    from delivery.models import SendJob

    room, devices = _phase_setup(label, claimers)
    stop = ctx.Event()
    outcomes, _ = _run_claimers(ctx, devices, stop, idle_seconds, producer_args=(room.pk, label, rate, seconds))
    claimed = _assert_no_double_claims(room, outcomes)
    waits = sorted(
        (claimed_at - created_at).total_seconds()
        for created_at, claimed_at in SendJob.objects.filter(room=room).values_list("created_at", "claimed_at")
    )
    return {
        "claimers": claimers,
        "claims": claimed,
        "arrivals_per_s": claimed / seconds,
        "wait_p50_ms": statistics.median(waits) * 1000,
        "wait_p95_ms": _p95(waits) * 1000,
        "wait_max_ms": waits[-1] * 1000,
    }


def _p95(values):
    return statistics.quantiles(values, n=100, method="inclusive")[94]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--claimers", type=int, default=4)
    parser.add_argument("--rate", type=float, default=20.0, help="jobs queued per second in the steady phase")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of the steady phase")
    parser.add_argument("--idle-ms", type=float, default=20.0, help="a claimer's sleep when nothing is waiting")
    args = parser.parse_args()

    database_recreate(DB_NAME)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env={**os.environ, **ENV}, check=True)
    _django_setup()
    ctx = multiprocessing.get_context("spawn")
    idle = args.idle_ms / 1000

    drain_base = _drain(ctx, "drain-1", 1, args.jobs)
    drain_many = _drain(ctx, f"drain-{args.claimers}", args.claimers, args.jobs)
    steady_base = _steady(ctx, "steady-1", 1, args.rate, args.seconds, idle)
    steady_many = _steady(ctx, f"steady-{args.claimers}", args.claimers, args.rate, args.seconds, idle)

    command = (
        f"`.venv/bin/python bench/bench_send_claim.py --jobs {args.jobs} --claimers {args.claimers} "
        f"--rate {args.rate:g} --seconds {args.seconds:g} --idle-ms {args.idle_ms:g}`"
    )
    print("\n## Send-job claims\n")
    print(f"Command: {command}")
    print(f"(PostgreSQL 127.0.0.1, scratch database `{DB_NAME}`, {os.cpu_count()} CPUs; one process per claimer)\n")
    print(f"| drain, {args.jobs} queued | claimers | claimed | claims/s | claim call p50 | p95 | jobs per claimer |")
    print("|---|---|---|---|---|---|---|")
    for name, row in (("baseline", drain_base), ("concurrent", drain_many)):
        print(
            f"| {name} | {row['claimers']} | {row['claims']} | {row['claims_per_s']:.0f} | "
            f"{row['call_p50_ms']:.1f} ms | {row['call_p95_ms']:.1f} ms | {row['per_claimer']} |"
        )
    throughput_ratio = drain_many["claims_per_s"] / drain_base["claims_per_s"]
    print(f"\nThroughput ratio {args.claimers} claimers / 1 claimer: {throughput_ratio:.2f}×\n")
    print(
        f"| steady, {args.rate:g} jobs/s asked for {args.seconds:g} s | claimers | jobs | arrived/s | "
        "queue→claim p50 | p95 | max |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, row in (("baseline", steady_base), ("concurrent", steady_many)):
        print(
            f"| {name} | {row['claimers']} | {row['claims']} | {row['arrivals_per_s']:.1f} | "
            f"{row['wait_p50_ms']:.1f} ms | {row['wait_p95_ms']:.1f} ms | {row['wait_max_ms']:.1f} ms |"
        )
    wait_ratio = steady_many["wait_p95_ms"] / steady_base["wait_p95_ms"]
    print(f"\nqueue→claim p95 ratio {args.claimers} claimers / 1 claimer: {wait_ratio:.2f}×")
    print("\nDouble claims: 0 (asserted per run: one `send_job.claimed` audit row per job, no job id returned twice).")


if __name__ == "__main__":
    main()
