"""LightRAG knowledge hub: `hub_search` over 13 loaded workspaces vs one, construct/initialise, reload cost.

    .venv/bin/python bench/bench_hub.py [--docs-per-workspace 6] [--rounds 3]

Builds a scratch database `vcs_bench_hub` (dropped and re-created) and a temporary LightRAG working dir, creates
the demo vendors and brands, and ingests synthetic documents into all 13 workspaces through `hub_document_ingest`
(the real write path: row lock, local extractor, `ainsert_custom_kg`, revision bump, audit row). The documents are
the demo knowledge rewritten per variant (another edition title, other vendors), so every chunk is distinct.
Then, with the local embedder, in the same run:
(a) `hub_search` routed (the default), (b) asked of all 13 workspaces, (c) asked of the one workspace that holds
    the answer, and (d) a baseline: LightRAG's own `aquery_data` on that one workspace with the same keywords,
    through the same loop thread (what the library costs before our routing, scoring and evidence mapping);
(e) the per-search revision check (the workspace SELECT), (f) a search that first reloads a workspace whose
    revision another process bumped, (g) construct + initialise of 13 instances, empty and loaded,
(h) questions routing cannot narrow: asked of the 4 nearest workspaces (default) vs all 13, with how often the
    expected workspace is among the top 3 items, and (i) routed questions at KNOWLEDGE_HUB_TOP_K 10 (default)
    vs 20.
Prints the figures and a markdown block for docs/benchmarks.md.
"""

import argparse
import csv
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scratch_database import database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_hub"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
SEED = 20261130
EDITIONS = ["상온", "냉장", "냉동", "온라인", "PB", "수입", "신선", "가공", "생활용품", "음료", "주류", "베이커리"]
# (question, workspace holding the answer)
QUESTIONS = [
    ("반품 회수 비용은 누가 부담하나요?", "returns"),
    ("정산 대금 지급일이 언제예요?", "settlement"),
    ("세금계산서 언제까지 발행해야 하나요?", "settlement"),
    ("평택 물류센터 입고 시간 알려주세요", "logistics"),
    ("팔레트 높이 기준이 어떻게 되나요", "logistics"),
    ("행사 할인 분담 비율은?", "promotions"),
    ("고운들 절임배추 행사 가격", "promotions"),
    ("계약 자동 연장 되나요?", "contracts"),
    ("소비기한 입고 기준", "products"),
    ("발주 마감 시간이 몇 시예요?", "ordering"),
    ("단가 변경 요청하면 언제 적용되나요", "pricing"),
    ("HACCP 인증서 갱신 기한", "quality"),
    ("클레임 1차 답변 기한 넘기면 페널티가 있나요", "claims"),
    ("파트너센터 비밀번호 잠김 해제", "systems"),
    ("추석 연휴 물류센터 휴무 일정", "notices"),
    ("거래처 코드는 어떻게 확인하나요", "policies"),
]
# Questions no routing keyword narrows: asked of the workspaces nearest in content (KNOWLEDGE_HUB_UNROUTED_WORKSPACES)
UNROUTED_QUESTIONS = [
    ("PB 제조 위탁이면 며칠 안에 돈을 받나요", "contracts"),
    ("점포 재고는 몇 시간 안에 거둬들이나요", "quality"),
    ("사업자등록증 말고 어떤 서류를 내야 하나요", "policies"),
    ("차량 온도 기록지가 없으면 어떻게 되나요", "quality"),
    ("알림톡은 언제 오나요", "systems"),
    ("구두 약속도 인정되나요", "policies"),
    ("헬프데스크 번호 알려주세요", "systems"),
    ("전단 광고비 얼마예요", "promotions"),
]


def _setup_django(working_dir: str):
    env = {**os.environ, "DATABASE_URL": DATABASE_URL, "DJANGO_SETTINGS_MODULE": "config.settings.local"}
    env.update(DJANGO_DEBUG="false", LIGHTRAG_WORKING_DIR=working_dir)
    for name in ("REDIS_URL", "EMBEDDINGS_BASE_URL", "KNOWLEDGE_HUB_LLM_BASE_URL", "OPENAI_BASE_URL"):
        env.pop(name, None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)
    for name in ("REDIS_URL", "EMBEDDINGS_BASE_URL", "KNOWLEDGE_HUB_LLM_BASE_URL", "OPENAI_BASE_URL"):
        os.environ.pop(name, None)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _demo_reference_data():
    from vendors.models import Brand, Vendor

    with (ROOT / "demo/data/vendors.csv").open(encoding="utf-8") as rows:
        for row in csv.DictReader(rows):
            aliases = [alias for alias in row["aliases"].split("|") if alias]
            Vendor.objects.create(code=row["code"], name=row["name"], aliases=aliases)
    for line in (ROOT / "demo/data/records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") == "brand":
            Brand.objects.create(name=record["brand"], aliases=record.get("aliases", []))
    return list(Vendor.objects.values_list("name", flat=True))


