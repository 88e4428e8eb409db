"""Resident memory of one worker process, part by part: what a Celery agent worker (or a gunicorn worker) holds.

    .venv/bin/python bench/bench_memory.py [--vendors 2000]

A scratch database `vcs_bench_memory` (dropped at the end) gets the demo data (30 vendors, records, 201 FAQ entries,
21 hub documents in 13 workspaces) plus `--vendors` synthetic vendors for the name indexes; the FAQ index and the
hub files live in a temporary folder. Then a fresh child process measures VmRSS after each step, in the order a
worker meets them: Django loaded; the name indexes (resolution index, masker, hub lexicon, verification names —
`agent.warmup.process_warm`); the local embedding model (one query); the FAQ index opened in local mode and
searched; every hub workspace loaded (one search per workspace); one full question through `evidence_for`.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_memory"
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _environment(workdir: Path) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": DATABASE_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "QDRANT_PATH": str(workdir / "qdrant"),
        "LIGHTRAG_WORKING_DIR": str(workdir / "lightrag"),
        "LOG_LEVEL": "WARNING",
    }
    for name in ("REDIS_URL", "QDRANT_URL", "EMBEDDINGS_BASE_URL", "RERANK_URL", "OPENAI_BASE_URL", "LLM_MODEL"):
        env.pop(name, None)
    return env


def _load(vendors: int) -> None:
    import django

    django.setup()
    from agent.knowledge.faq_index import faq_index_reset
    from agent.knowledge.faq_services import faq_ingest_jsonl
    from agent.knowledge.hub import hub_demo_load
    from agent.knowledge.hub_runtime import runtime_reset
    from vendors.models import Vendor
    from vendors.records import demo_records_load
    from vendors.services import vendors_import_csv

    data = ROOT / "demo" / "data"
    vendors_import_csv(data / "vendors.csv")
    demo_records_load()
    Vendor.objects.bulk_create(
        Vendor(code=f"9{number:05d}", name=f"벤치상사{number}", aliases=[f"벤치{number}"]) for number in range(vendors)
    )
    faq_ingest_jsonl(data / "faq.jsonl")
    hub_demo_load()
    faq_index_reset()
    runtime_reset()


def _measure() -> dict:
    steps = {"django": _rss_mb()}
    import django

    django.setup()
    steps["django"] = _rss_mb()
    from agent.knowledge.embeddings import embedder_get
    from agent.knowledge.evidence import evidence_for
    from agent.knowledge.faq import faq_search
    from agent.knowledge.hub import hub_search
    from agent.models import KnowledgeWorkspace
    from agent.warmup import process_warm
    from vendors.models import Vendor

    process_warm()
    steps["name indexes (resolution, masker, lexicon, verification)"] = _rss_mb()
    embedder_get().embed_queries(["반품 접수 방법"])
    steps["local embedding model"] = _rss_mb()
    faq_search("반품 접수는 어떻게 하나요?")
    steps["FAQ index (local mode, 201 entries) + one search"] = _rss_mb()
    for slug in KnowledgeWorkspace.objects.values_list("slug", flat=True):
        hub_search("반품 정산 물류 기준 안내", workspaces=[slug])
    steps["hub: 13 workspace instances loaded"] = _rss_mb()
    evidence_for("반품 택배비는 얼마인가요?", Vendor.objects.order_by("pk").first())
    steps["one question's evidence"] = _rss_mb()
    return steps


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vendors", type=int, default=2000)
    parser.add_argument("--child", choices=["load", "measure"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.child == "load":
        _load(args.vendors)
        return
    if args.child == "measure":
        print(json.dumps(_measure()))
        return
    with tempfile.TemporaryDirectory() as folder:
        env = _environment(Path(folder))
        with psycopg.connect(PG_ADMIN, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
            connection.execute(f"CREATE DATABASE {DB_NAME}")
        try:
            subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
            subprocess.run(
                [sys.executable, __file__, "--child", "load", "--vendors", str(args.vendors)], env=env, check=True
            )
            output = subprocess.run(
                [sys.executable, __file__, "--child", "measure"], env=env, check=True, capture_output=True, text=True
            )
        finally:
            with psycopg.connect(PG_ADMIN, autocommit=True) as connection:
                connection.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
    steps = json.loads(output.stdout.strip().splitlines()[-1])
    previous = 0.0
    print(f"| step ({args.vendors + 30:,} vendors) | RSS MB | added MB |\n|---|---:|---:|")
    for step, rss in steps.items():
        print(f"| {step} | {rss:.0f} | {rss - previous:+.0f} |")
        previous = rss
    print(f"\nload average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
