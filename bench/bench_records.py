"""Vendor record search at 100,000 records across 2,000 vendors on PostgreSQL, against an ILIKE baseline.

    .venv/bin/python bench/bench_records.py [--records 100000] [--vendors 2000] [--queries 400]

Builds a scratch database `vcs_bench_records` (dropped and re-created), migrates it, and bulk-loads vendors,
brands, products and records. Vendor sizes are log-normal (`--sigma`, default 1.0): most vendors hold a few
dozen records, the largest over a thousand, so the heavy end is measured, not only the average.

Questions are Korean with particles and question endings (`참기름은 단가가 얼마예요?`), each aimed at a product
term of one vendor; half go to random vendors, half to the 20 largest. Measured in the same run:
(a) `vendor_records_search` (particle-stripped tokens, pg_trgm word similarity, records + products), and
(b) a baseline: the question's whitespace tokens as ILIKE patterns on title/body of the vendor's records, no
    particle handling, no trigram index (what a naive implementation does).
Both report p50/p95/p99 latency in ms and hit@5 (a returned item mentions the asked term). Prints a markdown
block for docs/benchmarks.md.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from scratch_database import database_recreate

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "vcs_bench_records"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
LIMIT = 5
SEED = 20261130

ITEMS = [
    "라면",
    "김치",
    "참기름",
    "들기름",
    "간장",
    "고추장",
    "된장",
    "식용유",
    "설탕",
    "밀가루",
    "생수",
    "커피믹스",
    "녹차",
    "과자",
    "초콜릿",
    "아이스크림",
    "냉동만두",
    "햄",
    "소시지",
    "참치캔",
    "두부",
    "어묵",
    "떡볶이떡",
    "카레",
    "짜장",
    "케첩",
    "마요네즈",
    "식초",
    "올리고당",
    "물엿",
    "부침가루",
    "튀김가루",
    "전분",
    "쌀",
    "현미",
    "보리차",
    "옥수수차",
    "우유",
    "요거트",
    "치즈",
    "버터",
    "계란",
    "김",
    "미역",
    "다시마",
    "멸치",
    "새우젓",
    "액젓",
    "고춧가루",
    "후추",
    "소금",
    "깨",
    "견과류",
    "시리얼",
    "잼",
    "꿀",
    "탄산수",
    "콜라",
    "사이다",
    "주스",
    "이온음료",
    "캔커피",
    "두유",
    "즉석밥",
    "컵밥",
    "죽",
    "국수",
    "당면",
    "소면",
    "우동",
    "냉면",
    "스파게티",
    "피자",
    "돈가스",
    "너겟",
    "핫도그",
    "만두피",
    "단무지",
    "피클",
    "쌈장",
    "초장",
    "굴소스",
    "맛술",
    "물티슈",
    "키친타월",
    "세제",
    "섬유유연제",
    "종이컵",
    "비닐봉투",
]
MODIFIERS = [
    "프리미엄",
    "유기농",
    "대용량",
    "저염",
    "무가당",
    "골드",
    "순한",
    "매운",
    "미니",
    "가정용",
    "업소용",
    "실속",
]
BRANDS = [
    f"{a}{b}"
    for a in ["한빛", "다온", "누리", "가람", "솔빛", "하늘", "초록", "새봄", "바른", "참된"]
    for b in ["식품", "푸드", "유통"]
]
TERMS = ["월말 마감 익월 10일 현금", "15일 마감 당월 말 지급", "월말 마감 익월 25일 어음", "선결제 후 출고"]
KINDS = ["contract", "order", "promotion", "settlement", "notice", "other"]
PARTICLES = ["은", "는", "이", "가", "을", "를", "의", "도", "에", "에서", "으로", "까지"]
ASKS = [
    "단가가 얼마예요?",
    "단가 알려주세요",
    "프로모션 있나요?",
    "공급 조건이 어떻게 되나요",
    "주문 내역 확인 부탁드립니다",
    "할인율은요?",
    "정산은 언제 되나요?",
]


def _vendor_sizes(rng: random.Random, records: int, vendors: int, sigma: float) -> list[int]:
    weights = [rng.lognormvariate(0, sigma) for _ in range(vendors)]
    total = sum(weights)
    sizes = [max(5, round(records * w / total)) for w in weights]
    sizes[sizes.index(max(sizes))] += records - sum(sizes)  # exact total
    return sizes


def _record_row(rng: random.Random, kind: str, item: str) -> dict:
    month = rng.randint(1, 12)
    price = rng.randint(10, 900) * 100
    if kind == "contract":
        title, body = (
            f"{item} 공급 계약 조건",
            f"{item}의 공급 단가는 {price:,}원이며 결제는 {rng.choice(TERMS)} 조건이다.",
        )
        values = {"단가": f"{price:,}원", "결제 조건": rng.choice(TERMS)}
    elif kind == "order":
        number = rng.randint(10000, 99999)
        title, body = (
            f"주문 {number} {item}",
            f"{item} {rng.randint(1, 300)}박스 주문, 납기 {month}월 {rng.randint(1, 28)}일.",
        )
        values = {"주문번호": str(number)}
    elif kind == "promotion":
        pct = rng.choice([3, 5, 7, 10, 12, 15, 20])
        title, body = (
            f"{month}월 {item} 프로모션",
            f"행사 기간 중 {item} 전 품목 {pct}% 할인, 최소 주문 {rng.randint(5, 50)}박스.",
        )
        values = {"할인율": f"{pct}%"}
    elif kind == "settlement":
        amount = rng.randint(100, 90000) * 1000
        title, body = f"{month}월 정산 내역", f"{item} 외 매입 정산액 {amount:,}원, 지급일 {month}월 말."
        values = {"정산액": f"{amount:,}원"}
    elif kind == "notice":
        title, body = f"{item} 배송 공지", f"{month}월 {item} 물류센터 입고 일정이 변경되었습니다."
        values = {}
    else:
        title, body = f"{item} 관련 메모", f"{item} 샘플 요청 건, 담당자 확인 후 회신 예정."
        values = {}
    return {"kind": kind, "title": title, "body": body, "values": values}


def records_bulk_load(rng: random.Random, brands: list, *, vendors: int, records: int, sigma: float) -> dict:
    """Bench vendors (codes from 10000) with log-normally sized records and up to 10 products each, bulk-inserted
    with the search text `vendors.records` writes; returns {vendor: its product terms}. Shared with
    bench_evidence.py."""
    from vendors.models import Product, Vendor, VendorRecord
    from vendors.records import product_search_refresh, record_search_refresh

    created = Vendor.objects.bulk_create(
        [Vendor(code=str(10000 + number), name=f"벤치{number:04d}상사") for number in range(vendors)], batch_size=2000
    )
    terms_by_vendor, rows, products = {}, [], []
    for vendor, size in zip(created, _vendor_sizes(rng, records, vendors, sigma), strict=True):
        terms = rng.sample(ITEMS, k=min(len(ITEMS), max(3, size // 10)))
        terms_by_vendor[vendor] = terms
        for _ in range(size):
            row = _record_row(rng, rng.choice(KINDS), rng.choice(terms))
            record = VendorRecord(vendor=vendor, source="bench", **row)
            record_search_refresh(record)
            rows.append(record)
        for number, term in enumerate(terms[:10]):
            brand = rng.choice(brands)
            product = Product(
                vendor=vendor,
                brand=brand,
                name=f"{rng.choice(MODIFIERS)} {term}",
                sku=f"{vendor.code}-{number:03d}",
                unit_price=rng.randint(10, 900) * 100,
            )
            product_search_refresh(product, brand)
            products.append(product)
    VendorRecord.objects.bulk_create(rows, batch_size=5000)
    Product.objects.bulk_create(products, batch_size=5000)
    return terms_by_vendor


def _load(args, rng: random.Random) -> dict[int, list[str]]:
    """Bulk-load the data set; returns each vendor's product terms (what questions will ask about)."""
    from vendors.models import Brand

    brands = Brand.objects.bulk_create([Brand(name=name) for name in BRANDS])
    loaded = records_bulk_load(rng, brands, vendors=args.vendors, records=args.records, sigma=args.sigma)
    terms_by_vendor = {vendor.pk: terms for vendor, terms in loaded.items()}
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    return terms_by_vendor