def _synthetic_documents(docs_per_workspace: int, vendor_names: list[str]):
    """(workspace, title, content) per document: demo documents re-edited per edition with other vendors."""
    rng = random.Random(SEED)
    demo_vendors = ["대한물산", "가온상사", "가온상회", "바다수산", "정원식품", "미래식품", "삼광산업", "새한물산"]
    pattern = re.compile("|".join(demo_vendors))
    for folder in sorted(path for path in (ROOT / "demo/data/knowledge").iterdir() if path.is_dir()):
        templates = [path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.md"))]
        for number in range(docs_per_workspace):
            template = templates[number % len(templates)]
            edition = f"{EDITIONS[number % len(EDITIONS)]} 상품 {number + 1}판"
            text = pattern.sub(lambda _: rng.choice(vendor_names), template)
            text = re.sub(r"^(#+ .+)$", rf"\1 ({edition})", text, flags=re.MULTILINE)
            yield folder.name, f"{template.splitlines()[0].lstrip('# ')} ({edition})", text


def _pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _timed(function, repeat):
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs-per-workspace", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the questions per run")
    args = parser.parse_args()
    command = (
        f".venv/bin/python bench/bench_hub.py --docs-per-workspace {args.docs_per_workspace} --rounds {args.rounds}"
    )

    database_recreate(DB_NAME)
    working_dir = tempfile.mkdtemp(prefix="bench_hub_lightrag_")
    _setup_django(working_dir)
    from django.db import connection
    from django.test import override_settings

    from agent.knowledge.hub import (
        _enabled_workspaces,
        hub_document_ingest,
        hub_search,
        lexicon_get,
        workspaces_route,
    )
    from agent.knowledge.hub_runtime import lightrag_modules, runtime_get, runtime_reset
    from agent.knowledge.korean_terms import query_keywords
    from agent.models import KnowledgeDocument, KnowledgeWorkspace

    vendor_names = _demo_reference_data()
    lightrag = lightrag_modules()
    slugs = list(KnowledgeWorkspace.objects.values_list("slug", flat=True))

    # (g1) 13 empty instances: construct + initialise_storages, nothing on disk yet.
    runtime = runtime_get()
    started = time.perf_counter()
    runtime.call(_load_all(runtime, [(slug, 0) for slug in slugs]), timeout=300)
    empty_init_ms = (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    documents = 0
    for workspace, title, content in _synthetic_documents(args.docs_per_workspace, vendor_names):
        document = hub_document_ingest(workspace=workspace, title=title, content=content, actor="bench")
        assert document.status == KnowledgeDocument.Status.INGESTED, document.error
        documents += 1
    ingest_seconds = time.perf_counter() - started
    totals = KnowledgeDocument.objects.values_list("chunk_count", "entity_count", "relation_count")
    chunks, entities, relations = (sum(column) for column in zip(*totals, strict=True))
    disk_mb = sum(path.stat().st_size for path in Path(working_dir).rglob("*") if path.is_file()) / 1e6
    print(
        f"ingested {documents} documents ({chunks} chunks, {entities} entities, {relations} relations) "
        f"in {ingest_seconds:.1f} s; {disk_mb:.1f} MB on disk"
    )

    # (g2) 13 loaded instances, cold: what a fresh process pays on its first search.
    runtime_reset()
    runtime = runtime_get()
    revisions = dict(KnowledgeWorkspace.objects.values_list("slug", "revision"))
    started = time.perf_counter()
    runtime.call(_load_all(runtime, list(revisions.items())), timeout=300)
    loaded_init_ms = (time.perf_counter() - started) * 1000

    rng = random.Random(SEED)
    questions = QUESTIONS * args.rounds
    rng.shuffle(questions)
    for question, _ in QUESTIONS:  # warm the query-embedding cache paths and the model once
        hub_search(question)
    runs = {
        "routed": [],
        "all": [],
        "one": [],
        "lightrag_one": [],
    }
    lexicon = lexicon_get()
    for question, workspace in questions:
        runs["routed"] += _timed(lambda question=question: hub_search(question), 1)
        runs["all"] += _timed(lambda question=question: hub_search(question, workspaces=slugs), 1)
        runs["one"] += _timed(lambda q=question, w=workspace: hub_search(q, workspaces=[w]), 1)
        high, low = query_keywords(question, lexicon)
        runs["lightrag_one"] += _timed(
            lambda q=question, w=workspace, h=high, low=low: runtime.call(
                _lightrag_query(runtime, lightrag, w, revisions[w], q, h, low), timeout=30
            ),
            1,
        )
    # (h) and (i), interleaved per question.
    unrouted = UNROUTED_QUESTIONS * args.rounds
    rng.shuffle(unrouted)
    found = {"nearest": 0, "all_unrouted": 0}
    for number, (question, workspace) in enumerate(unrouted):
        modes = [("nearest", 4), ("all_unrouted", 0)]
        for key, asked in modes if number % 2 else modes[::-1]:
            with override_settings(KNOWLEDGE_HUB_UNROUTED_WORKSPACES=asked):
                started = time.perf_counter()
                items = hub_search(question, limit=3)
                runs.setdefault(key, []).append((time.perf_counter() - started) * 1000)
            found[key] += any(item.workspace == workspace for item in items)
    for number, (question, _) in enumerate(questions):
        modes = [("routed_top_k_10", 10), ("routed_top_k_20", 20)]
        for key, top_k in modes if number % 2 else modes[::-1]:
            with override_settings(KNOWLEDGE_HUB_TOP_K=top_k):
                runs.setdefault(key, []).extend(_timed(lambda question=question: hub_search(question), 1))

    routed_sizes = []
    rows = _enabled_workspaces()
    for question, _ in QUESTIONS:
        routed_sizes.append(len(workspaces_route(question, rows)))

    # (e) the revision check every search makes.
    revision_check = _timed(lambda: _enabled_workspaces(), 200)

    # (f) another process bumped a revision: the next search reloads that workspace from its files.
    reload_samples = []
    for question, workspace in QUESTIONS:
        KnowledgeWorkspace.objects.filter(slug=workspace).update(revision=revisions[workspace] + 1000)
        revisions[workspace] += 1000
        reload_samples += _timed(lambda q=question, w=workspace: hub_search(q, workspaces=[w]), 1)
    runtime_reset()
    connection.close()
    shutil.rmtree(working_dir, ignore_errors=True)

    labels = {
        "routed": "`hub_search`, routed (default)",
        "all": "`hub_search`, all 13 workspaces",
        "one": "`hub_search`, the one workspace",
        "lightrag_one": "baseline: LightRAG `aquery_data`, one workspace, same keywords",
        "nearest": "`hub_search`, questions routing cannot narrow: the 4 nearest workspaces (default)",
        "all_unrouted": "— the same questions asked of all 13 (`KNOWLEDGE_HUB_UNROUTED_WORKSPACES=0`)",
        "routed_top_k_10": "`hub_search`, routed, `KNOWLEDGE_HUB_TOP_K=10` (default)",
        "routed_top_k_20": "— the same with `KNOWLEDGE_HUB_TOP_K=20`",
    }
    print()
    print("## Knowledge hub\n")
    print(
        f"Command: `{command}` — {documents} synthetic documents in 13 workspaces ({chunks:,} chunks, "
        f"{entities:,} entities, {relations:,} relations, {disk_mb:.1f} MB of file storages), local embedder, "
        f"PostgreSQL, {len(questions)} searches per run, 2-core VM.\n"
    )
    print("| run | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    for key, label in labels.items():
        print(f"| {label} | {_pct(runs[key], 50):.1f} | {_pct(runs[key], 95):.1f} |")
    print(
        f"| revision check (the workspace SELECT every search makes) | {_pct(revision_check, 50):.2f} | "
        f"{_pct(revision_check, 95):.2f} |"
    )
    print(
        f"| `hub_search`, one workspace, right after its revision changed (reload) | "
        f"{_pct(reload_samples, 50):.1f} | {_pct(reload_samples, 95):.1f} |"
    )
    print()
    print(
        f"- All 13 workspaces / one workspace: {_pct(runs['all'], 50) / _pct(runs['one'], 50):.1f}× at p50, "
        f"{_pct(runs['all'], 95) / _pct(runs['one'], 95):.1f}× at p95. Routing asked "
        f"{sum(routed_sizes) / len(routed_sizes):.1f} workspaces per question on average "
        f"(routed / all at p50: {_pct(runs['routed'], 50) / _pct(runs['all'], 50):.2f})."
    )
    print(
        f"- Questions routing cannot narrow ({len(unrouted)} searches): the expected workspace among the top 3 items "
        f"in {found['nearest']} with the 4 nearest workspaces, {found['all_unrouted']} with all 13."
    )
    print(
        f"- Our layer over LightRAG's own query (one workspace): "
        f"{_pct(runs['one'], 50) / _pct(runs['lightrag_one'], 50):.2f}× at p50."
    )
    print(
        f"- Construct + initialise 13 instances: {empty_init_ms:.0f} ms empty, {loaded_init_ms:.0f} ms loaded "
        f"(cold, from the files). Ingest: {ingest_seconds / documents:.2f} s per document."
    )


async def _load_all(runtime, targets):
    for slug, revision in targets:
        async with runtime.workspace(slug, revision):
            pass


async def _lightrag_query(runtime, lightrag, slug, revision, question, high, low):
    from django.conf import settings

    param = lightrag.QueryParam(
        mode=settings.KNOWLEDGE_HUB_QUERY_MODE,
        top_k=settings.KNOWLEDGE_HUB_TOP_K,
        chunk_top_k=settings.KNOWLEDGE_HUB_CHUNK_TOP_K,
        hl_keywords=high,
        ll_keywords=low,
        enable_rerank=False,
    )
    async with runtime.workspace(slug, revision) as rag:
        return await rag.aquery_data(question, param)


if __name__ == "__main__":
    main()
