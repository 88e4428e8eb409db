"""Counterpart resolution with 10,000 vendors: the best-first index against a naive scorer, in the same run.

    .venv/bin/python bench/bench_resolution.py [--vendors 10000] [--queries 4000] [--baseline-queries 200] [--no-db]

Vendors are synthetic Korean distributors: 2-4 syllable stems plus a shared business suffix (상사, 물산, 유통,
식품, 산업, 테크, ...), some written with (주)/㈜/주식회사, some with an alias, so thousands of names share a
suffix and jamo scores of 0.8+ between different vendors are common (the hard case for the ID-typo check).

Room names are a mix: ID + exact name, ID + name + extra words, ID typo (another vendor's name), ID + a
misspelt own name, no ID exact (with spacing / corporate-mark variants), no ID containment, no ID unresolved.

Measured in one run, on the same room names:
(a) `VendorIndex.resolve` (the production path, index built once), p50/p95/p99 per call, overall and per kind;
(b) a naive baseline: every vendor name scored with `fuzz.partial_ratio` in a Python loop, then the same rules;
    it runs on an evenly spread subset (it is slow), where both are timed and their outcomes compared.
(c) unless --no-db: on a scratch PostgreSQL database `vcs_bench_resolution` (dropped and re-created), the
    per-call cost the services add: `vendor_names_revision()` (one aggregate query) and `room_name_resolve()`
    (revision check + resolve), plus the cold index build from the table.
Prints a markdown block for docs/benchmarks.md.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

from rapidfuzz import fuzz

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vendors.resolution import VendorIndex, normalize_name, split_room_name  # noqa: E402

DB_NAME = "vcs_bench_resolution"
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
SEED = 20261130
THRESHOLD = 0.80
CANDIDATE_LIMIT = 5

SYLLABLES = list(
    "가강경고광국금기나남누다대도동두라래로리마명미민바보부빛산삼상서선성세소솔수신아"
    "안양영오온우원유은이인자재정제조주중지진창천청태파평풍하한해현화효흥"
)
SUFFIXES = [
    "상사",
    "물산",
    "유통",
    "식품",
    "산업",
    "테크",
    "상회",
    "무역",
    "푸드",
    "기업",
    "제약",
    "농산",
    "수산",
    "에프앤비",
]
ROOM_WORDS = ["발주방", "정산방", "공지", "CS", "주문 문의", "담당자방"]
KINDS = ["id_exact", "id_words", "id_typo", "id_misspelt", "exact", "containment", "unresolved"]


def synthetic_vendors(rng: random.Random, count: int) -> list[tuple[str, str, list[str]]]:
    rows, seen = [], set()
    while len(rows) < count:
        stem = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        suffix = rng.choice(SUFFIXES)
        if normalize_name(stem + suffix) in seen:
            continue
        seen.add(normalize_name(stem + suffix))
        style = rng.random()
        name = f"(주){stem}{suffix}" if style < 0.1 else f"{stem}{suffix}㈜" if style < 0.15 else f"{stem}{suffix}"
        aliases = [f"{stem} {rng.choice(SUFFIXES)}"] if rng.random() < 0.15 else []
        rows.append((str(10000 + len(rows)), name, aliases))
    return rows


def misspell(rng: random.Random, name: str) -> str:
    """Swap one syllable of the stem for another (a typo staff make in a room name)."""
    stem_length = len(normalize_name(name)) - 2
    position = rng.randrange(max(stem_length, 1))
    text = normalize_name(name)
    return text[:position] + rng.choice(SYLLABLES) + text[position + 1 :]


def room_names(rng: random.Random, vendors, count: int) -> list[tuple[str, str]]:
    known = {normalize_name(n) for _, name, aliases in vendors for n in [name, *aliases]}
    rooms = []
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        code, name, _ = rng.choice(vendors)
        bare = normalize_name(name)
        if kind == "id_exact":
            room = f"({code}) {name}"
        elif kind == "id_words":
            room = f"({code}) {name} {rng.choice(ROOM_WORDS)}"
        elif kind == "id_typo":
            room = f"({code}) {rng.choice(vendors)[1]}"
        elif kind == "id_misspelt":
            room = f"({code}) {misspell(rng, name)}"
        elif kind == "exact":
            room = rng.choice([bare, f"(주) {bare}", f"{bare[:2]} {bare[2:]}", f"주식회사 {bare}"])
        elif kind == "containment":
            room = f"{bare} {rng.choice(ROOM_WORDS)}"
        else:
            while True:
                room = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) + rng.choice(SUFFIXES)
                if not any(room in n or n in room for n in known if len(n) >= 2):
                    break
        rooms.append((kind, room))
    rng.shuffle(rooms)
    return rooms


class NaiveResolver:
    """The rules with no index: every name scored with partial_ratio in a Python loop on every call."""

    def __init__(self, vendors):
        self.display = {code: name for code, name, _ in vendors}
        self.names = {
            code: [n for n in dict.fromkeys(normalize_name(x) for x in [name, *aliases]) if n]
            for code, name, aliases in vendors
        }
        self.jamo = {code: [unicodedata.normalize("NFD", n) for n in names] for code, names in self.names.items()}

    def resolve(self, room_name: str) -> dict:
        code, name_part = split_room_name(room_name)
        query = normalize_name(name_part)
        query_jamo = unicodedata.normalize("NFD", query)
        scores = {}
        for vendor, names in self.jamo.items():
            scores[vendor] = max(fuzz.partial_ratio(query_jamo, n) for n in names) / 100 if query else 0.0
        ranked = sorted(((c, s) for c, s in scores.items() if s > 0), key=lambda item: (-item[1], item[0]))
        candidates = [{"code": c, "name": self.display[c], "score": s} for c, s in ranked[:CANDIDATE_LIMIT]]

        def outcome(status, reason, vendor=None):
            return {"status": status, "vendor_code": vendor, "reason": reason, "candidates": candidates}

        if code is not None:
            if code not in self.names:
                return outcome("blocked", "unknown_id")
            if not query:
                return outcome("matched", "empty_name", code)
            if any(s >= THRESHOLD and s > scores[code] for c, s in scores.items() if c != code):
                return outcome("blocked", "id_typo")
            return outcome("matched", "id", code)
        exact = [c for c, names in self.names.items() if query in names]
        if len(exact) == 1:
            return outcome("matched", "exact", exact[0])
        contained = [
            c
            for c, names in self.names.items()
            if any((len(n) >= 2 and n in query) or (len(query) >= 2 and query in n) for n in names)
        ]
        if len(contained) == 1:
            return outcome("matched", "containment", contained[0])
        return outcome("unresolved", "ambiguous" if contained else "no_match")


def percentiles(samples: list[float]) -> dict[str, float]:
    cut = statistics.quantiles(sorted(samples), n=100, method="inclusive")
    return {"p50": statistics.median(samples), "p95": cut[94], "p99": cut[98]}


def timed(fn, items) -> tuple[list, list[float], list[float]]:
    """(results, wall ms, CPU ms per call). CPU time is what the call itself costs on a busy machine."""
    results, wall, cpu = [], [], []
    for item in items:
        start, start_cpu = time.perf_counter(), time.thread_time()
        results.append(fn(item))
        cpu.append((time.thread_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
    return results, wall, cpu


def database_figures(vendors, rooms) -> dict:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DB_NAME}")
    env = {**os.environ, "DATABASE_URL": DATABASE_URL, "DJANGO_SETTINGS_MODULE": "config.settings.local"}
    env.pop("REDIS_URL", None)
    env["DJANGO_DEBUG"] = "false"
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DJANGO_DEBUG")})
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from vendors.models import Vendor
    from vendors.selectors import room_name_resolve, vendor_index_get, vendor_names_revision

    Vendor.objects.bulk_create(Vendor(code=c, name=n, aliases=a) for c, n, a in vendors)
    start = time.perf_counter()
    vendor_index_get()
    cold_build_ms = (time.perf_counter() - start) * 1000
    _, revision_ms, _ = timed(lambda _: vendor_names_revision(), range(500))
    _, resolve_ms, _ = timed(room_name_resolve, [room for _, room in rooms])
    return {"cold_build_ms": cold_build_ms, "revision": percentiles(revision_ms), "resolve": percentiles(resolve_ms)}


def row(label: str, wall: list[float], cpu: list[float]) -> str:
    w, c = percentiles(wall), percentiles(cpu)
    return f"| {label} | {w['p50']:.2f} | {w['p95']:.2f} | {w['p99']:.2f} | {c['p50']:.2f} | {c['p95']:.2f} |"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vendors", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=4_000)
    parser.add_argument("--baseline-queries", type=int, default=200)
    parser.add_argument("--no-db", action="store_true", help="skip the PostgreSQL part")
    args = parser.parse_args()

    rng = random.Random(SEED)
    vendors = synthetic_vendors(rng, args.vendors)
    rooms = room_names(rng, vendors, args.queries)

    start = time.perf_counter()
    index = VendorIndex.build(vendors)
    build_ms = (time.perf_counter() - start) * 1000

    def resolve(room):
        return index.resolve(room, typo_threshold=THRESHOLD, candidate_limit=CANDIDATE_LIMIT)

    timed(resolve, [room for _, room in rooms[:200]])  # warm-up
    results, fast_wall, fast_cpu = timed(resolve, [room for _, room in rooms])
    by_kind: dict[str, tuple[list[float], list[float]]] = {kind: ([], []) for kind in KINDS}
    outcomes: dict[str, dict[str, int]] = {kind: {} for kind in KINDS}
    for (kind, _), result, wall, cpu in zip(rooms, results, fast_wall, fast_cpu, strict=True):
        by_kind[kind][0].append(wall)
        by_kind[kind][1].append(cpu)
        key = f"{result.status}/{result.reason}"
        outcomes[kind][key] = outcomes[kind].get(key, 0) + 1

    step = max(1, len(rooms) // args.baseline_queries)
    subset = [room for _, room in rooms[::step]][: args.baseline_queries]
    naive = NaiveResolver(vendors)
    naive_results, naive_wall, naive_cpu = timed(naive.resolve, subset)
    subset_results, subset_wall, subset_cpu = timed(resolve, subset)
    agree = sum(
        {k: v for k, v in fast.as_dict().items() if k != "vendor_name"} == slow
        for fast, slow in zip(subset_results, naive_results, strict=True)
    )

    names = sum(1 + len(a) for _, _, a in vendors)
    command = (
        f".venv/bin/python bench/bench_resolution.py --vendors {args.vendors} --queries {args.queries} "
        f"--baseline-queries {args.baseline_queries}" + (" --no-db" if args.no_db else "")
    )
    print("\n## Counterpart resolution\n")
    print(f"Command: `{command}`\n")
    print(
        f"{len(vendors):,} synthetic vendors ({names:,} names with aliases; {len(SUFFIXES)} shared suffixes), "
        f"{len(rooms):,} room names ({len(KINDS)} kinds, equal shares), index built in {build_ms:.0f} ms. "
        f"Threshold {THRESHOLD}; the exact top {CANDIDATE_LIMIT} candidates are computed on every call. "
        f"Load average at the end of the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall times include "
        f"waiting for the CPU; CPU ms is the call's own cost).\n"
    )
    print("| | wall p50 ms | wall p95 ms | wall p99 ms | CPU p50 ms | CPU p95 ms |")
    print("|---|---|---|---|---|---|")
    print(row(f"`VendorIndex.resolve`, all {len(rooms):,} room names", fast_wall, fast_cpu))
    for kind in KINDS:
        print(row(f"— {kind}", *by_kind[kind]))
    print(row(f"`VendorIndex.resolve`, baseline subset ({len(subset)})", subset_wall, subset_cpu))
    print(row("naive baseline (partial_ratio on every name), same subset", naive_wall, naive_cpu))
    fast_p, slow_p = percentiles(subset_wall), percentiles(naive_wall)
    p95 = percentiles(fast_wall)["p95"]
    print(
        f"\nNaive / index on the same subset (wall): p50 {slow_p['p50'] / fast_p['p50']:.0f}×, "
        f"p95 {slow_p['p95'] / fast_p['p95']:.0f}×. Outcomes and candidates identical on {agree}/{len(subset)}. "
        f"Goal p95 < 5 ms: {'met' if p95 < 5 else 'NOT met'} (wall p95 {p95:.2f} ms).\n"
    )
    print(
        "Outcomes per kind: "
        + "; ".join(f"{kind}: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes[kind].items())) for kind in KINDS)
    )
    if not args.no_db:
        db = database_figures(vendors, rooms)
        print(
            f"\nOn PostgreSQL ({len(vendors):,} vendor rows, wall): `vendor_names_revision()` "
            f"p50 {db['revision']['p50']:.2f} ms, p95 {db['revision']['p95']:.2f} ms; `room_name_resolve()` "
            f"(revision check + resolve) p50 {db['resolve']['p50']:.2f} ms, p95 {db['resolve']['p95']:.2f} ms, "
            f"p99 {db['resolve']['p99']:.2f} ms; cold index build from the table {db['cold_build_ms']:.0f} ms "
            f"(once per process and vendor change)."
        )


if __name__ == "__main__":
    main()
