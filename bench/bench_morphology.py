"""What the morphological analyser (kiwipiepy) costs the process that answers with the local answerer.

    .venv/bin/python bench/bench_morphology.py [--repeat 20]

In a fresh child process: VmRSS before and after the analyser is loaded (the first question it reads), the load
time, and then the time to read one question's non-noun words (`agent.llm.morphology.non_nouns`, its cache
bypassed) against the rule-based reading of the same question's content words (`korean_text.content_tokens`,
cache cleared each time) — the baseline in the same run. No database.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "발주 확정은 발주 받고 몇 시간 안에 해야 해요?",
    "납품 차량은 어디에 세우면 돼요?",
    "대금은 매달 며칠에 들어와요?",
    "10월 매입 정산 금액 얼마 나왔어요?",
    "지급받을 통장을 바꾸려면 어떻게 해요?",
    "반품 승인 기한이 며칠이에요?",
    "그럼 점포 재고는요?",
    "단가 변경을 요청하면 언제까지 답을 받아요?",
]


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _child(repeat: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from agent.llm import korean_text, morphology

    before = _rss_mb()
    started = time.perf_counter()
    morphology.non_nouns("모델을 불러옵니다")
    load_seconds = time.perf_counter() - started
    after = _rss_mb()
    analyse, rules = [], []
    for _ in range(repeat):
        for question in QUESTIONS:
            started = time.perf_counter()
            morphology.non_nouns.__wrapped__(question)
            analyse.append((time.perf_counter() - started) * 1000)
            korean_text.strip_particle.cache_clear()
            started = time.perf_counter()
            korean_text.content_tokens(question)
            rules.append((time.perf_counter() - started) * 1000)
    return {
        "rss_before_mb": round(before),
        "rss_after_mb": round(after),
        "load_seconds": round(load_seconds, 2),
        "analyser_p50_ms": round(statistics.median(analyse), 3),
        "rules_p50_ms": round(statistics.median(rules), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.repeat)))
        return
    output = subprocess.run(
        [sys.executable, __file__, "--child", "--repeat", str(args.repeat)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout
    result = json.loads(output)
    print(f"RSS before the analyser: {result['rss_before_mb']} MB, after: {result['rss_after_mb']} MB")
    print(f"load (first question): {result['load_seconds']} s")
    ratio = result["analyser_p50_ms"] / result["rules_p50_ms"] if result["rules_p50_ms"] else float("inf")
    print(
        f"one question: analyser p50 {result['analyser_p50_ms']} ms, rules p50 {result['rules_p50_ms']} ms "
        f"({ratio:.0f}× the rules)"
    )


if __name__ == "__main__":
    main()
