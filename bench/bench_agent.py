"""Agent benchmarks (issue 6): the pipeline's own overhead with a zero-latency model, and questions per minute.

    .venv/bin/python bench/bench_agent.py --overhead [--questions 200]
    .venv/bin/python bench/bench_agent.py --throughput [--questions 120] [--warmup 4] [--timeout 900]

Both modes (re)create the scratch PostgreSQL database `vcs_bench_agent`, migrate it, load the demo data (vendors,
records and products, company data, FAQ into Qdrant local mode, knowledge hub into LightRAG files, both in a
temporary folder) and drop the database and the folder at the end.

--overhead (in this process): every matched-room question of demo/data/eval.jsonl, repeated to N, answered by
`answer_compose` with a scripted zero-latency model. Scenario A (as issue 6 asks): one `search_records` call,
then a reply that copies the first evidence sentence. Scenario B: one reply calling `search_records`,
`search_faq` and `search_hub`, then the same kind of reply. Baselines in the same run, per question and
interleaved with the pipeline runs: the bare `evidence_for(question, vendor)` (records + FAQ + hub, masked,
de-duplicated) and the bare `vendor_records_search` that scenario A's tool runs. Stage shares use the pipeline's
own stage boundaries (`stage_ms` keys) timed in float milliseconds; time spent inside retrieval tools and
inside the fake model is measured separately so that what is left is the pipeline's own overhead.

--throughput (real processes): gunicorn (2 sync workers) serves the upload API, N Celery worker processes
(`celery -A config worker -Q default,agent,delivery,monitoring -c 1 --pool prefork`, started N times; `--workers
4,2,1` runs one phase per count, most first) answer with the local answerer (the default provider), broker and
cache on Redis DB 5. M tagged questions (the external matched-room questions of eval.jsonl, repeated) are posted
at once through `POST /api/v1/uploads` per phase; each phase waits until every one has a terminal status and
reports questions/min and the time from the *accepted* marker to the *result* marker. The local Qdrant folder
is owned by one worker, which serves the FAQ index to the others (`agent.knowledge.faq_index`); between phases
the workers that do not own it are stopped, and the run counts FAQ searches that found the index unavailable.
Everything started here is stopped, also on error.
"""

import argparse
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
from scratch_database import database_drop, database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_agent"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
REDIS_DB = int(os.environ.get("BENCH_REDIS_DB", "5"))  # another number while a test suite uses 5
REDIS_URL = f"redis://127.0.0.1:6379/{REDIS_DB}"
PORT = 8766
KST = ZoneInfo("Asia/Seoul")
EVAL_FILE = ROOT / "demo" / "data" / "eval.jsonl"
# Settings that would switch an integration away from the embedded default (a server, an LLM endpoint).
INTEGRATION_VARIABLES = (
    "QDRANT_URL",
    "EMBEDDINGS_BASE_URL",
    "RERANK_URL",
    "OPENAI_BASE_URL",
    "LLM_MODEL",
    "LLM_PROVIDER",
    "KNOWLEDGE_HUB_LLM_BASE_URL",
)
STAGES = ("rewrite", "tool_loop", "forced_retrieval", "finalize_if_empty", "verification")
TERMINAL = ("answered", "held", "blocked", "no_evidence", "failed")
FAQ_UNAVAILABLE = "FaqIndexUnavailable"  # a worker that could not reach the FAQ index (logged with the traceback)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--overhead", action="store_true")
    mode.add_argument("--throughput", action="store_true")
    parser.add_argument("--questions", type=int, help="questions timed (default 200 overhead, 120 throughput)")
    parser.add_argument("--warmup", type=int, default=4, help="throughput: questions answered before timing")
    parser.add_argument("--timeout", type=int, default=900, help="throughput: seconds to wait for the answers")
    parser.add_argument("--workers", default="4,2,1", help="throughput: worker process counts, one phase each")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="vcs_bench_agent_"))
    env = _environment(workdir)
    try:
        _recreate_database()
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        _django_setup(env)
        if args.overhead:
            _overhead(args.questions or 200)
        else:
            counts = sorted({int(value) for value in args.workers.split(",")}, reverse=True)
            _throughput(env, workdir, args.questions or 120, args.warmup, args.timeout, counts)
    finally:
        _close_django()
        database_drop(DB_NAME)
        subprocess.run(["redis-cli", "-n", str(REDIS_DB), "flushdb"], check=False, capture_output=True)
        shutil.rmtree(workdir, ignore_errors=True)


