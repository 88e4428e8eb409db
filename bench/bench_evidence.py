"""`evidence_for` with 100,000 records, 20,000 FAQ entries and 13 loaded hub workspaces, split by stage.

    .venv/bin/python bench/bench_evidence.py [--records 100000] [--vendors 2000] [--faq 20000]
        [--docs-per-workspace 6] [--questions 100] [--hybrid-questions 10] [--overlap-questions 60]
        [--max-minutes 40] [--keep-db]

Builds a scratch PostgreSQL database `vcs_bench_evidence` (dropped and re-created, migrated), a temporary Qdrant
folder (local mode) and a temporary LightRAG working dir, with Redis database 3 as the cache (flushed before and
after). Loads:
- the demo vendors and brands, then 2,000 bench vendors with 100,000 records and their products, bulk-inserted with
  the search text from `vendors.records` (generators shared with bench_records.py), then VACUUM ANALYZE;
- 20,000 FAQ entries (the demo FAQ expanded as in bench_faq.py) bulk-inserted with one version row each, then
  indexed by `faq_index_rebuild()` (embed + upsert from the database, the `rebuild_faq_index` path);
- the demo documents of the 13 workspaces (`hub_demo_load`) plus synthetic editions of them naming bench vendors
  (bench_hub.py), through `hub_document_ingest` with the local extractor.

Then asks realistic Korean questions, each from a random vendor and each text once (the hub caches query vectors
by text): a third about the vendor's own records (`참기름은 단가가 얼마예요?`), the labelled FAQ questions and the
hub questions of bench_hub.py. Measured in the same run, interleaved per question (alternating which goes first):
(a) `evidence_for` with the default budget (records + FAQ + hub, masking, de-duplication), Qdrant local mode,
    dense-only FAQ (the local-mode default) — total and per stage from `timings_ms`, the FAQ's own stages from its
    trace (`faq_search_traced`) with the keyword retry's database read apart, and the hub's time on its loop thread;
(b) baseline: `evidence_for` with only the records budget (records + masking).
On other FAQ questions: (c) dense-only and hybrid (`FAQ_HYBRID_SEARCH=True`) evidence on the same texts.
(d) The hub's overlap: `evidence_for` as shipped against the sources one after the other, on some of the questions
again, without and with a network-wait stand-in before each FAQ search.
To show what a Qdrant server changes, in the same run: a numpy brute-force top-30 over the same 20,000 question
vectors (an upper bound for a server's HNSW search) and the client-side decoding of a server response of the same
points (`QueryResponse` JSON with the two vectors and payload), projected per question in place of the local
dense search. The scratch database, folders and Redis database are removed at the end unless --keep-db.
"""

import argparse
import json
import logging
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import psycopg
from bench_faq import _expanded_faq
from bench_hub import QUESTIONS as HUB_QUESTIONS
from bench_hub import _demo_reference_data, _synthetic_documents
from bench_records import ASKS, BRANDS, PARTICLES, records_bulk_load
from scratch_database import database_drop, database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_evidence"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
REDIS_URL = "redis://127.0.0.1:6379/3"
SEED = 20261207
STAGES = ("record", "faq", "hub", "mask")
FAQ_STAGES = ("sync", "embed", "dense", "sparse", "rerank", "keyword")
# Never let a configured endpoint turn the bench into a network test (or the hub into the LLM extractor).
UNSET = ("QDRANT_URL", "EMBEDDINGS_BASE_URL", "RERANK_URL", "KNOWLEDGE_HUB_LLM_BASE_URL", "OPENAI_BASE_URL")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _redis_flush():
    subprocess.run(["redis-cli", "-n", REDIS_URL.rsplit("/", 1)[1], "flushdb"], check=True, capture_output=True)


def _django_setup(scratch: Path):
    env = {**os.environ, "DATABASE_URL": DATABASE_URL, "DJANGO_SETTINGS_MODULE": "config.settings.local"}
    env.update(
        DJANGO_DEBUG="false",
        REDIS_URL=REDIS_URL,
        QDRANT_PATH=str(scratch / "qdrant"),
        LIGHTRAG_WORKING_DIR=str(scratch / "lightrag"),
    )
    for name in UNSET:
        env.pop(name, None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)
    for name in UNSET:
        os.environ.pop(name, None)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    logging.getLogger("agent.knowledge").setLevel(logging.ERROR)  # a warning per query would time the console


