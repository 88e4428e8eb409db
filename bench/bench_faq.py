"""FAQ retrieval (`faq_search`) at 20,000 entries in Qdrant local mode, split by stage.

    .venv/bin/python bench/bench_faq.py [--entries 20000] [--queries 200]

Builds a scratch database `vcs_bench_faq` (dropped and re-created) and a temporary Qdrant folder, loads the demo
FAQ expanded to N entries through `faq_ingest_jsonl` (the real write path: rows, versions, audit rows, after-commit
indexing), then runs the labelled questions of `agent/tests/data/faq_eval.jsonl` (cycled) through
`faq_search_traced` with the local embedding and reranker. Measured in the same run:
(a) the default local-mode pipeline (dense only: stored questions and whole passages), (a') the same with the
    stored questions only, 20 candidates at 0.40 (the search before 2026-12-04), (b) hybrid dense + sparse
    (`FAQ_HYBRID_SEARCH=True`, the server default) on a smaller sample, and
(c) a baseline: brute-force numpy cosine over the same 20,000 question vectors (what any vector index has to
    beat; a Qdrant server's HNSW answers in about that time or less).
Prints p50/p95 per stage and a markdown block for docs/benchmarks.md.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scratch_database import database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_faq"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
SEED = 20261130
STAGES = ("sync", "embed", "dense", "sparse", "rerank", "keyword", "named_subject")
HYBRID_SAMPLE = 40
# Prefixes that turn the 201 demo questions into distinct, realistic variants (per brand, channel or centre).
SCOPE_OWNERS = "한빛 다온 누리 가람 솔빛 하늘 초록 새봄 바른 참된 해담 프레시 미래 동방 한결 가온 대한 서해 남해 바다"
SCOPE_KINDS = "신선 냉동 상온 온라인 PB"
SCOPES = [f"{who} {what}" for who in SCOPE_OWNERS.split(" ") for what in SCOPE_KINDS.split(" ")]


def _setup_django(qdrant_path: str):
    env = {**os.environ, "DATABASE_URL": DATABASE_URL, "DJANGO_SETTINGS_MODULE": "config.settings.local"}
    env["DJANGO_DEBUG"] = "false"
    env["QDRANT_PATH"] = qdrant_path
    env.pop("QDRANT_URL", None)
    env.pop("EMBEDDINGS_BASE_URL", None)
    env.pop("RERANK_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DJANGO_DEBUG", "QDRANT_PATH")})
    for name in ("REDIS_URL", "QDRANT_URL", "EMBEDDINGS_BASE_URL", "RERANK_URL"):
        os.environ.pop(name, None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _expanded_faq(entries: int, path: Path) -> None:
    demo = [json.loads(line) for line in (ROOT / "demo/data/faq.jsonl").read_text(encoding="utf-8").splitlines()]
    demo = {(row.get("question") or row.get("q")): row for row in demo}  # one line per question
    rows = list(demo.values())
    with path.open("w", encoding="utf-8") as out:
        for number in range(entries):
            base = rows[number % len(rows)]
            scope_index = number // len(rows)
            question, answer = base.get("question") or base.get("q"), base.get("answer") or base.get("a")
            if scope_index:
                scope = SCOPES[(scope_index - 1) % len(SCOPES)] + (
                    "" if scope_index <= len(SCOPES) else f" {scope_index}"
                )
                question, answer = f"[{scope}] {question}", f"{scope} 상품 기준: {answer}"
            row = {**base, "question": question, "answer": answer, "source_id": f"BENCH-{number}"}
            row.pop("q", None), row.pop("a", None)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def _pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _run(queries, label):
    from agent.knowledge.faq import faq_search_traced

    totals, stages = [], {stage: [] for stage in STAGES}
    for query in queries:
        started = time.perf_counter()
        _, trace = faq_search_traced(query)
        totals.append((time.perf_counter() - started) * 1000)
        for stage in STAGES:
            stages[stage].append(trace.timings_ms.get(stage, 0.0))
    row = {"label": label, "p50": _pct(totals, 50), "p95": _pct(totals, 95)}
    row.update({f"{stage}_p50": _pct(stages[stage], 50) for stage in STAGES})
    row.update({f"{stage}_p95": _pct(stages[stage], 95) for stage in STAGES})
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--reuse", metavar="QDRANT_DIR", help="search an index loaded by an earlier run (no ingest)")
    args = parser.parse_args()
    command = f".venv/bin/python bench/bench_faq.py --entries {args.entries} --queries {args.queries}"

    if not args.reuse:
        database_recreate(DB_NAME)
    qdrant_dir = args.reuse or tempfile.mkdtemp(prefix="bench_faq_qdrant_")
    _setup_django(qdrant_dir)
    import numpy as np
    from django.conf import settings
    from django.db import connection

    from agent.knowledge.embeddings import embedder_get
    from agent.knowledge.faq_index import faq_collection_name, faq_index_client, faq_index_vector_count
    from agent.knowledge.faq_services import faq_ingest_jsonl

    ingest_line = f"Index reused from `{qdrant_dir}` (loaded by an earlier run of the same command)."
    if not args.reuse:
        source = Path(qdrant_dir) / "faq.jsonl"
        _expanded_faq(args.entries, source)
        started = time.perf_counter()
        report = faq_ingest_jsonl(source)
        ingest_seconds = time.perf_counter() - started
        ingest_line = (
            f"Ingest through `faq_ingest_jsonl` (rows, versions, audit rows, embeddings, Qdrant local upsert): "
            f"{ingest_seconds:.0f} s for {report.created:,} entries (index in `{qdrant_dir}`; `--reuse` it)."
        )
    print(ingest_line, f"{faq_index_vector_count()} vectors")

    evaluation = [json.loads(line) for line in (ROOT / "agent/tests/data/faq_eval.jsonl").read_text().splitlines()]
    rng = random.Random(SEED)
    queries = [evaluation[index % len(evaluation)]["query"] for index in range(args.queries)]
    rng.shuffle(queries)

    from agent.knowledge.faq import faq_search

    started = time.perf_counter()
    faq_search("워밍업: 반품 절차")  # loads the model and reconciles the index once, outside the measurement
    warmup_seconds = time.perf_counter() - started
    rows = []
    settings.FAQ_HYBRID_SEARCH = False
    rows.append(_run(queries, f"dense only, local mode (default), {len(queries)} queries"))
    # Baseline in the same run: the search before the passage search (stored questions only, 20 candidates at 0.40).
    defaults = (settings.FAQ_PASSAGE_SEARCH, settings.FAQ_RERANK_CANDIDATES, settings.FAQ_SCORE_THRESHOLD_LOCAL)
    settings.FAQ_PASSAGE_SEARCH, settings.FAQ_RERANK_CANDIDATES, settings.FAQ_SCORE_THRESHOLD_LOCAL = False, 20, 0.40
    rows.append(
        _run(queries, f"stored questions only, 20 candidates at 0.40 (before 2026-12-04), {len(queries)} queries")
    )
    settings.FAQ_PASSAGE_SEARCH, settings.FAQ_RERANK_CANDIDATES, settings.FAQ_SCORE_THRESHOLD_LOCAL = defaults
    # Local-mode sparse search scans every point in Python: a smaller sample keeps the run short.
    hybrid_queries = queries[:HYBRID_SAMPLE]
    settings.FAQ_HYBRID_SEARCH = True
    rows.append(_run(hybrid_queries, f"hybrid (dense + sparse), local mode, {len(hybrid_queries)} queries"))

    # Baseline: brute-force cosine in numpy over the same question vectors, read back from the index.
    client, name = faq_index_client(), faq_collection_name()
    stored, offset = [], None
    while True:
        records, offset = client.scroll(name, limit=2048, offset=offset, with_payload=False, with_vectors=["dense"])
        stored.extend(record.vector["dense"] for record in records)
        if offset is None:
            break
    matrix = np.asarray(stored, dtype=np.float32)
    query_vectors = embedder_get().embed_queries(queries)
    brute = []
    for vector in query_vectors:
        started = time.perf_counter()
        scores = matrix @ vector
        np.argpartition(-scores, 30)[:30]
        brute.append((time.perf_counter() - started) * 1000)
    connection.close()

    print()
    print(f"## FAQ retrieval\n\nCommand: `{command}` ({args.entries:,} entries, {args.queries} queries, 2-core VM).\n")
    print(ingest_line + "\n")
    header = "| run | total p50 | total p95 | " + " | ".join(f"{stage} p50/p95" for stage in STAGES) + " |"
    print(header)
    print("|" + "---|" * (3 + len(STAGES)))
    for row in rows:
        cells = " | ".join(f"{row[f'{stage}_p50']:.1f} / {row[f'{stage}_p95']:.1f}" for stage in STAGES)
        print(f"| {row['label']} | {row['p50']:.1f} ms | {row['p95']:.1f} ms | {cells} |")
    print(
        f"| baseline: numpy brute-force cosine, top 30 of {len(matrix):,} | {_pct(brute, 50):.2f} ms | "
        f"{_pct(brute, 95):.2f} ms |" + " |" * len(STAGES)
    )
    dense_only, questions_only, hybrid = rows
    print(
        f"\nFirst search in a process (open the local folder, load the model, reconcile): {warmup_seconds:.1f} s. "
        f"Qdrant local-mode dense search vs the numpy baseline: "
        f"{dense_only['dense_p50'] / max(_pct(brute, 50), 1e-6):.0f}× at p50; "
        f"hybrid / dense-only total p95: {hybrid['p95'] / dense_only['p95']:.1f}×; default / stored questions only "
        f"total p50: {dense_only['p50'] / questions_only['p50']:.1f}×, "
        f"p95: {dense_only['p95'] / questions_only['p95']:.1f}×."
    )


if __name__ == "__main__":
    main()
