"""Masking throughput with 10,000 vendor names: the Aho-Corasick masker vs a naive loop over the names.

    .venv/bin/python bench/bench_masking.py [--vendors 10000] [--items 2000]

No database: the masker is built from 10,000 generated vendor names plus one alias for every fifth vendor
(the process cache in agent.knowledge.masking builds the same object once per names revision). Evidence items
are ~600-character Korean passages, each naming a few vendors (inside compound words such as `…상사에서`), one of
them the counterpart. Measured in the same run:
(a) `VendorMasker.mask_item` — one automaton pass per text, longest match first, counterpart kept;
(b) a baseline: for every name variant, longest first, `in` + `str.replace` on the folded text (what a loop over
    the vendor list does; it does not even keep the counterpart's longer names or the original case).
Prints automaton build time, chars/s, items/s and p50/p95 per item, and a markdown block for docs/benchmarks.md.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.knowledge.masking import MASK, VendorMasker
from agent.knowledge.types import EvidenceItem
from agent.verification.other_vendors import name_forms
from vendors.name_folding import fold_name

SEED = 7
SYLLABLES = "가나다라마바사아자차카타파하강남동서북산천해솔빛한대성진원미래새온누리람봄참바른푸른"
SUFFIXES = ["상사", "물산", "유통", "식품", "상회", "무역", "푸드", "산업"]
FILLER = [
    "이번 분기 반품 기준은 출고일로부터 7일 이내이며 포장 훼손 시 반품이 불가합니다.",
    "정산은 월말 마감 후 익월 10일에 지급되며 세금계산서는 마감일 기준으로 발행합니다.",
    "물류센터 입고 예약은 최소 2일 전까지 등록해야 하고 팔레트 규격은 1100x1100입니다.",
    "프로모션 기간 중 할인율은 품목별로 다르며 최소 주문 수량을 충족해야 적용됩니다.",
    "배송 지연이 발생하면 담당자에게 즉시 알리고 대체 일정을 협의합니다.",
]
PARTICLES = ["에서", "측", "의", "와", "과", "는", "가", "에게", " 담당자", "님"]


def _names(rng: random.Random, count: int) -> list[str]:
    names: set[str] = set()
    while len(names) < count:
        names.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) + rng.choice(SUFFIXES))
    return sorted(names)


def _items(rng: random.Random, names: list[str], count: int) -> list[EvidenceItem]:
    items = []
    for number in range(count):
        sentences = []
        while sum(len(s) for s in sentences) < 600:
            sentence = rng.choice(FILLER)
            if rng.random() < 0.35:
                sentence = f"{rng.choice(names)}{rng.choice(PARTICLES)} {sentence}"
            sentences.append(sentence)
        items.append(
            EvidenceItem(source_kind="hub", reference=f"hub:bench:{number}", text=" ".join(sentences), score=1)
        )
    return items


def _naive_mask(text: str, variants_longest_first: list[tuple[str, int]], counterpart_id: int) -> tuple[str, int]:
    folded, count = fold_name(text), 0
    for variant, vendor_id in variants_longest_first:
        if vendor_id != counterpart_id and variant in folded:
            count += folded.count(variant)
            folded = folded.replace(variant, MASK)
    return folded, count


def _per_item_ms(run, items) -> list[float]:
    timings = []
    for item in items:
        started = time.perf_counter()
        run(item)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vendors", type=int, default=10_000)
    parser.add_argument("--items", type=int, default=2_000)
    parser.add_argument("--baseline-items", type=int, default=100)
    args = parser.parse_args()
    rng = random.Random(SEED)
    names = _names(rng, args.vendors)
    entries = [(vendor_id, name) for vendor_id, name in enumerate(names)]
    entries += [(vendor_id, name[:-2] + "(주)") for vendor_id, name in enumerate(names) if vendor_id % 5 == 0]
    items = _items(rng, names, args.items)
    counterpart = SimpleNamespace(pk=0)

    started = time.perf_counter()
    masker = VendorMasker(entries)
    build_ms = (time.perf_counter() - started) * 1000

    variants = sorted(
        {(variant, vendor_id) for vendor_id, name in entries for variant in name_forms(name)},
        key=lambda pair: -len(pair[0]),
    )
    masked_total = 0

    def run_masker(item):
        nonlocal masked_total
        masked_total += masker.mask_item(item, counterpart=counterpart).mask_count

    for item in items[:100]:
        run_masker(item)
    masked_total = 0
    masker_ms = _per_item_ms(run_masker, items)
    baseline_ms = _per_item_ms(lambda item: _naive_mask(item.text, variants, 0), items[: args.baseline_items])

    chars = sum(len(item.text) for item in items)
    baseline_chars = sum(len(item.text) for item in items[: args.baseline_items])
    masker_seconds, baseline_seconds = sum(masker_ms) / 1000, sum(baseline_ms) / 1000
    rows = [
        ("`VendorMasker.mask_item` (Aho-Corasick)", chars / masker_seconds, len(items) / masker_seconds, masker_ms),
        (
            "naive loop over name variants",
            baseline_chars / baseline_seconds,
            args.baseline_items / baseline_seconds,
            baseline_ms,
        ),
    ]
    print("\n## Masking\n")
    print(
        f"Command: `.venv/bin/python bench/bench_masking.py --vendors {args.vendors} --items {args.items} "
        f"--baseline-items {args.baseline_items}`\n"
    )
    print(
        f"{args.vendors:,} vendor names + {len(entries) - args.vendors:,} aliases → {masker.pattern_count:,} patterns; "
        f"automaton build {build_ms:.0f} ms (once per names revision). {len(items):,} items of ~600 characters, "
        f"{masked_total:,} names masked in total. One core.\n"
    )
    print("| | chars/s | items/s | p50 ms/item | p95 ms/item |")
    print("|---|---|---|---|---|")
    for label, chars_per_s, items_per_s, timings in rows:
        p95 = statistics.quantiles(timings, n=100, method="inclusive")[94]
        print(f"| {label} | {chars_per_s:,.0f} | {items_per_s:,.0f} | {statistics.median(timings):.3f} | {p95:.3f} |")
    print(f"\nSpeed-up over the naive loop: ×{rows[0][2] / rows[1][2]:,.0f} (items/s).")


if __name__ == "__main__":
    main()