def _records_load(rng: random.Random, *, vendors: int, records: int, sigma: float) -> dict:
    """Bench vendors with records and products (bench_records.py's loader); returns {vendor: its product terms}."""
    from vendors.models import Brand

    Brand.objects.bulk_create([Brand(name=name) for name in BRANDS], ignore_conflicts=True)  # some are demo brands
    return records_bulk_load(rng, list(Brand.objects.all()), vendors=vendors, records=records, sigma=sigma)


def _faq_load(entries: int, scratch: Path) -> tuple[int, float]:
    """Rows and version rows in bulk, then the index rebuilt from the database; returns (indexed, seconds)."""
    from django.utils import timezone

    from agent.knowledge.faq_index import faq_index_rebuild
    from agent.knowledge.faq_services import faq_search_bigrams, faq_snapshot, question_key
    from agent.models import FaqEntry, FaqVersion

    source = scratch / "faq.jsonl"
    _expanded_faq(entries, source)
    rows, keys = [], set()
    for line in source.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        key = question_key(row["question"])
        if key in keys:
            continue
        keys.add(key)
        created_at = datetime.fromisoformat(row["source_created_at"])
        rows.append(
            FaqEntry(
                question=row["question"],
                answer=row["answer"],
                search_bigrams=faq_search_bigrams(row["question"], row["answer"]),
                question_key=key,
                category=row.get("category", ""),
                url=row.get("url", ""),
                source=row.get("source", ""),
                source_id=row.get("source_id", ""),
                source_created_at=created_at if created_at.tzinfo else timezone.make_aware(created_at),
            )
        )
    saved = FaqEntry.objects.bulk_create(rows, batch_size=2000)
    FaqVersion.objects.bulk_create(
        [
            FaqVersion(entry=entry, entry_ref=entry.pk, snapshot=faq_snapshot(entry), reason="created", actor="bench")
            for entry in saved
        ],
        batch_size=2000,
    )
    started = time.perf_counter()
    indexed = faq_index_rebuild()
    return indexed, time.perf_counter() - started


def _hub_load(docs_per_workspace: int, vendor_names: list[str]) -> dict:
    from agent.knowledge.hub import hub_demo_load, hub_document_ingest
    from agent.models import KnowledgeDocument

    demo = sum(hub_demo_load(actor="bench").values())
    for workspace, title, content in _synthetic_documents(docs_per_workspace, vendor_names):
        document = hub_document_ingest(workspace=workspace, title=title, content=content, actor="bench")
        assert document.status == KnowledgeDocument.Status.INGESTED, document.error
    totals = KnowledgeDocument.objects.values_list("chunk_count", "entity_count", "relation_count")
    chunks, entities, relations = (sum(column) for column in zip(*totals, strict=True))
    return {"demo": demo, "documents": len(totals), "chunks": chunks, "entities": entities, "relations": relations}


