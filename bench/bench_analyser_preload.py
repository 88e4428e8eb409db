"""What preloading the morphological analyser in a worker's main process saves its prefork children.

    env -u DATABASE_URL -u REDIS_URL .venv/bin/python bench/bench_analyser_preload.py [--children 2] [--runs 2]

Each run is a fresh parent process that starts as a Celery worker's main process does (Django set up, the task
modules imported), then, by mode:

- `lazy`: nothing more (before `celery_worker_init`) — each child loads the analyser on its first question;
- `hook -Q delivery`: `agent.warmup.celery_worker_init` for a worker not consuming the agent queue, as
  `worker_init` calls it: no analyser, only `gc.collect()` + `gc.freeze()` in the parent;
- `preload, no freeze`: `agent.llm.morphology.analyser_load()` alone;
- `hook -Q agent`: `celery_worker_init` for a worker consuming the agent queue: the analyser, then the freeze.

It then forks the children as billiard's prefork pool does (fork start method). Each child ends its start-up as
`agent.warmup.process_warm` does (`gc.collect()`, `gc.freeze()`; the name indexes need a database and are left
out), then times its first question's morphology (`non_nouns` + `word_nouns`; one child at a time, so the two
loads of `lazy` do not share the cores), reads the other questions and collects garbage once more. With every
child alive, the parent reads `/proc/<pid>/smaps_rollup` of itself and each child: RSS, PSS (shared pages split
between the processes sharing them) and USS (pages of that process alone). No database, no broker.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_morphology import QUESTIONS as MORPHOLOGY_QUESTIONS

ROOT = Path(__file__).resolve().parent.parent
MODES = ("lazy", "hook -Q delivery", "preload, no freeze", "hook -Q agent")
# The questions bench_morphology.py times, so a child's first question is one the analyser bench knows.
QUESTIONS = ["재고 실사는 얼마나 자주 받고 해요?", *MORPHOLOGY_QUESTIONS]


def _memory_mb(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0]) / 1024
    return {
        "rss": round(fields["Rss"]),
        "pss": round(fields["Pss"]),
        "uss": round(fields["Private_Clean"] + fields["Private_Dirty"]),
    }


def _child(first_lock, results, done) -> None:
    import gc

    from agent.llm import morphology

    gc.collect()
    gc.freeze()
    with first_lock:
        started = time.perf_counter()
        morphology.non_nouns(QUESTIONS[0])
        morphology.word_nouns(QUESTIONS[0])
        first_ms = (time.perf_counter() - started) * 1000
    for question in QUESTIONS[1:]:
        morphology.non_nouns(question)
        morphology.word_nouns(question)
    gc.collect()
    results.put({"pid": os.getpid(), "first_ms": round(first_ms, 1)})
    done.wait()


def _parent(mode: str, children: int) -> dict:
    import multiprocessing
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from config.celery import app

    app.loader.import_default_modules()  # the task modules, as the worker's main process imports them
    from agent import warmup
    from agent.llm import morphology

    started = time.perf_counter()
    if mode == "preload, no freeze":
        morphology.analyser_load()
    elif mode.startswith("hook"):
        app.amqp.queues.select([mode.split()[-1]])  # the worker's `-Q`
        warmup.celery_worker_init(sender=SimpleNamespace(app=app))
    preload_seconds = round(time.perf_counter() - started, 2)
    context = multiprocessing.get_context("fork")
    first_lock, results, done = context.Lock(), context.Queue(), context.Event()
    processes = [context.Process(target=_child, args=(first_lock, results, done)) for _ in range(children)]
    for process in processes:
        process.start()
    reports = [results.get(timeout=300) for _ in processes]
    memory = {"parent": _memory_mb(os.getpid())}
    for index, report in enumerate(sorted(reports, key=lambda report: report["pid"])):
        memory[f"child{index + 1}"] = _memory_mb(report["pid"])
    done.set()
    for process in processes:
        process.join()
    return {
        "mode": mode,
        "preload_seconds": preload_seconds,
        "first_ms": [report["first_ms"] for report in reports],
        "memory": memory,
        "total_pss": sum(entry["pss"] for entry in memory.values()),
        "total_uss": sum(entry["uss"] for entry in memory.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--children", type=int, default=2)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(_parent(args.mode, args.children)))
        return
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for run in range(args.runs):
        for mode in MODES:
            output = subprocess.run(
                [sys.executable, __file__, "--mode", mode, "--children", str(args.children)],
                check=True,
                capture_output=True,
                text=True,
                cwd=ROOT,
            ).stdout
            result = json.loads(output.strip().splitlines()[-1])
            memory = " ".join(
                f"{name} {entry['rss']}/{entry['pss']}/{entry['uss']}" for name, entry in result["memory"].items()
            )
            print(
                f"run {run + 1} {mode:18} parent hook {result['preload_seconds']} s, first question "
                f"{statistics.median(result['first_ms'])} ms (children {result['first_ms']}), "
                f"PSS total {result['total_pss']} MB, USS total {result['total_uss']} MB; "
                f"RSS/PSS/USS MB: {memory}; load {os.getloadavg()[0]:.2f}"
            )


if __name__ == "__main__":
    main()
