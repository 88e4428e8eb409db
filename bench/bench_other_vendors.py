"""What the other-vendor checks of the final text cost: `verify_draft` with them and without them.

    .venv/bin/python bench/bench_other_vendors.py [--vendors 10000] [--brands 5000] [--drafts 300]

No database. 10,000 generated vendor names, 5,000 brands (100 of them carried only by other vendors), drafts of
~500 characters naming other vendors in several spellings (`가온 상사`, zero-width, jamo, one syllable off) and
referring to masked vendors, each against 20 masked evidence passages with clauses about `[다른 벤더]`. Both modes
run interleaved, call by call: (a) `OtherVendors(names, brands)`, the vendor room; (b) `OtherVendors(checked=False)`,
a staff room — the difference is the checks' cost. Prints the shared automaton's build time and p50/p95 per draft.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.verification import OtherVendors, verify_draft
from agent.verification.other_vendors import other_vendor_check_prepare

SEED = 11
SYLLABLES = "가나다라마바사아자차카타파하강남동서북산천해솔빛한대성진원미래새온누리람봄참바른푸른"
SUFFIXES = ["상사", "물산", "유통", "식품", "상회", "무역"]
FILLER = [
    "이번 분기 반품 기준은 출고일로부터 7일 이내이며 포장 훼손 시 반품이 불가합니다.",
    "정산은 월말 마감 후 익월 10일에 지급되며 공급가는 30,000원입니다.",
    "물류센터 입고 예약은 최소 2일 전까지 등록해야 하고 팔레트 규격은 1100x1100입니다.",
    "프로모션 기간 중 할인율은 15%이며 최소 주문 수량을 충족해야 적용됩니다.",
]


def _spellings(name: str, rng: random.Random) -> str:
    return rng.choice([name, " ".join(name), name[:2] + "\u200b" + name[2:], name[:-1] + "샤"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vendors", type=int, default=10_000)
    parser.add_argument("--brands", type=int, default=5_000)
    parser.add_argument("--drafts", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(SEED)
    names: set[str] = set()
    while len(names) < args.vendors:
        names.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))) + rng.choice(SUFFIXES))
    vendors = sorted(names)
    brands_set: set[str] = set()
    while len(brands_set) < args.brands:
        brands_set.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) + "표")
    brands = sorted(brands_set)
    vendor_room = OtherVendors(names=tuple(vendors), brands=tuple(brands[:100]))
    staff_room = OtherVendors(checked=False)

    started = time.perf_counter()
    other_vendor_check_prepare(vendor_room, brands)
    build_ms = (time.perf_counter() - started) * 1000

    cases = []
    for number in range(args.drafts):
        sentences = [rng.choice(FILLER) for _ in range(6)]
        sentences.insert(2, f"{_spellings(rng.choice(vendors), rng)}는 결품률이 높습니다.")
        sentences.insert(4, "해당 협력사는 결품률 4.2%입니다.")
        evidence = [
            f"[다른 벤더]는 결품률 4.2%입니다. {' '.join(rng.choice(FILLER) for _ in range(12))} #{number}-{index}"
            for index in range(20)
        ]
        cases.append((" ".join(sentences), evidence))

    def verify(case, other_vendors):
        draft, evidence = case
        return verify_draft(
            draft,
            evidence=evidence,
            known_brands=brands,
            counterpart_names=["대한물산"],
            other_vendor_names=other_vendors,
            confirmed_actions=[],
        )

    checked, unchecked = [], []
    for case in cases:
        for mode, sink in ((vendor_room, checked), (staff_room, unchecked)):
            started = time.perf_counter()
            verify(case, mode)
            sink.append((time.perf_counter() - started) * 1000)
    flagged = sum(
        1 for case in cases for v in verify(case, vendor_room).violations if str(v.kind).startswith("other_vendor")
    )

    def p95(values):
        return sorted(values)[max(0, int(len(values) * 0.95) - 1)]

    print(f"automaton build (10k names + brands, once per name set): {build_ms:,.0f} ms")
    print(f"other-vendor violations found: {flagged:,} in {len(cases):,} drafts")
    print("| mode | p50 ms/draft | p95 ms/draft |")
    print("|---|---|---|")
    print(f"| vendor room (other-vendor checks on) | {statistics.median(checked):.2f} | {p95(checked):.2f} |")
    print(f"| staff room (checks off) | {statistics.median(unchecked):.2f} | {p95(unchecked):.2f} |")


if __name__ == "__main__":
    main()