def _questions(rng: random.Random, terms_by_vendor: dict, count: int) -> tuple[list, list, list]:
    """(measured, hybrid sample, warm-up) lists of (kind, vendor, text); every text distinct across all three."""
    evaluation = [json.loads(line)["query"] for line in (ROOT / "agent/tests/data/faq_eval.jsonl").open()]
    evaluation = list(dict.fromkeys(evaluation))
    rng.shuffle(evaluation)
    vendors = list(terms_by_vendor)
    hub_count = min(len(HUB_QUESTIONS), count // 3)
    faq_count = min(len(evaluation) - 10, (count - hub_count) // 2)  # keep some FAQ questions for the hybrid run
    seen: set[str] = set()

    def record_question() -> tuple:
        while True:
            vendor = rng.choice(vendors)
            term = rng.choice(terms_by_vendor[vendor])
            text = f"{term}{rng.choice(PARTICLES)} {rng.choice(ASKS)}"
            if text not in seen:
                seen.add(text)
                return "records", vendor, text

    measured = [("hub", rng.choice(vendors), text) for text, _ in HUB_QUESTIONS[:hub_count]]
    measured += [("faq", rng.choice(vendors), text) for text in evaluation[:faq_count]]
    seen.update(text for _, _, text in measured)
    measured += [record_question() for _ in range(count - len(measured))]
    rng.shuffle(measured)
    hybrid = [("faq", rng.choice(vendors), text) for text in evaluation[faq_count:]]
    warmup = [record_question() for _ in range(8)]
    return measured, hybrid, warmup


class _Probe:
    """Bench-only instrumentation of the current call: the FAQ trace, the keyword retry's database read, and the
    hub's time on its loop thread."""

    def __init__(self):
        import agent.knowledge.faq as faq_module
        import agent.knowledge.hub as hub_module
        import agent.knowledge.hub_graph as hub_graph

        self.reset()
        traced = faq_module.faq_search_traced
        keyword_matches = faq_module.faq_keyword_matches
        workspaces_search = hub_graph.workspaces_search
        workspace_search = hub_graph._workspace_search
        search_start = hub_module.hub_search_start

        def faq_search(query, *, limit=None):  # what faq_search does, keeping the trace
            items, self.faq_trace = traced(query, limit=limit)
            return items

        def timed_keyword_matches(terms, **options):
            started = time.perf_counter()
            try:
                return keyword_matches(terms, **options)
            finally:
                self.keyword_sql_ms = (time.perf_counter() - started) * 1000
                self.keyword_terms = list(terms)

        async def timed_workspaces_search(runtime, targets, **options):
            started = time.perf_counter()
            try:
                return await workspaces_search(runtime, targets, **options)
            finally:
                self.hub_loop_ms = (time.perf_counter() - started) * 1000

        async def counted_workspace_search(runtime, slug, *args):
            self.hub_workspaces += 1  # the workspaces really queried, after the nearest-in-content choice
            return await workspace_search(runtime, slug, *args)

        def timed_search_start(query, **options):
            started = time.perf_counter()
            try:
                return search_start(query, **options)
            finally:
                self.hub_start_ms = (time.perf_counter() - started) * 1000

        faq_module.faq_search = faq_search  # evidence imports it at call time
        faq_module.faq_keyword_matches = timed_keyword_matches  # looked up in the module at call time
        hub_graph.workspaces_search = timed_workspaces_search
        hub_graph._workspace_search = counted_workspace_search
        hub_module.hub_search_start = timed_search_start

    def reset(self):
        self.faq_trace, self.keyword_sql_ms, self.keyword_terms = None, 0.0, None
        self.hub_loop_ms, self.hub_workspaces, self.hub_start_ms = None, 0, 0.0


def _evidence_sample(probe: _Probe, question: str, vendor, budget=None) -> dict:
    from agent.knowledge.evidence import evidence_for

    probe.reset()
    started = time.perf_counter()
    result = evidence_for(question, vendor, budget=budget)
    total = (time.perf_counter() - started) * 1000
    sample = {"total": total, "failed": list(result.failed_sources), "items": len(result.items)}
    sample.update({stage: result.timings_ms.get(stage, 0.0) for stage in STAGES})
    sample["other"] = total - sum(sample[stage] for stage in STAGES)
    sample["masks"] = result.mask_count
    sample["by_source"] = {
        kind: sum(item.source_kind == kind for item in result.items) for kind in ("record", "faq", "hub")
    }
    trace = probe.faq_trace
    if trace is not None:
        sample.update({f"faq_{stage}": trace.timings_ms.get(stage, 0.0) for stage in FAQ_STAGES})
        sample["faq_searches"] = 2 if trace.relaxed_retry else 1
        sample["faq_keyword_outcome"] = trace.keyword_retry
        sample["faq_keyword_sql"] = probe.keyword_sql_ms
        sample["faq_keyword_terms"] = probe.keyword_terms
        sample["faq_keyword_rest"] = trace.timings_ms.get("keyword", 0.0) - probe.keyword_sql_ms
    sample["hub_loop"] = probe.hub_loop_ms
    sample["hub_workspaces"] = probe.hub_workspaces
    sample["hub_start"] = probe.hub_start_ms
    return sample


def _brute_force_top(matrix, vector, k: int):
    """Indices of the k best cosines, best first (the vectors are L2-normalised)."""
    import numpy as np

    scores = matrix @ vector
    top = np.argpartition(-scores, k)[:k]
    return top[np.argsort(-scores[top])]


def _server_stand_in(questions: list[str]) -> dict:
    """Per question: the local-mode dense search as the FAQ calls it and bare (no payload, no vectors), a numpy
    brute-force top-30 over the same stored question vectors, and decoding a server's JSON answer for those points
    with and without their two vectors (what the HTTP client parses instead of scanning locally)."""
    import numpy as np
    from django.conf import settings
    from qdrant_client import QdrantClient
    from qdrant_client.http import models

    from agent.knowledge.embeddings import embedder_get
    from agent.knowledge.faq_index import (
        DENSE,
        PASSAGE,
        faq_collection_name,
        faq_index_client,
        faq_index_dense_search,
    )

    client, name = faq_index_client(), faq_collection_name()
    stored, offset = [], None
    while True:
        records, offset = client.scroll(name, limit=2048, offset=offset, with_payload=False, with_vectors=[DENSE])
        stored.extend(record.vector[DENSE] for record in records)
        if offset is None:
            break
    matrix = np.asarray(stored, dtype=np.float32)
    # The same vectors in two in-memory local collections: cosine (what the FAQ collection uses) and dot product
    # (equal scores for these L2-normalised vectors): local mode re-normalises every stored vector per cosine query.
    memory = QdrantClient(":memory:")
    for distance in (models.Distance.COSINE, models.Distance.DOT):
        memory.create_collection(
            distance.value, vectors_config=models.VectorParams(size=matrix.shape[1], distance=distance)
        )
        for start in range(0, len(matrix), 2000):
            rows = matrix[start : start + 2000]
            memory.upsert(
                distance.value, points=models.Batch(ids=list(range(start, start + len(rows))), vectors=rows.tolist())
            )
    embedder = embedder_get()
    vectors = embedder.embed_queries(questions)
    threshold = embedder.score_thresholds().search
    result = {}
    for question, vector in zip(questions, vectors, strict=True):
        timings = {}
        started = time.perf_counter()
        faq_index_dense_search(vector, limit=settings.FAQ_TOP_K, score_threshold=threshold)
        timings["local_app"] = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        client.query_points(
            name, query=vector.tolist(), using=DENSE, limit=settings.FAQ_TOP_K, with_payload=False, with_vectors=False
        )
        timings["local_bare"] = (time.perf_counter() - started) * 1000
        for distance in (models.Distance.COSINE, models.Distance.DOT):
            started = time.perf_counter()
            memory.query_points(distance.value, query=vector.tolist(), limit=settings.FAQ_TOP_K)
            timings[f"memory_{distance.value.lower()}"] = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        _brute_force_top(matrix, vector, settings.FAQ_TOP_K)
        timings["brute"] = (time.perf_counter() - started) * 1000
        points = client.query_points(
            name,
            query=vector.tolist(),
            using=DENSE,
            limit=settings.FAQ_TOP_K,
            with_payload=True,
            with_vectors=[DENSE, PASSAGE],
        ).points
        for key, shown in (
            ("decode", points),
            ("decode_no_vectors", [p.model_copy(update={"vector": None}) for p in points]),
        ):
            body = models.QueryResponse(points=shown).model_dump_json()
            started = time.perf_counter()
            models.QueryResponse.model_validate_json(body)
            timings[key] = (time.perf_counter() - started) * 1000
            timings[f"{key}_bytes"] = len(body)
        result[question] = timings
    return {"per_question": result, "points": len(matrix)}


def _projected(sample: dict, server: dict) -> dict:
    """The call with each local dense search replaced by the server stand-in. The hub runs on its loop thread
    while records and FAQ are searched, so a faster FAQ can leave more of the hub to wait for: its wait is
    re-estimated as its loop time minus the caller's new records + FAQ time."""
    saved = sample["faq_dense"] - sample["faq_searches"] * (server["brute"] + server["decode"])
    hub_wait = sample["hub"] - sample["hub_start"]
    if sample["hub_loop"] is not None:
        new_hub_wait = max(hub_wait, sample["hub_loop"] - (sample["record"] + sample["faq"] - saved))
    else:
        new_hub_wait = hub_wait
    return {"total": sample["total"] - saved + (new_hub_wait - hub_wait)}


def _overlap_compare(questions: list[tuple[str, object]], network_wait_ms: float = 30.0) -> dict:
    """`evidence_for` as it is (the hub started first, awaited last) against the three sources one after the
    other, interleaved per question (alternating which goes first), on the same texts; then both again with a
    `network_wait_ms` sleep before each FAQ search, a stand-in for a Qdrant server, an embeddings endpoint or an
    HTTP reranker: waiting on a socket frees the GIL, which local-mode work in Python does not."""
    import agent.knowledge.faq as faq_module
    from agent.knowledge import evidence
    from agent.knowledge.hub import hub_search

    overlapped = dict(evidence._STARTS)

    def hub_first_and_whole(question, counterpart, limit):
        items = hub_search(question, limit=limit)
        return lambda: items

    sequential = {**overlapped, "hub": hub_first_and_whole}
    probe_search = faq_module.faq_search

    def waiting_search(query, *, limit=None):
        time.sleep(network_wait_ms / 1000)
        return probe_search(query, limit=limit)

    results = {}
    try:
        for wait in (False, True):
            faq_module.faq_search = waiting_search if wait else probe_search
            for index, (text, vendor) in enumerate(questions):
                modes = [("overlapped", overlapped), ("sequential", sequential)]
                for mode, starts in modes if index % 2 else modes[::-1]:
                    evidence._STARTS.clear()
                    evidence._STARTS.update(starts)
                    started = time.perf_counter()
                    evidence.evidence_for(text, vendor)
                    key = f"{mode}_wait" if wait else mode
                    results.setdefault(key, []).append({"total": (time.perf_counter() - started) * 1000})
    finally:
        evidence._STARTS.clear()
        evidence._STARTS.update(overlapped)
        faq_module.faq_search = probe_search
    return {"samples": results, "wait_ms": network_wait_ms}


def _keyword_read_compare(term_lists: list[list[str]]) -> list[dict]:
    """The keyword retry's read as the FAQ makes it (the GIN index on search_bigrams narrows, LOWER(column) LIKE
    rechecks) against the same filter as a plain LIKE over every row (no index; the read before migration 0007,
    minus its case folding) — same order and columns."""
    from django.db import connection

    from agent.knowledge.faq import faq_keyword_matches

    rows = []
    for terms in term_lists:
        started = time.perf_counter()
        faq_keyword_matches(terms, limit=3)
        app = (time.perf_counter() - started) * 1000
        condition = " OR ".join("question LIKE %s OR answer LIKE %s" for _ in terms)
        params = [pattern for term in terms for pattern in (f"%{term}%", f"%{term}%")]
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT * FROM agent_faqentry WHERE status = 'active' AND ({condition}) "
                "ORDER BY source_created_at DESC LIMIT 200",
                params,
            )
            cursor.fetchall()
        rows.append({"app": app, "plain_like": (time.perf_counter() - started) * 1000})
    return rows


def _row(label: str, samples: list[dict], key: str = "total") -> str:
    values = [sample[key] for sample in samples]
    return f"| {label} | {_pct(values, 50):.1f} | {_pct(values, 95):.1f} | {_pct(values, 99):.1f} |"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--vendors", type=int, default=2_000)
    parser.add_argument("--sigma", type=float, default=1.0, help="spread of the log-normal vendor sizes")
    parser.add_argument("--faq", type=int, default=20_000)
    parser.add_argument("--docs-per-workspace", type=int, default=6)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--hybrid-questions", type=int, default=10, help="each costs ~1.5 s in local mode")
    parser.add_argument("--overlap-questions", type=int, default=60, help="questions of the overlap A/B")
    parser.add_argument("--max-minutes", type=float, default=40, help="abort (and clean up) after this long")
    parser.add_argument("--keep-db", action="store_true", help=f"leave {DB_NAME} and the folders for inspection")
    args = parser.parse_args()
    command = (
        f".venv/bin/python bench/bench_evidence.py --records {args.records} --vendors {args.vendors} "
        f"--faq {args.faq} --docs-per-workspace {args.docs_per_workspace} --questions {args.questions} "
        f"--hybrid-questions {args.hybrid_questions}"
    )

    def abort(signum, frame):
        raise TimeoutError(f"bench_evidence ran longer than --max-minutes {args.max_minutes}")

    signal.signal(signal.SIGALRM, abort)
    signal.alarm(int(args.max_minutes * 60))
    scratch = Path(tempfile.mkdtemp(prefix="bench_evidence_"))
    database_recreate(DB_NAME)
    _redis_flush()
    django_ready = False
    try:
        _django_setup(scratch)
        django_ready = True
        _measure(args, command, scratch)
    finally:
        signal.alarm(0)
        if django_ready:
            from django.db import connections

            from agent.knowledge.faq_index import faq_index_reset
            from agent.knowledge.hub_runtime import runtime_reset

            runtime_reset()
            faq_index_reset()
            connections.close_all()
        if not args.keep_db:
            database_drop(DB_NAME)
            _redis_flush()
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"kept: database {DB_NAME}, folder {scratch}, Redis {REDIS_URL}")