# --- set-up shared by both modes ----------------------------------------------------------------------------


def _environment(workdir: Path) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": DATABASE_URL,
        "REDIS_URL": REDIS_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DJANGO_DEBUG": "false",
        "LOG_LEVEL": "WARNING",
        "UPLOAD_RATE_PER_MINUTE": "1000000",
        "QDRANT_PATH": str(workdir / "qdrant"),
        "LIGHTRAG_WORKING_DIR": str(workdir / "lightrag"),
        "MEDIA_ROOT": str(workdir / "media"),
    }
    for name in INTEGRATION_VARIABLES:
        env.pop(name, None)
    return env


def _recreate_database():
    database_recreate(DB_NAME)
    subprocess.run(["redis-cli", "-n", str(REDIS_DB), "flushdb"], check=True, capture_output=True)


def _django_setup(env: dict):
    for name in INTEGRATION_VARIABLES:
        os.environ.pop(name, None)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _close_django():
    if "django.db" not in sys.modules:
        return
    from django.db import connections

    connections.close_all()


def _demo_data_load() -> dict:
    from agent.knowledge.faq_services import faq_ingest_jsonl
    from agent.knowledge.hub import hub_demo_load
    from vendors.records import demo_records_load, records_import_file
    from vendors.services import vendors_import_csv

    data = ROOT / "demo" / "data"
    vendors = vendors_import_csv(data / "vendors.csv")
    records = demo_records_load()
    records_import_file(data / "company.jsonl", actor_kind="system", actor_id="bench")
    faq = faq_ingest_jsonl(data / "faq.jsonl")
    hub = hub_demo_load()
    return {
        "vendors": vendors.created + vendors.updated + vendors.unchanged,
        "records": records.counts,
        "faq": faq.as_dict(),
        "hub documents": sum(hub.values()),
    }


def _knowledge_release():
    """Close this process's Qdrant client (releasing the local folder) and its LightRAG instances."""
    from agent.knowledge.faq_index import faq_index_reset
    from agent.knowledge.hub_runtime import runtime_reset

    faq_index_reset()
    runtime_reset()


def _eval_cases(*, external_only: bool) -> list[dict]:
    """The eval set's questions in rooms that resolve to a vendor (blocked rooms never reach the pipeline)."""
    from conversations.models import Room
    from vendors.selectors import room_name_resolve, vendor_get_by_code

    cases = []
    for line in EVAL_FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        internal = bool(case.get("expect", {}).get("internal"))
        resolution = room_name_resolve(case["room"])
        if resolution.status != Room.ResolutionStatus.MATCHED or (external_only and internal):
            continue
        cases.append({**case, "vendor": vendor_get_by_code(resolution.vendor_code), "internal": internal})
    return cases


def _load() -> str:
    """The machine is shared: the load average at the end of a run says how much the figures were disturbed."""
    one, five, _ = os.getloadavg()
    return f"Load average at the end of the run: {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs."


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered)) - 1))]


def _p50(values):
    return statistics.median(values) if values else 0.0


def _p95(values):
    return _percentile(values, 0.95) if values else 0.0


# --- overhead ----------------------------------------------------------------------------------------------

_EVIDENCE_LINE = re.compile(r"^\[\d+\] \([^\n]*\)\n(?P<text>[^\n]+)", re.MULTILINE)


def _copy_first_evidence_sentence(messages, tools):
    """The fake model's answer: the first evidence sentence it was shown that is not a question (FAQ items start
    with theirs), word for word."""
    from agent.pipeline import remove_questions_back
    from agent.verification import split_sentences

    for message in messages:
        if message.get("role") != "tool":
            continue
        for match in _EVIDENCE_LINE.finditer(message.get("content") or ""):
            for sentence in split_sentences(match.group("text")):
                text = sentence.text.strip()
                if text and not remove_questions_back(text)[1]:
                    return {"content": text}
    return {"content": "문의하신 내용 안내드립니다."}