def _ilike_baseline(vendor_id: int, question: str, limit: int) -> list:
    from django.db.models import Case, F, IntegerField, Q, Value, When

    from vendors.models import VendorRecord

    tokens = [t.strip("?!.,") for t in question.split() if len(t.strip("?!.,")) >= 2]
    matches, hits = Q(), Value(0)
    for token in tokens:
        token_match = Q(title__icontains=token) | Q(body__icontains=token)
        matches |= token_match
        hits = hits + Case(When(token_match, then=Value(1)), default=Value(0), output_field=IntegerField())
    return list(
        VendorRecord.objects.filter(vendor_id=vendor_id)
        .filter(matches)
        .annotate(hits=hits)
        .order_by(F("hits").desc(), F("pk").desc())[:limit]
    )


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    cut = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50": statistics.median(ordered), "p95": cut[94], "p99": cut[98]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--vendors", type=int, default=2_000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--sigma", type=float, default=1.0, help="spread of the log-normal vendor sizes")
    args = parser.parse_args()

    env = {**os.environ, "DATABASE_URL": DATABASE_URL, "DJANGO_SETTINGS_MODULE": "config.settings.local"}
    env.pop("REDIS_URL", None)
    env["DJANGO_DEBUG"] = "false"
    database_recreate(DB_NAME)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DJANGO_DEBUG")})
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from agent.knowledge.records import vendor_records_search
    from vendors.models import Vendor, VendorRecord

    rng = random.Random(SEED)
    started = time.perf_counter()
    terms_by_vendor = _load(args, rng)
    load_seconds = time.perf_counter() - started
    sizes = {vendor_id: 0 for vendor_id in terms_by_vendor}
    for vendor_id in VendorRecord.objects.values_list("vendor_id", flat=True).iterator(chunk_size=10000):
        sizes[vendor_id] += 1
    largest = sorted(sizes, key=sizes.get, reverse=True)[:20]
    vendors = {v.pk: v for v in Vendor.objects.all()}

    queries = []
    for number in range(args.queries):
        vendor_id = rng.choice(largest) if number % 2 else rng.choice(list(terms_by_vendor))
        term = rng.choice(terms_by_vendor[vendor_id])
        queries.append((vendor_id, term, f"{term}{rng.choice(PARTICLES)} {rng.choice(ASKS)}"))

    for vendor_id, _, question in queries[:20]:  # warm caches and the connection
        vendor_records_search(vendor=vendors[vendor_id], query=question, limit=LIMIT)
        _ilike_baseline(vendor_id, question, LIMIT)

    results = {}
    for label, run in [
        ("search", lambda v, q: [i.text for i in vendor_records_search(vendor=vendors[v], query=q, limit=LIMIT)]),
        ("baseline", lambda v, q: [f"{r.title} {r.body}" for r in _ilike_baseline(v, q, LIMIT)]),
    ]:
        timings, hits, heavy = [], 0, []
        for number, (vendor_id, term, question) in enumerate(queries):
            t0 = time.perf_counter()
            texts = run(vendor_id, question)
            elapsed = (time.perf_counter() - t0) * 1000
            timings.append(elapsed)
            if number % 2:
                heavy.append(elapsed)
            hits += any(term in text for text in texts)
        results[label] = {**_percentiles(timings), "heavy_p95": _percentiles(heavy)["p95"], "hit": hits / len(queries)}

    search, baseline = results["search"], results["baseline"]
    print("\n## Vendor records search\n")
    print(
        f"Command: `.venv/bin/python bench/bench_records.py --records {args.records} --vendors {args.vendors} "
        f"--queries {args.queries} --sigma {args.sigma}`\n"
    )
    products = sum(min(10, len(terms)) for terms in terms_by_vendor.values())
    median_size = statistics.median(sizes.values())
    print(
        f"PostgreSQL 15, {args.records:,} records + {products:,} products across {args.vendors:,} vendors "
        f"(log-normal sizes, sigma {args.sigma}: median {median_size:.0f}, largest {max(sizes.values()):,} records); "
        f"bulk load + VACUUM ANALYZE {load_seconds:.1f} s. "
        f"{args.queries} Korean questions with particles, half to the 20 largest vendors; limit {LIMIT}.\n"
    )
    print("| | p50 ms | p95 ms | p99 ms | p95 ms, 20 largest vendors | hit@5 |")
    print("|---|---|---|---|---|---|")
    for label, name in [("search", "`vendor_records_search` (records + products)"), ("baseline", "ILIKE baseline")]:
        row = results[label]
        print(
            f"| {name} | {row['p50']:.2f} | {row['p95']:.2f} | {row['p99']:.2f} | {row['heavy_p95']:.2f} | "
            f"{row['hit']:.1%} |"
        )
    p50_ratio, p95_ratio = search["p50"] / baseline["p50"], search["p95"] / baseline["p95"]
    print(
        f"\nRatio search / baseline: p50 ×{p50_ratio:.2f}, p95 ×{p95_ratio:.2f}; "
        f"hit@5 {search['hit']:.1%} vs {baseline['hit']:.1%}. Target p95 ≤ 30 ms: "
        f"{'met' if search['p95'] <= 30 else 'NOT met'}."
    )


if __name__ == "__main__":
    main()
