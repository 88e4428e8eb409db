"""The hub's rare-noun lookup (`hub._rare_term_hits`): its cost per question as the hub grows.

    .venv/bin/python bench/bench_hub_rare_terms.py [--sizes 1000 10000] [--queries 200]

Builds a scratch PostgreSQL database `vcs_bench_hub_rare` (dropped and re-created), migrates it (the 13 workspaces),
and writes ingested `KnowledgeDocument` rows directly — the lookup reads only the documents table, never LightRAG —
from the demo knowledge documents, each copy with its own edition line, spread over the 13 workspaces, with the noun
counts an ingest keeps (`KnowledgeTermCount`, `counted_terms`), plus one document holding a word no other does
(`재해위로금`). Then, for each
size, times the lookup for demo-style questions (a rare word that one document holds, found through the GIN index on
the documents' bigrams of migration 0016; common words; and
words no document holds), interleaved with a baseline in the same run: the workspace revision read every hub search
already makes (`_enabled_workspaces`). Prints a markdown block for docs/benchmarks.md.
"""

import argparse
import hashlib
import os
import random
import statistics
import sys
import time
from pathlib import Path

from scratch_database import database_drop, database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_hub_rare"
SEED = 20261202
QUESTIONS = [
    "이물 혼입이면 위로금은 얼마예요?",
    "클레임 1차 답변 늦으면 패널티 얼마 물어요?",
    "컨테이너째로 넣을 수 있어요? 어느 센터로 가야돼요",
    "상품코드 몇 자리로 되어있는 거예요?",
    "반품 회수 요일이 언제예요?",
    "정산 대금은 언제 지급돼요?",
    "재해위로금은 어떤 경우에 지급돼요?",
    "휴가 신청은 어떻게 하나요?",
    "와이파이 비밀번호 알려줘",
]


def _setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


UNIQUE_DOC = "# 재해 보상\n\n## 재해위로금\n재해위로금은 협력사 직원이 당사 센터에서 다친 경우 30만 원을 지급합니다.\n"


def _counts_set(documents: list) -> None:
    """The noun counts an ingest keeps, for rows written directly (each distinct text's nouns read once)."""
    from collections import Counter

    from agent.knowledge.hub_terms import document_nouns
    from agent.models import KnowledgeDocument, KnowledgeTermCount

    nouns_of: dict[str, list[str]] = {}
    counts: Counter = Counter()
    for document in documents:
        base = document.content.rsplit("\n\n판본", 1)[0]
        if base not in nouns_of:
            nouns_of[base] = document_nouns(base)
        document.counted_terms = nouns_of[base]
        counts.update(nouns_of[base])
    KnowledgeDocument.objects.bulk_update(documents, ["counted_terms"], batch_size=1_000)
    existing = {row.name: row for row in KnowledgeTermCount.objects.all()}
    for name, count in counts.items():
        row = existing.get(name) or KnowledgeTermCount(name=name, document_count=0)
        row.document_count += count
        row.save()


def _documents(count: int, offset: int) -> list:
    from agent.knowledge.embeddings import text_bigrams
    from agent.models import KnowledgeDocument, KnowledgeWorkspace

    sources = sorted((ROOT / "demo" / "data" / "knowledge").rglob("*.md"))
    texts = [path.read_text(encoding="utf-8") for path in sources]
    workspaces = list(KnowledgeWorkspace.objects.order_by("slug"))
    rng = random.Random(SEED + offset)
    rows = []
    for index in range(offset, offset + count):
        content = f"{rng.choice(texts)}\n\n판본 {index}호: 운영팀 배포본입니다.\n"
        rows.append(
            KnowledgeDocument(
                workspace=workspaces[index % len(workspaces)],
                title=f"문서 {index}",
                content=content,
                search_bigrams=text_bigrams(content),
                sha256=hashlib.sha256(content.encode()).hexdigest(),
                status=KnowledgeDocument.Status.INGESTED,
            )
        )
    return rows


def _time(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    database_recreate(DB_NAME)
    try:
        _setup()
        from django.db import connection

        from agent.knowledge import hub
        from agent.knowledge.embeddings import text_bigrams
        from agent.knowledge.korean_terms import query_keywords
        from agent.models import KnowledgeDocument

        slugs = tuple(row.slug for row in hub._enabled_workspaces())
        keywords = {question: query_keywords(question, hub.lexicon_get())[1] for question in QUESTIONS}
        rows, written = [], 0
        for size in sorted(args.sizes):
            created = KnowledgeDocument.objects.bulk_create(_documents(size - written, written), batch_size=1_000)
            if not written:
                created[0].content = UNIQUE_DOC
                created[0].search_bigrams = text_bigrams(UNIQUE_DOC)
                created[0].save()
            _counts_set(created)
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE agent_knowledgedocument")  # what autovacuum does after a bulk load
            written = size
            for question in QUESTIONS:  # warm: the analyser, the query plan, the table's pages
                hub._rare_term_hits(question, keywords[question], slugs)
            lookup, baseline, found = [], [], 0
            for index in range(args.queries):
                question = QUESTIONS[index % len(QUESTIONS)]
                lookup.append(_time(lambda q=question: hub._rare_term_hits(q, keywords[q], slugs)))
                baseline.append(_time(hub._enabled_workspaces))
            found = sum(bool(hub._rare_term_hits(q, keywords[q], slugs)) for q in QUESTIONS)
            p95 = statistics.quantiles(lookup, n=20)[-1]
            base_p95 = statistics.quantiles(baseline, n=20)[-1]
            rows.append((size, statistics.median(lookup), p95, statistics.median(baseline), base_p95, found))
            print(f"{size} documents: lookup p50 {rows[-1][1]:.2f} ms p95 {p95:.2f} ms", file=sys.stderr)
        print(
            "| documents | lookup p50 ms | lookup p95 ms | baseline (revision read) p50 ms | baseline p95 ms "
            "| lookup / baseline (p50) | questions with passages |"
        )
        print("|---|---|---|---|---|---|---|")
        for size, p50, p95, base_p50, base_p95, found in rows:
            print(
                f"| {size:,} | {p50:.2f} | {p95:.2f} | {base_p50:.2f} | {base_p95:.2f} | {p50 / base_p50:.0f}× "
                f"| {found}/{len(QUESTIONS)} |"
            )
        print(f"\nLoad average at the end: {', '.join(f'{value:.1f}' for value in os.getloadavg())}.")
    finally:
        from django.db import connections

        connections.close_all()
        database_drop(DB_NAME)


if __name__ == "__main__":
    main()