class _Instruments:
    """Float-precision timers around the pipeline's stages, its tool calls, the fake model's calls and SQL.

    `stage_ms` as stored holds whole milliseconds (truncated), so sub-millisecond stages read 0 there; the bench
    times the same stage boundaries itself.
    """

    def __init__(self):
        import agent.pipeline as pipeline

        self.pipeline = pipeline
        self._originals = (pipeline._StageTimer, pipeline.tool_execute)
        self._in_tool = False
        self.reset()

    def reset(self):
        self.stages: dict[str, float] = {}
        self.tool_ms = self.model_ms = 0.0
        self.sql_ms_outside_tools = 0.0
        self.queries = self.queries_outside_tools = 0

    def _sql(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.queries += 1
            if not self._in_tool:
                self.queries_outside_tools += 1
                self.sql_ms_outside_tools += (time.perf_counter() - started) * 1000

    def __enter__(self):
        from django.db import connection

        instruments = self
        original_timer, original_execute = self._originals

        class FloatStageTimer(original_timer):
            def __exit__(self, *exc):
                elapsed = (time.perf_counter() - self.started) * 1000
                instruments.stages[self.name] = instruments.stages.get(self.name, 0.0) + elapsed
                return super().__exit__(*exc)

        def timed_execute(*args, **kwargs):
            started = time.perf_counter()
            instruments._in_tool = True
            try:
                return original_execute(*args, **kwargs)
            finally:
                instruments._in_tool = False
                instruments.tool_ms += (time.perf_counter() - started) * 1000

        self.pipeline._StageTimer, self.pipeline.tool_execute = FloatStageTimer, timed_execute
        self._sql_wrapper = connection.execute_wrapper(self._sql)
        self._sql_wrapper.__enter__()
        return self

    def __exit__(self, *exc):
        self._sql_wrapper.__exit__(*exc)
        self.pipeline._StageTimer, self.pipeline.tool_execute = self._originals

    def model(self, steps):
        """A zero-latency scripted model whose calls (message copies included) are timed."""
        from agent.llm.scripted import ScriptedProvider

        instruments = self

        class TimedScriptedProvider(ScriptedProvider):
            def chat(self, *args, **kwargs):
                started = time.perf_counter()
                try:
                    return super().chat(*args, **kwargs)
                finally:
                    instruments.model_ms += (time.perf_counter() - started) * 1000

        return TimedScriptedProvider(steps)


def _scenario_steps(scenario: str, question: str) -> list:
    tools = ["search_records"] if scenario == "A" else ["search_records", "search_faq", "search_hub"]
    search = {"tool_calls": [{"name": name, "arguments": {"query": question}} for name in tools]}
    # Spare replies for rewrite rounds, should verification ask for them.
    return [search, *[_copy_first_evidence_sentence] * 4]


def _overhead(count: int):
    from django.conf import settings

    from agent.knowledge.evidence import evidence_for
    from agent.knowledge.records import vendor_records_search
    from agent.pipeline import QuestionContext, answer_compose
    from conversations.models import Room

    loaded = _demo_data_load()
    cases = _eval_cases(external_only=False)
    questions = list(itertools.islice(itertools.cycle(cases), count))

    def context(case):
        kind = Room.Kind.INTERNAL if case["internal"] else Room.Kind.EXTERNAL
        return QuestionContext(
            question_id=None, question_text=case["question"], vendor=case["vendor"], room=None, room_kind=kind
        )

    def timed(function):
        started = time.perf_counter()
        result = function()
        return result, (time.perf_counter() - started) * 1000

    results = {"A": [], "B": []}
    baseline_evidence, baseline_records = [], []
    with _Instruments() as instruments:
        for case in cases:  # warm-up: embedder, Korean analyser, LightRAG instances, name indexes, SQL plans
            evidence_for(case["question"], case["vendor"])
            for scenario in results:
                answer_compose(context(case), provider=instruments.model(_scenario_steps(scenario, case["question"])))
        started = time.perf_counter()
        for case in questions:
            _, ms = timed(lambda case=case: evidence_for(case["question"], case["vendor"]))
            baseline_evidence.append(ms)
            _, ms = timed(
                lambda case=case: vendor_records_search(
                    vendor=case["vendor"], query=case["question"], limit=settings.EVIDENCE_BUDGET_RECORDS
                )
            )
            baseline_records.append(ms)
            for scenario, runs in results.items():
                instruments.reset()
                provider = instruments.model(_scenario_steps(scenario, case["question"]))
                trace, ms = timed(lambda case=case, provider=provider: answer_compose(context(case), provider=provider))
                runs.append(
                    {
                        "total": ms,
                        "stages": dict(instruments.stages),
                        "tools": instruments.tool_ms,
                        "model": instruments.model_ms,
                        "sql_outside_tools": instruments.sql_ms_outside_tools,
                        "queries": instruments.queries,
                        "queries_outside_tools": instruments.queries_outside_tools,
                        "outcome": trace.outcome,
                        "rounds": len(trace.rounds),
                        "llm_calls": trace.llm_calls,
                    }
                )
        elapsed = time.perf_counter() - started
    _knowledge_release()

    _overhead_report(count, loaded, cases, results, baseline_evidence, baseline_records, elapsed)


def _overhead_report(count, loaded, cases, results, baseline_evidence, baseline_records, elapsed):
    print("\n### Pipeline overhead (zero-latency scripted model)\n")
    print(f"Command: `.venv/bin/python bench/bench_agent.py --overhead --questions {count}`")
    print(
        f"({count} questions: the {len(cases)} matched-room questions of demo/data/eval.jsonl repeated; demo data "
        f"{loaded['vendors']} vendors, FAQ {loaded['faq'].get('created', loaded['faq'])}, "
        f"{loaded['hub documents']} hub documents; PostgreSQL, Qdrant local mode, LightRAG files; "
        f"one process, {elapsed:.0f} s wall for all runs)\n"
    )
    print("| per question | p50 ms | p95 ms | mean ms |")
    print("|---|---:|---:|---:|")
    rows = [("baseline: bare `evidence_for` (records + FAQ + hub)", baseline_evidence)]
    rows.append(("baseline: bare `vendor_records_search` (scenario A's one search)", baseline_records))
    for scenario, label in (("A", "search_records"), ("B", "search_records + search_faq + search_hub")):
        runs = results[scenario]
        rows.append((f"{scenario}: `answer_compose` total ({label})", [r["total"] for r in runs]))
        rows.append((f"{scenario}: inside retrieval tools", [r["tools"] for r in runs]))
        rows.append((f"{scenario}: inside the fake model (message copies)", [r["model"] for r in runs]))
        rows.append((f"{scenario}: pipeline's own time (total − tools − model)", [_own(r) for r in runs]))
        rows.append((f"{scenario}: — of which SQL outside the tools", [r["sql_outside_tools"] for r in runs]))
    for label, values in rows:
        print(f"| {label} | {_p50(values):.2f} | {_p95(values):.2f} | {statistics.fmean(values):.2f} |")

    a_total = _p50([r["total"] for r in results["A"]])
    b_total = _p50([r["total"] for r in results["B"]])
    print(
        f"\nRatios of p50: A / bare records search {a_total / _p50(baseline_records):.1f}×; "
        f"B / bare `evidence_for` {b_total / _p50(baseline_evidence):.2f}×; "
        f"A / bare `evidence_for` {a_total / _p50(baseline_evidence):.2f}×.\n"
    )
    print("Mean share of each stage in `answer_compose` (stage boundaries as in `stage_ms`):\n")
    print("| stage | A mean ms | A share | B mean ms | B share |")
    print("|---|---:|---:|---:|---:|")
    for stage in (*STAGES, "unstaged (masking, tools offered, prompts, references)"):
        cells = []
        for scenario in ("A", "B"):
            runs = results[scenario]
            values = [_stage(r, stage) for r in runs]
            shares = [_stage(r, stage) / r["total"] for r in runs]
            cells.append(f"{statistics.fmean(values):.2f} | {statistics.fmean(shares):.1%}")
        print(f"| {stage} | {' | '.join(cells)} |")
    for scenario in ("A", "B"):
        runs = results[scenario]
        tool_share = statistics.fmean(r["tools"] / r["total"] for r in runs)
        outcomes = {}
        for r in runs:
            outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
        print(
            f"\n{scenario}: retrieval tools {tool_share:.1%} of the total (inside `tool_loop`, plus re-searches "
            f"inside `verification`); outcomes {outcomes}; draft rounds mean "
            f"{statistics.fmean(r['rounds'] for r in runs):.2f}; model calls mean "
            f"{statistics.fmean(r['llm_calls'] for r in runs):.2f}; SQL queries mean "
            f"{statistics.fmean(r['queries'] for r in runs):.1f}, of which outside the tools "
            f"{statistics.fmean(r['queries_outside_tools'] for r in runs):.1f}."
        )
    print(f"\n{_load()}")


def _stage(run: dict, stage: str) -> float:
    if stage in STAGES:
        return run["stages"].get(stage, 0.0)
    return max(0.0, run["total"] - sum(run["stages"].values()))


def _own(run: dict) -> float:
    return run["total"] - run["tools"] - run["model"]


# --- throughput --------------------------------------------------------------------------------------------


def _throughput(env: dict, workdir: Path, count: int, warmup: int, timeout: int, worker_counts: list[int]):
    loaded = _demo_data_load()
    token = _uploader_token()
    cases = _eval_cases(external_only=True)
    # This process opened the local Qdrant folder and the hub while loading: release both for the workers.
    _knowledge_release()
    _close_django()

    # 20 s apart in `sent_at` over all phases, so a repeated question in a room is never taken for a resend.
    planned = warmup + len(worker_counts) * count
    first = datetime.now(tz=KST) - timedelta(seconds=20 * planned + 60)
    sent_at = (first + timedelta(seconds=20 * number) for number in itertools.count())
    server = None
    workers: dict[str, tuple[subprocess.Popen, Path]] = {}
    phases = {}
    try:
        server = _start_gunicorn(env, workdir)
        for number in range(1, max(worker_counts) + 1):
            workers[f"bench{number}"] = _start_worker(env, workdir, number)
        _wait_for_server()
        _wait_for_workers(len(workers))
        print(f"gunicorn and {len(workers)} workers up; demo data {loaded}", file=sys.stderr)
        _, warm_seconds = _ask_and_wait(token, cases, warmup, "warm", timeout, sent_at)
        running = list(workers)
        for wanted in worker_counts:
            # Fewer workers for the next phase: stop those that do not own the FAQ folder (the owner serves the
            # index to the others; stopping it only moves ownership, at the price of a reload).
            owner = _faq_owner_worker(workers)
            while len(running) > wanted:
                name = next(name for name in reversed(running) if name != owner)
                _stop(name, workers[name][0])
                running.remove(name)
            label = f"{wanted} worker" + ("s" if wanted > 1 else "")
            phases[label] = _phase(token, cases, count, f"p{wanted}", timeout, workers, sent_at, running=running)
    finally:
        for name, (process, _) in workers.items():
            _stop(name, process)
        if server is not None:
            _stop("gunicorn", server)
    _throughput_report(count, warmup, warm_seconds, cases, phases)


def _faq_owner_worker(workers) -> str | None:
    """The worker whose process group holds the local FAQ folder (`faq_index_owner`), if one does."""
    from agent.knowledge.faq_index import faq_index_owner

    owner = (faq_index_owner() or {}).get("owner")
    if not owner:
        return None
    with contextlib.suppress(ProcessLookupError):
        group = os.getpgid(owner["pid"])
        return next((name for name, (process, _) in workers.items() if process.pid == group), None)
    return None


def _phase(token, cases, count, label, timeout, workers, sent_at, *, running) -> dict:
    """Answer `count` questions with the running workers; what each worker did and logged in this phase."""
    warnings_before = {name: _count_in(workers[name][1], FAQ_UNAVAILABLE) for name in running}
    tasks_before = _tasks_per_worker()
    question_ids, wall_seconds = _ask_and_wait(token, cases, count, label, timeout, sent_at)
    tasks_after = _tasks_per_worker()
    return {
        "workers": list(running),
        "question_ids": question_ids,
        "wall_seconds": wall_seconds,
        "tasks": {name: tasks_after.get(name, 0) - tasks_before.get(name, 0) for name in running},
        "faq_unavailable": {
            name: _count_in(workers[name][1], FAQ_UNAVAILABLE) - warnings_before[name] for name in running
        },
    }


def _uploader_token() -> str:
    from django.contrib.auth import get_user_model

    from delivery.services import device_pair, device_pairing_code_issue, device_register

    staff = get_user_model().objects.create_user("bench", is_staff=True)
    device = device_register(name="bench uploader", role="uploader", actor=staff)
    code = device_pairing_code_issue(device=device, actor=staff)
    return device_pair(code=code, client_name="bench")[1]


def _start_gunicorn(env: dict, workdir: Path):
    log = workdir / "gunicorn.log"
    command = [str(ROOT / ".venv/bin/gunicorn"), "config.wsgi", "-b", f"127.0.0.1:{PORT}", "-w", "2"]
    command += ["--log-level", "warning"]
    return _spawn(command, env, log)


def _start_worker(env: dict, workdir: Path, number: int):
    log = workdir / f"worker{number}.log"
    command = [str(ROOT / ".venv/bin/celery"), "-A", "config", "worker", "-Q", "default,agent,delivery,monitoring"]
    command += ["-c", "1", "--pool", "prefork", "-n", f"bench{number}@%h", "--loglevel", "WARNING"]
    command += ["--without-gossip", "--without-mingle"]
    return _spawn(command, env, log), log


def _spawn(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    with open(log, "wb") as output:
        # A session of its own, so stopping it reaches the pool children too.
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )


def _stop(name: str, process: subprocess.Popen):
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        print(f"{name} did not stop in 30 s: killed", file=sys.stderr)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def _wait_for_server():
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{PORT}/api/schema/", timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise SystemExit("gunicorn did not start")


def _wait_for_workers(count: int):
    from config.celery import app

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        replies = app.control.ping(timeout=1.0) or []
        if len(replies) >= count:
            return
    raise SystemExit(f"{count} Celery workers did not answer a ping within 120 s")


def _tasks_per_worker() -> dict:
    from config.celery import app

    stats = app.control.inspect(timeout=2.0).stats() or {}
    return {name.split("@")[0]: data.get("total", {}).get("agent.process_question", 0) for name, data in stats.items()}


def _ask_and_wait(token, cases, count, label, timeout, sent_at) -> tuple[list[int], float]:
    """Post `count` tagged questions (10 per upload) and wait until each has a terminal status."""
    from conversations.models import Question

    if count <= 0:
        return [], 0.0
    before = set(Question.objects.values_list("pk", flat=True))
    messages = [
        {
            "room_key": f"bench-{case['room']}",
            "room_name": case["room"],
            "sender_name": "김대리",
            "sent_by_me": False,
            "text": f"@봇 {case['question']}",
            "sent_at": next(sent_at).isoformat(),
            "unread_count": 1,
            "client_message_id": f"{label}-{number}",
        }
        for number, case in enumerate(itertools.islice(itertools.cycle(cases), count))
    ]
    started = time.monotonic()
    with httpx.Client(
        base_url=f"http://127.0.0.1:{PORT}", headers={"Authorization": f"Bearer {token}"}, timeout=60
    ) as client:
        for offset in range(0, len(messages), 10):
            payload = {"batch_id": f"{label}-{offset}", "messages": messages[offset : offset + 10]}
            response = client.post("/api/v1/uploads", json=payload)
            response.raise_for_status()
    ids = sorted(set(Question.objects.values_list("pk", flat=True)) - before)
    if len(ids) != count:
        raise SystemExit(f"{label}: {len(ids)} questions accepted for {count} posted")
    deadline = started + timeout
    while time.monotonic() < deadline:
        if Question.objects.filter(pk__in=ids, status__in=TERMINAL).count() == count:
            return ids, time.monotonic() - started
        time.sleep(0.5)
    open_ = Question.objects.filter(pk__in=ids).exclude(status__in=TERMINAL).count()
    raise SystemExit(f"{label}: {open_} of {count} questions not finished after {timeout} s")


def _count_in(log: Path, text: str) -> int:
    with contextlib.suppress(FileNotFoundError):
        return log.read_text(encoding="utf-8", errors="replace").count(text)
    return 0


def _phase_figures(phase: dict) -> dict:
    from django.db.models import Avg

    from agent.models import AnswerRun, ToolCallRecord
    from conversations.models import Question
    from monitoring.models import LivenessMarker

    ids = phase["question_ids"]
    markers = {
        (question_id, kind): created_at
        for question_id, kind, created_at in LivenessMarker.objects.filter(question_id__in=ids).values_list(
            "question_id", "kind", "created_at"
        )
    }
    accepted = [markers[(q, "accepted")] for q in ids]
    results = [markers[(q, "result")] for q in ids]
    runs = AnswerRun.objects.filter(question_id__in=ids)
    outcomes = {}
    for status in Question.objects.filter(pk__in=ids).values_list("status", flat=True):
        outcomes[status] = outcomes.get(status, 0) + 1
    span = (max(results) - min(accepted)).total_seconds()
    tool_ms = dict(
        ToolCallRecord.objects.filter(run__question_id__in=ids)
        .values_list("name")
        .annotate(mean=Avg("duration_ms"))
        .order_by("name")
        .values_list("name", "mean")
    )
    stage_ms = {}
    for stages in runs.values_list("stage_ms", flat=True):
        for stage, ms in stages.items():
            stage_ms.setdefault(stage, []).append(ms)
    return {
        "tool_ms": tool_ms,
        "stage_ms": {stage: statistics.fmean(values) for stage, values in stage_ms.items()},
        "per_minute": len(ids) / span * 60,
        "span": span,
        "wall_per_minute": len(ids) / phase["wall_seconds"] * 60,
        "latency": [(r - a).total_seconds() for a, r in zip(accepted, results, strict=True)],
        "wait": [
            (started - markers[(q, "accepted")]).total_seconds()
            for q, started in runs.filter(attempt=1).values_list("question_id", "started_at")
        ],
        "run_ms": list(runs.values_list("latency_ms", flat=True)),
        "outcomes": outcomes,
    }


def _throughput_report(count, warmup, warm_seconds, cases, phases):
    figures = {name: _phase_figures(phase) for name, phase in phases.items()}
    _close_django()
    names = sorted(phases, key=lambda name: len(phases[name]["workers"]))

    def row(label, cell):
        print(f"| {label} | " + " | ".join(cell(figures[name], phases[name]) for name in names) + " |")

    print("\n### End-to-end throughput (local answerer, 1, 2 and 4 worker processes)\n")
    counts = ",".join(str(len(phases[name]["workers"])) for name in names)
    print(
        "Command: `.venv/bin/python bench/bench_agent.py --throughput "
        f"--questions {count} --warmup {warmup} --workers {counts}`"
    )
    print(
        "(gunicorn 2 sync workers + N × `celery worker -c 1 --pool prefork` on PostgreSQL + Redis, local answerer, "
        f"Qdrant local folder (one worker owns it and serves the others) + LightRAG files. {count} questions per "
        f"phase — the {len(cases)} external matched-room questions of demo/data/eval.jsonl repeated — posted at once "
        f"in 10-message uploads, after {warmup} warm-up questions ({warm_seconds:.1f} s incl. cold start). Phases in "
        "the same run, most workers first; between phases the workers that do not own the FAQ folder are stopped.)\n"
    )
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    row(
        "questions/min (first accepted → last result marker)",
        lambda f, p: f"{f['per_minute']:,.0f} ({f['span']:.1f} s)",
    )
    row("questions/min (wall: first upload → all terminal)", lambda f, p: f"{f['wall_per_minute']:,.0f}")
    row(
        "accepted → result marker p50 / p95",
        lambda f, p: f"{_p50(f['latency']):.2f} s / {_p95(f['latency']):.2f} s",
    )
    row(
        "pipeline in the worker (`latency_ms`) p50 / p95",
        lambda f, p: f"{_p50(f['run_ms']):.0f} / {_p95(f['run_ms']):.0f} ms",
    )
    row("mean tool call (`duration_ms`)", lambda f, p: ", ".join(f"{k} {v:.0f}" for k, v in f["tool_ms"].items()))
    row("outcomes", lambda f, p: ", ".join(f"{k} {v}" for k, v in sorted(f["outcomes"].items())))
    row("tasks per worker", lambda f, p: ", ".join(f"{k} {v}" for k, v in p["tasks"].items()))
    row(
        "FAQ searches without the vector index",
        lambda f, p: str(sum(p["faq_unavailable"].values())),
    )
    base = figures[names[0]]["per_minute"]
    ratios = ", ".join(f"{name} {figures[name]['per_minute'] / base:.2f}×" for name in names)
    print(f"\nRatios to {names[0]} (questions/min): {ratios}. {_load()}")


if __name__ == "__main__":
    main()