def _measure(args, command: str, scratch: Path):
    from django.test import override_settings

    from agent.knowledge.evidence import EvidenceBudget
    from agent.knowledge.faq_index import faq_index_vector_count
    from agent.knowledge.hub import hub_search
    from agent.models import KnowledgeWorkspace
    from vendors.models import Vendor

    rng = random.Random(SEED)
    loads = {}
    started = time.perf_counter()
    demo_vendor_names = _demo_reference_data()
    terms_by_vendor = _records_load(rng, vendors=args.vendors, records=args.records, sigma=args.sigma)
    loads["records"] = time.perf_counter() - started
    started = time.perf_counter()
    faq_indexed, rebuild_seconds = _faq_load(args.faq, scratch)
    loads["faq"] = time.perf_counter() - started
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    started = time.perf_counter()
    bench_names = [vendor.name for vendor in terms_by_vendor]
    hub = _hub_load(args.docs_per_workspace, demo_vendor_names + bench_names)
    loads["hub"] = time.perf_counter() - started
    slugs = list(KnowledgeWorkspace.objects.filter(enabled=True).values_list("slug", flat=True))
    vector_count = faq_index_vector_count()
    vendor_count = Vendor.objects.count()
    print(
        f"loaded: {args.records:,} records for {args.vendors:,} vendors ({vendor_count:,} vendors in all) in "
        f"{loads['records']:.0f} s; {faq_indexed:,} FAQ entries ({vector_count:,} points, rebuild "
        f"{rebuild_seconds:.0f} s) in {loads['faq']:.0f} s; {hub['documents']} hub documents in {len(slugs)} "
        f"workspaces ({hub['chunks']:,} chunks, {hub['entities']:,} entities, {hub['relations']:,} relations) in "
        f"{loads['hub']:.0f} s",
        flush=True,
    )

    measured, hybrid_pool, warmup = _questions(rng, terms_by_vendor, args.questions)
    load_before = os.getloadavg()
    probe = _Probe()
    full_budget = EvidenceBudget.from_settings()
    records_only = EvidenceBudget(records=full_budget.records, hub=0, faq=0)
    hub_search("워밍업 물류센터 입고 기준", workspaces=slugs)  # every workspace loaded once, outside the figures
    for _, vendor, text in warmup:
        _evidence_sample(probe, text, vendor)
        _evidence_sample(probe, text, vendor, records_only)

    full, baseline = [], []
    for number, (kind, vendor, text) in enumerate(measured):
        runs = [("full", None), ("baseline", records_only)]
        for label, budget in runs if number % 2 == 0 else runs[::-1]:
            sample = _evidence_sample(probe, text, vendor, budget)
            sample.update(kind=kind, question=text)
            (full if label == "full" else baseline).append(sample)
    print(f"measured {len(measured)} questions", flush=True)

    hybrid_sample = hybrid_pool[: args.hybrid_questions]
    dense_run, hybrid_run = [], []
    for _, vendor, text in hybrid_sample:
        dense_run.append(_evidence_sample(probe, text, vendor))
        with override_settings(FAQ_HYBRID_SEARCH=True):
            hybrid_run.append(_evidence_sample(probe, text, vendor))

    overlap = _overlap_compare([(text, vendor) for _, vendor, text in measured[: args.overlap_questions]])
    keyword_reads = _keyword_read_compare(
        [sample["faq_keyword_terms"] for sample in full if sample.get("faq_keyword_terms")]
    )
    stand_in = _server_stand_in([sample["question"] for sample in full])
    projected = [_projected(sample, stand_in["per_question"][sample["question"]]) for sample in full]

    run = {
        "full": full,
        "baseline": baseline,
        "projected": projected,
        "dense_run": dense_run,
        "hybrid_run": hybrid_run,
        "stand_in": stand_in,
        "hub": hub,
        "loads": loads,
        "slugs": slugs,
        "vendor_count": vendor_count,
        "faq_indexed": faq_indexed,
        "rebuild_seconds": rebuild_seconds,
        "load_before": load_before,
        "keyword_reads": keyword_reads,
        "overlap": overlap,
        "failures": sum(bool(sample["failed"]) for sample in full + baseline + dense_run + hybrid_run),
    }
    _report(args, command, run)


