"""Retrieval quality on the demo FAQ with the embedded default (local USE embedding + local reranker)."""

import json
from pathlib import Path

import pytest

from agent.knowledge.faq import faq_search
from agent.knowledge.faq_index import faq_index_reset
from agent.knowledge.faq_services import faq_ingest_jsonl

ROOT = Path(__file__).resolve().parents[2]
EVAL_SET = Path(__file__).parent / "data" / "faq_eval.jsonl"

# Measured with the defaults (docs/knowledge.md): hit@5 60/68 = 0.88, hit@1 56/68, no unrelated question
# answered. The floor leaves eight questions of margin for numeric noise (BLAS, numpy versions) and small FAQ
# edits, yet a pipeline that throws right answers away fails it: the first weights with the dense search of the
# stored questions alone, a dense threshold of 0.50 and a rerank floor of 0.3 measured 50/68 = 0.74.
HIT_AT_5_FLOOR = 0.75
# Unrelated questions (lunch, stocks, weather …) may return at most this many FAQ answers in total.
UNRELATED_ANSWERED_CEILING = 2


@pytest.mark.django_db
def test_hit_at_5_on_labelled_korean_questions(settings, tmp_path, django_capture_on_commit_callbacks, record_property):
    """≥ 50 labelled questions (paraphrases, particles, typos, short keywords) over the 201-entry demo FAQ: the
    expected FAQ is among the top 5 for at least 75 % of them, and unrelated questions come back (almost) empty."""
    settings.QDRANT_URL = ""
    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    faq_index_reset()
    with django_capture_on_commit_callbacks(execute=True):
        faq_ingest_jsonl(ROOT / "demo" / "data" / "faq.jsonl")
    rows = [json.loads(line) for line in EVAL_SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    labelled = [row for row in rows if row["expected"]]
    unrelated = [row for row in rows if not row["expected"]]
    assert len(labelled) >= 50

    hits_at_1 = hits_at_5 = 0
    misses = []
    for row in labelled:
        titles = [item.title for item in faq_search(row["query"])]
        hits_at_1 += titles[:1] == [row["expected"]]
        if row["expected"] in titles[:5]:
            hits_at_5 += 1
        else:
            misses.append(row["query"])
    answered_unrelated = sum(1 for row in unrelated if faq_search(row["query"]))
    faq_index_reset()

    hit_at_5 = hits_at_5 / len(labelled)
    record_property("faq_hit_at_5", round(hit_at_5, 3))
    record_property("faq_hit_at_1", round(hits_at_1 / len(labelled), 3))
    print(f"\nFAQ hit@5 {hits_at_5}/{len(labelled)} = {hit_at_5:.3f}, hit@1 {hits_at_1}/{len(labelled)}, "
          f"unrelated answered {answered_unrelated}/{len(unrelated)}; misses: {misses}")  # fmt: skip
    assert hit_at_5 >= HIT_AT_5_FLOOR, misses
    assert answered_unrelated <= UNRELATED_ANSWERED_CEILING


HELD_OUT_SET = Path(__file__).parent / "data" / "faq_heldout.jsonl"
# Measured on the held-out set (docs/knowledge.md): hit@5 17/24 = 0.71, hit@1 14/24 when it was written; 16/24 and
# 13/24 since the reranker was refitted with the passage search. The floor leaves one question of margin.
HELD_OUT_HIT_AT_5_FLOOR = 0.625
# Near-domain off-topic questions (휴가 신청, 와이파이 비밀번호 …) that still get FAQ evidence: 5 of 8, three of them
# at "high" confidence. The FAQ store does not say no to them; the answer does (no sentence names 휴가: the
# guidance answer, see test_answers_demo). The ceiling keeps it from getting worse.
OFF_TOPIC_ANSWERED_CEILING = 5


@pytest.mark.django_db
def test_held_out_paraphrases_and_near_domain_off_topic_questions(
    settings, tmp_path, django_capture_on_commit_callbacks, record_property
):
    """The reranker's weights were fitted on faq_eval.jsonl; this set was written apart from it (other words for
    the same FAQ questions, and near-domain questions the FAQ does not answer). Reports hit@1 / hit@5 and the
    off-topic false-answer rate."""
    settings.QDRANT_URL = ""
    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    faq_index_reset()
    with django_capture_on_commit_callbacks(execute=True):
        faq_ingest_jsonl(ROOT / "demo" / "data" / "faq.jsonl")
    rows = [json.loads(line) for line in HELD_OUT_SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    labelled = [row for row in rows if row["expected"]]
    off_topic = [row for row in rows if not row["expected"]]

    hits_at_1 = hits_at_5 = 0
    misses, false_answers = [], []
    for row in labelled:
        titles = [item.title for item in faq_search(row["query"])]
        hits_at_1 += titles[:1] == [row["expected"]]
        hits_at_5 += row["expected"] in titles[:5]
        if row["expected"] not in titles[:5]:
            misses.append(row["query"])
    for row in off_topic:
        items = faq_search(row["query"])
        if items:
            false_answers.append((row["query"], items[0].title, items[0].extra["confidence"]))
    faq_index_reset()

    hit_at_5 = hits_at_5 / len(labelled)
    record_property("faq_held_out_hit_at_5", round(hit_at_5, 3))
    record_property("faq_held_out_hit_at_1", round(hits_at_1 / len(labelled), 3))
    record_property("faq_off_topic_answered", len(false_answers))
    print(f"\nheld-out FAQ hit@5 {hits_at_5}/{len(labelled)}, hit@1 {hits_at_1}/{len(labelled)}, "
          f"off-topic answered {len(false_answers)}/{len(off_topic)}: {false_answers}; misses: {misses}")  # fmt: skip
    assert hit_at_5 >= HELD_OUT_HIT_AT_5_FLOOR, misses
    assert len(false_answers) <= OFF_TOPIC_ANSWERED_CEILING, false_answers
