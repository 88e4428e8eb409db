"""What the brand checks beyond the evidence cost: mode (a) of `bench_verification.py` (a new draft against evidence
never seen before) with them, and with the earlier rule swapped in — misspellings of evidence brands only, no
`brand_unknown` — call by call interleaved in one process, on twin cases of the same shape (which twin runs first
alternates), so both share the machine's load.

Run: .venv/bin/python bench/bench_brand_checks.py
"""

import gc
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_verification import MEASURED_RUNS, WARMUP_RUNS, Timings, build_cases, compile_number_patterns

from agent.verification import NameIndex, brands, engine, verify_draft
from agent.verification.korean import strip_particle_variants


def evidence_brands_only(folded, candidates, known_brands, evidence, brand_position, *, anywhere, last_resort):
    """The earlier rule: the first candidate brand the evidence contains, unless the word is an evidence word."""
    for length, pattern in candidates:
        brand = known_brands.name_of(pattern)
        if not known_brands.occurs_in(brand, evidence):
            continue
        if any(evidence.has_word(variant) for variant in strip_particle_variants(folded)):
            return None
        return length, brand
    return None


def main() -> None:
    brand_names, cases = build_cases(2 * (WARMUP_RUNS + MEASURED_RUNS))
    brand_index = NameIndex.build(brand_names)
    vendor_index = NameIndex.build(cases[0]["other_vendors"] + cases[0]["counterpart"])
    compile_number_patterns()
    gc.freeze()
    with_checks = brands._misspelt_brand, engine.find_unknown_brands
    earlier_rule = evidence_brands_only, lambda *arguments, **keywords: []

    def timed(case) -> tuple[float, float]:
        wall_started, cpu_started = time.perf_counter(), time.process_time()
        verify_draft(
            case["draft"],
            evidence=case["evidence"],
            known_brands=brand_index,
            counterpart_names=case["counterpart"],
            other_vendor_names=vendor_index,
            confirmed_actions=case["confirmed_actions"],
        )
        return (time.perf_counter() - wall_started) * 1000, (time.process_time() - cpu_started) * 1000

    after, before = Timings(), Timings()
    for number in range(len(cases) // 2):
        first, second = cases[2 * number : 2 * number + 2]
        if number % 2:
            first, second = second, first
        measured_after = timed(first)
        brands._misspelt_brand, engine.find_unknown_brands = earlier_rule
        measured_before = timed(second)
        brands._misspelt_brand, engine.find_unknown_brands = with_checks
        if number >= WARMUP_RUNS:
            after.add(measured_after)
            before.add(measured_before)

    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print("| mode | calls | wall p50 ms | wall p95 ms | wall p99 ms | CPU p50 ms | CPU p95 ms | drafts/s (one core) |")
    print("|---|---|---|---|---|---|---|---|")
    print(before.row("(a) before: misspellings of evidence brands only, no `brand_unknown`"))
    print(after.row("(a) after: brands beyond the evidence and `brand_unknown`"))
    print(f"\nLoad average at the end: {load}.")


if __name__ == "__main__":
    main()