def _report(args, command: str, run: dict):
    from django.conf import settings

    full, baseline, projected = run["full"], run["baseline"], run["projected"]
    dense_run, hybrid_run, stand_in, hub, loads = (
        run["dense_run"],
        run["hybrid_run"],
        run["stand_in"],
        run["hub"],
        run["loads"],
    )
    p95 = _pct([sample["total"] for sample in full], 95)
    kinds = {kind: sum(sample["kind"] == kind for sample in full) for kind in ("records", "faq", "hub")}
    print("\n## Evidence service (records + FAQ + hub)\n")
    print(f"Command: `{command}`\n")
    print(
        f"Scratch database `{DB_NAME}` (PostgreSQL, dropped at the end), Redis db 3 as the cache, local embedding "
        f"(USE v3) and local reranker, Qdrant local mode, LightRAG file storages. Loaded: {args.records:,} records + "
        f"products for {args.vendors:,} vendors (+ {run['vendor_count'] - args.vendors} demo vendors) in "
        f"{loads['records']:.0f} s; {run['faq_indexed']:,} FAQ entries bulk-inserted and indexed by "
        f"`faq_index_rebuild()` in {run['rebuild_seconds']:.0f} s; {hub['documents']} documents ({hub['demo']} demo + "
        f"synthetic editions) in {len(run['slugs'])} workspaces ({hub['chunks']:,} chunks, {hub['entities']:,} "
        f"entities, {hub['relations']:,} relations) in {loads['hub']:.0f} s. {len(full)} questions "
        f"({kinds['records']} about the vendor's records, {kinds['faq']} labelled FAQ questions, {kinds['hub']} hub "
        f"questions), each from a random vendor; budget records {settings.EVIDENCE_BUDGET_RECORDS} / FAQ "
        f"{settings.EVIDENCE_BUDGET_FAQ} / hub {settings.EVIDENCE_BUDGET_HUB}. Full and baseline interleaved per "
        f"question. Sources failed: {run['failures']}. Load average (1/5/15 min) before the questions "
        f"{'/'.join(f'{value:.1f}' for value in run['load_before'])}, at the end "
        f"{'/'.join(f'{value:.1f}' for value in os.getloadavg())} ({os.cpu_count()} cores, shared).\n"
    )
    print("| run | p50 ms | p95 ms | p99 ms |")
    print("|---|---:|---:|---:|")
    print(_row("`evidence_for`, default budget, Qdrant local mode, dense-only FAQ", full))
    for stage, label in [
        ("record", "records"),
        ("faq", "FAQ"),
        ("hub", "hub (starting it, then waiting for what is left)"),
        ("mask", "masking"),
        ("other", "de-duplication and the rest"),
    ]:
        print(_row(f"— stage: {label}", full, stage))
    for stage in FAQ_STAGES:
        if any(sample.get(f"faq_{stage}") for sample in full):
            print(_row(f"— FAQ stage: {stage}", full, f"faq_{stage}"))
    hub_samples = [sample for sample in full if sample["hub_loop"] is not None]
    print(_row("— hub on its loop thread (LightRAG; overlaps records and FAQ)", hub_samples, "hub_loop"))
    print(_row("baseline: `evidence_for`, records budget only (records + masking)", baseline))
    print(_row("projected: FAQ dense search replaced by the server stand-in (see below)", projected))
    # The keyword retry runs only when no dense candidate survives the reranker: its cost shows in the tail.
    searched = [sample for sample in full if sample.get("faq_keyword_outcome") in ("no_match", "rejected", "accepted")]
    others = [sample for sample in full if sample not in searched]
    if searched and others:
        print(_row(f"`evidence_for`, the {len(searched)} questions whose FAQ ran the keyword retry", searched))
        print(_row("— FAQ stage: keyword, database read (`faq_keyword_matches`)", searched, "faq_keyword_sql"))
        print(_row("— FAQ stage: keyword, the rest (rerank, embedding the matches)", searched, "faq_keyword_rest"))
        print(_row(f"`evidence_for`, the other {len(others)} questions", others))
        others_projected = [projection for sample, projection in zip(full, projected, strict=True) if sample in others]
        print(_row("— projected with the server stand-in", others_projected))
    if dense_run:
        print(_row(f"`evidence_for` on {len(dense_run)} other FAQ questions, dense-only FAQ", dense_run))
        print(_row("— same questions, hybrid FAQ (`FAQ_HYBRID_SEARCH=True`)", hybrid_run))
        print(_row("— — FAQ stage: sparse (local mode)", hybrid_run, "faq_sparse"))

    per_question = list(stand_in["per_question"].values())
    full_p50 = _pct([sample["total"] for sample in full], 50)
    base_p50 = _pct([sample["total"] for sample in baseline], 50)
    base_p95 = _pct([sample["total"] for sample in baseline], 95)
    share = {
        stage: statistics.mean(sample[stage] for sample in full) / statistics.mean(sample["total"] for sample in full)
        for stage in ("record", "faq", "hub", "mask", "other")
    }
    workspaces = [sample["hub_workspaces"] for sample in hub_samples]
    relaxed = sum(sample.get("faq_searches") == 2 for sample in full)
    keyword_outcomes = Counter(
        sample.get("faq_keyword_outcome") for sample in full if sample.get("faq_keyword_outcome")
    )
    print()
    print(
        f"- Target p95 ≤ 150 ms: {'met' if p95 <= 150 else 'NOT met'} ({p95:.1f} ms). Full / records-only baseline: "
        f"×{full_p50 / base_p50:.1f} at p50, ×{p95 / base_p95:.1f} at p95. Share of the mean time: "
        + ", ".join(f"{stage} {value:.0%}" for stage, value in share.items())
        + "."
    )
    print(
        f"- The hub queried {statistics.mean(workspaces):.1f} workspaces per question on average (at most "
        f"{max(workspaces)}). FAQ: relaxed "
        f"retry in {relaxed} of {len(full)} questions; keyword retry (no dense candidate kept): "
        f"{', '.join(f'{outcome} {count}' for outcome, count in keyword_outcomes.most_common()) or 'none'}. Items per "
        f"question (mean): records {statistics.mean(s['by_source']['record'] for s in full):.1f}, FAQ "
        f"{statistics.mean(s['by_source']['faq'] for s in full):.1f}, hub "
        f"{statistics.mean(s['by_source']['hub'] for s in full):.1f}; masks "
        f"{statistics.mean(s['masks'] for s in full):.1f}."
    )
    keyword_reads = run["keyword_reads"]
    if keyword_reads:
        print()
        print(f"The keyword retry's database read again, for the {len(keyword_reads)} term lists of the run:\n")
        print("| read | p50 ms | p95 ms | p99 ms |")
        print("|---|---:|---:|---:|")
        print(
            _row(
                "`faq_keyword_matches` (bigram GIN index narrows, LIKE rechecks)",
                keyword_reads,
                "app",
            )
        )
        print(
            _row(
                "the same filter as plain LIKE over every row, raw SQL (no index)",
                keyword_reads,
                "plain_like",
            )
        )
    overlap = run["overlap"]
    samples = overlap["samples"]
    if samples:
        print()
        print(
            f"The hub's overlap with records and FAQ, on {len(samples['overlapped'])} of the questions again, "
            "interleaved (sequential = the hub searched whole before the others):\n"
        )
        print("| `evidence_for` | p50 ms | p95 ms | p99 ms |")
        print("|---|---:|---:|---:|")
        print(_row("hub started first, awaited last (as shipped)", samples["overlapped"]))
        print(_row("the three sources one after the other", samples["sequential"]))
        wait = f"{overlap['wait_ms']:.0f} ms"
        print(_row(f"as shipped, each FAQ search after a {wait} network wait (stand-in)", samples["overlapped_wait"]))
        print(_row(f"one after the other, the same {wait} wait", samples["sequential_wait"]))
    print()
    print(f"One FAQ dense search over the {stand_in['points']:,} points, per measured question, after the run:\n")
    print("| dense search | p50 ms | p95 ms | p99 ms |")
    print("|---|---:|---:|---:|")
    for key, label in [
        ("local_app", "Qdrant local mode, as the FAQ asks (threshold, payload, `dense` + `passage` vectors)"),
        ("local_bare", "Qdrant local mode, ids and scores only"),
        ("memory_cosine", "the same vectors upserted into an in-memory local collection, cosine, ids and scores only"),
        ("memory_dot", "— the same with dot product (equal scores: the vectors are L2-normalised)"),
        ("brute", f"numpy brute-force top-{settings.FAQ_TOP_K} (stand-in for a server's search; HNSW is faster)"),
        ("decode", "client-side decoding of a server's JSON answer with payload and both vectors"),
        ("decode_no_vectors", "the same answer without vectors"),
    ]:
        print(_row(label, per_question, key))
    kilobytes = {
        key: statistics.median(row[f"{key}_bytes"] for row in per_question) / 1000
        for key in ("decode", "decode_no_vectors")
    }
    print(
        f"\nServer answer sizes (JSON, median): {kilobytes['decode']:.0f} kB with both vectors, "
        f"{kilobytes['decode_no_vectors']:.0f} kB without. The projection above replaces each local dense search "
        "(two on a relaxed retry) by brute force + decoding with vectors; no network round trip is included."
    )


if __name__ == "__main__":
    main()
