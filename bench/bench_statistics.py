"""Staff pages at volume: statistics selectors, the statistics page, the attention list, the question list and one
audit page, over 14 days of questions with their runs, rounds, evidence and tool calls.

    .venv/bin/python bench/bench_statistics.py [--per-day 2000] [--repeat 7]

Builds a scratch database `vcs_bench_statistics` (dropped and re-created, migrated), bulk-loads N questions per
Seoul day for 14 days (each with one run: 1–3 draft rounds, some with violations; 4 evidence items; 2 tool calls;
statuses and latencies drawn from a fixed seed), then times each read `repeat` times and reports the median.
Baselines in the same run: the PostgreSQL paths (latency p50/p95 by `percentile_cont`, violations by kind by
`jsonb_array_elements`) against the portable Python paths (`latency_percentiles_python`,
`violations_by_kind_python`), which read the rows into Python; both must give the same results. Pages are
rendered through Django's test client as a superuser (template rendering included, no network).
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from scratch_database import database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_statistics"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
SEED = 20261130
DAYS = 14
STATUS_WEIGHTS = {"answered": 80, "held": 5, "blocked": 3, "no_evidence": 8, "failed": 2, "running": 2}
KINDS = ["amount", "percent", "brand_misspelt", "brand_unsupported", "other_vendor", "action_claim"]
QUESTIONS = [
    "결제 조건이 어떻게 되나요?",
    "참기름 단가 알려주세요",
    "이번 달 프로모션 있나요?",
    "반품 접수는 어떻게 하나요?",
    "정산 지급일이 언제인가요?",
    "세금계산서 언제 발행돼요?",
    "배송 마감 시간이 몇 시예요?",
    "신규 상품 입점 절차 알려주세요",
]


def _setup_django():
    env = {**os.environ, "DATABASE_URL": DATABASE_URL, "DJANGO_SETTINGS_MODULE": "config.settings.local"}
    env["DJANGO_DEBUG"] = "false"
    env.pop("REDIS_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DJANGO_DEBUG")})
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _load(per_day: int, rng: random.Random) -> int:
    """Bulk-insert the data set; returns the id of a question with a long run (for the audit page)."""
    from django.db import connection, transaction
    from django.utils import timezone

    from agent.models import AnswerRun, DraftRound, RunEvidence, ToolCallRecord
    from conversations.models import Message, Question, Room, UploadBatch
    from delivery.models import Device
    from vendors.models import Vendor

    now = timezone.now()
    total = per_day * DAYS
    statuses = rng.choices(list(STATUS_WEIGHTS), weights=list(STATUS_WEIGHTS.values()), k=total)
    with transaction.atomic():
        vendors = Vendor.objects.bulk_create(Vendor(code=str(5000 + n), name=f"벤치상사{n}") for n in range(200))
        rooms = Room.objects.bulk_create(
            Room(stable_key=f"bench-{v.pk}", name=f"({v.code}) {v.name}", resolution_status="matched", vendor=v)
            for v in vendors
        )
        device = Device.objects.create(name="bench uploader", role=Device.Role.UPLOADER)
        batch = UploadBatch.objects.create(device=device, batch_id="bench")
        messages = Message.objects.bulk_create(
            (
                Message(room=rooms[n % len(rooms)], batch=batch, sender_name="김대리", text="q", sent_at=now)
                for n in range(total)
            ),
            batch_size=5000,
        )
        questions = Question.objects.bulk_create(
            (
                Question(
                    message=message,
                    room_id=message.room_id,
                    vendor_id=rooms[n % len(rooms)].vendor_id,
                    text=rng.choice(QUESTIONS) + rng.choice(["", " ", "?", "요"]),
                    status=statuses[n],
                    outcome_reason="stuck running" if statuses[n] == "failed" else "",
                )
                for n, message in enumerate(messages)
            ),
            batch_size=5000,
        )
        runs = AnswerRun.objects.bulk_create(
            (
                AnswerRun(
                    question=question,
                    provider="local",
                    room_kind="external",
                    outcome="" if question.status == "running" else question.status,
                    latency_ms=int(rng.lognormvariate(6.5, 0.6)),
                    final_text="답변",
                    awaiting_review=question.status == "answered" and rng.random() < 0.03,
                )
                for question in questions
            ),
            batch_size=5000,
        )
        rounds, evidence, calls = [], [], []
        for run in runs:
            for number in range(rng.choice([1, 1, 1, 2, 3])):
                violations = [
                    {"kind": rng.choice(KINDS), "text": "x", "span": [0, 1], "reason": "r", "value": None}
                    for _ in range(rng.choice([0, 0, 1, 2]) if number == 0 else 0)
                ]
                rounds.append(DraftRound(run=run, number=number, draft="초안", violations=violations))
            for position in range(4):
                kind = rng.choice(["record", "record", "hub", "faq"])
                evidence.append(
                    RunEvidence(run=run, position=position, source_kind=kind, reference=f"{kind}:{position}", text="t")
                )
            for position in range(2):
                calls.append(ToolCallRecord(run=run, position=position, name="search_records", allowed=True))
        DraftRound.objects.bulk_create(rounds, batch_size=5000)
        RunEvidence.objects.bulk_create(evidence, batch_size=5000)
        ToolCallRecord.objects.bulk_create(calls, batch_size=5000)
    with connection.cursor() as cursor:
        # Spread the questions over the 14 Seoul days (and through each day); runs start when their question came.
        cursor.execute(
            "UPDATE conversations_question SET created_at = %s - (id %% 14) * interval '1 day' "
            "- (id %% 43200) * interval '1 second'",
            [now],
        )
        cursor.execute(
            "UPDATE agent_answerrun r SET started_at = q.created_at FROM conversations_question q "
            "WHERE q.id = r.question_id"
        )
        cursor.execute("ANALYZE")
    long_run = runs[0]
    for position in range(4, 60):
        RunEvidence.objects.create(run=long_run, position=position, source_kind="hub", reference=f"hub:{position}")
    print(
        f"loaded {total} questions, {len(runs)} runs, {len(rounds)} rounds, {len(evidence) + 56} evidence items, "
        f"{len(calls)} tool calls"
    )
    return long_run.question_id


def _median_ms(function, repeat: int) -> float:
    function()  # warm the caches once
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-day", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    command = f".venv/bin/python bench/bench_statistics.py --per-day {args.per_day} --repeat {args.repeat}"

    database_recreate(DB_NAME)
    _setup_django()
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from agent.models import AnswerRun
    from agent.selectors import (
        TIMED_OUTCOMES,
        latency_percentiles_python,
        statistics_daily,
        statistics_frequent_questions,
        statistics_latency_percentiles,
        statistics_source_split,
        statistics_unanswered_questions,
        statistics_violations_by_kind,
        statistics_window_start,
        violations_by_kind_python,
    )

    audit_question_id = _load(args.per_day, random.Random(SEED))
    window_start = statistics_window_start(days=DAYS)
    window = AnswerRun.objects.filter(started_at__gte=window_start, outcome__in=TIMED_OUTCOMES).order_by()
    assert statistics_latency_percentiles(days=DAYS) == latency_percentiles_python(window)
    assert statistics_violations_by_kind(days=DAYS) == violations_by_kind_python(window_start)

    reads = {
        "statistics_daily": lambda: statistics_daily(days=DAYS),
        "violations by kind, PostgreSQL jsonb_array_elements": lambda: statistics_violations_by_kind(days=DAYS),
        "violations by kind, Python path (baseline)": lambda: violations_by_kind_python(window_start),
        "statistics_frequent_questions": lambda: statistics_frequent_questions(days=DAYS),
        "statistics_unanswered_questions": lambda: statistics_unanswered_questions(),
        "statistics_source_split": lambda: statistics_source_split(days=DAYS),
        "latency p50/p95, PostgreSQL percentile_cont": lambda: statistics_latency_percentiles(days=DAYS),
        "latency p50/p95, Python path (baseline)": lambda: latency_percentiles_python(window),
    }
    read_ms = {name: _median_ms(function, args.repeat) for name, function in reads.items()}

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("bench", password="bench-only"))
    pages = {
        "statistics page": reverse("agent_admin:statistics"),
        "attention list (page 1 of 50)": reverse("agent_admin:attention"),
        "question list (page 1 of 50)": reverse("admin:conversations_question_changelist"),
        "question audit page (60 evidence items)": reverse(
            "admin:conversations_question_change", args=[audit_question_id]
        ),
    }

    def get(url):
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)

    page_ms = {name: _median_ms(lambda url=url: get(url), args.repeat) for name, url in pages.items()}

    latency_ratio = (
        read_ms["latency p50/p95, Python path (baseline)"] / read_ms["latency p50/p95, PostgreSQL percentile_cont"]
    )
    violations_ratio = (
        read_ms["violations by kind, Python path (baseline)"]
        / read_ms["violations by kind, PostgreSQL jsonb_array_elements"]
    )
    lines = [
        f"{args.per_day * DAYS:,} questions over {DAYS} days ({args.per_day:,}/day), median of {args.repeat} runs.",
        "",
        "| read | ms |",
        "|---|---:|",
        *(f"| {name} | {ms:.1f} |" for name, ms in read_ms.items()),
        *(f"| {name} | {ms:.1f} |" for name, ms in page_ms.items()),
        "",
        f"PostgreSQL vs the Python path (same results, asserted): percentiles {latency_ratio:.1f}× faster, "
        f"violations by kind {violations_ratio:.1f}× faster.",
        "",
        f"Command: `{command}`",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
