"""Fitting the local reranker: labelled files, the logistic fit, the floor bias and the command (real database,
the local USE embedding, a small FAQ)."""

import json
import math

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agent.knowledge.faq_services import faq_entry_create
from agent.knowledge.rerank_fit import (
    FLOOR_MARGIN,
    CandidateRows,
    LabelledSetInvalid,
    fit_logistic,
    floor_bias,
    labelled_questions,
    ranking_figures,
)
from agent.models import FaqEntry

FAQ = [
    ("발주서는 어디에서 확인하나요?", "파트너센터 [발주 관리] > [발주 조회] 메뉴에서 확인하실 수 있습니다.", "HD-0001"),
    ("재고 현황을 볼 수 있나요?", "[센터 재고]에서 확인할 수 있습니다. 재고 데이터는 1시간마다 갱신됩니다.", "HD-0120"),
    ("시식 행사를 하고 싶어요.", "행사 3주 전까지 [행사 관리] > [시식 신청]으로 접수해 주세요.", "HD-0074"),
    ("컨테이너 단위로 입고할 수 있나요?", "도착 3일 전까지 입고 예약과 함께 컨테이너 번호를 알려 주세요.", "HD-0164"),
]


@pytest.fixture
def entries(db, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.QDRANT_URL = ""
    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    with django_capture_on_commit_callbacks(execute=True):
        for question, answer, source_id in FAQ:
            faq_entry_create(question=question, answer=answer, source_id=source_id)
    return list(FaqEntry.objects.order_by("pk"))


def _write(path, rows):
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n", encoding="utf-8")
    return path


def test_both_file_shapes_are_read_and_other_topics_are_left_out(entries, tmp_path):
    """A quality set's FAQ line names its entry by source id, a retrieval set's line by its question ("" = none);
    a records line and an answer joined from two sources are not labels of one entry."""
    quality = _write(
        tmp_path / "quality.jsonl",
        [
            {"topic": "faq", "question": "재고 숫자 갱신 간격?", "source": "faq:HD-0120"},
            {"topic": "records", "question": "납품 단가?", "source": "records:CT-1001-2026"},
            {"topic": "faq", "question": "둘 다", "source": "faq:HD-0001 + faq:HD-0074"},
        ],
    )
    retrieval = _write(
        tmp_path / "eval.jsonl",
        [
            {"query": "발주서 어디서 봐요", "expected": "발주서는 어디에서 확인하나요?"},
            {"query": "점심 메뉴", "expected": ""},
        ],
    )
    by_question = {entry.question: entry.pk for entry in entries}

    assert [(q.query, q.expected) for q in labelled_questions(quality, entries)] == [
        ("재고 숫자 갱신 간격?", by_question["재고 현황을 볼 수 있나요?"])
    ]
    assert [(q.query, q.expected) for q in labelled_questions(retrieval, entries)] == [
        ("발주서 어디서 봐요", by_question["발주서는 어디에서 확인하나요?"]),
        ("점심 메뉴", None),
    ]


def test_a_label_naming_no_entry_is_refused_with_its_line(entries, tmp_path):
    unknown = _write(tmp_path / "bad.jsonl", [{"topic": "faq", "question": "?", "source": "faq:HD-9999"}])
    with pytest.raises(LabelledSetInvalid, match=r"bad\.jsonl line 1: no FAQ entry HD-9999"):
        labelled_questions(unknown, entries)


def test_the_fit_learns_which_feature_marks_the_expected_entry():
    """Feature 0 separates the expected rows, feature 1 is noise: the fitted weight of 0 dominates and every
    expected row scores above every other row."""
    rng = np.random.default_rng(7)
    labels = np.array([1.0] * 40 + [0.0] * 400)
    features = np.column_stack([labels * 0.6 + rng.uniform(0, 0.3, len(labels)), rng.uniform(0, 1, len(labels))])

    weights, bias = fit_logistic(features, labels, iterations=4000)

    scores = features @ weights + bias
    assert weights[0] > 5 * abs(weights[1])
    assert scores[labels == 1].min() > scores[labels == 0].max()


def test_the_floor_bias_puts_the_best_unrelated_candidate_just_under_the_floor():
    weights = np.array([2.0, 1.0])
    unrelated = CandidateRows(np.array([[0.5, 0.5], [0.9, 0.2]]), np.array([1, 2]), None)
    labelled = CandidateRows(np.array([[3.0, 1.0], [0.1, 0.1]]), np.array([1, 2]), 1)

    bias = floor_bias([unrelated, labelled], weights, floor=0.2)

    best_unrelated = 1.0 / (1.0 + math.exp(-(2.0 + bias)))  # 0.9·2 + 0.2·1
    assert best_unrelated < 0.2
    assert math.log(best_unrelated / (1 - best_unrelated)) == pytest.approx(math.log(0.25) - FLOOR_MARGIN)
    figures = ranking_figures([unrelated, labelled], weights, bias, floor=0.2)
    assert figures == {"labelled": 1, "hit_at_1": 1, "hit_at_5": 1, "unrelated": 1, "unrelated_answered": 0}


def test_the_command_fits_on_the_calibration_files_and_reports_the_held_out_ones(entries, tmp_path):
    calibration = _write(
        tmp_path / "calibration.jsonl",
        [
            {"query": "발주 들어온 거 어느 메뉴에서 봐요?", "expected": "발주서는 어디에서 확인하나요?"},
            {"query": "재고 숫자는 얼마마다 바뀌어요?", "expected": "재고 현황을 볼 수 있나요?"},
            {"query": "시식하려면 언제까지 신청해요?", "expected": "시식 행사를 하고 싶어요."},
            {"query": "오늘 날씨 어때요?", "expected": ""},
        ],
    )
    held_out = _write(
        tmp_path / "held_out.jsonl",
        [{"topic": "faq", "question": "컨테이너째로 넣으려면 며칠 전에 예약해요?", "source": "faq:HD-0164"}],
    )
    out = tmp_path / "out.json"
    with out.open("w") as stream:
        call_command("fit_faq_reranker", "--calibrate", calibration, "--held-out", held_out, "--json", stdout=stream)
    result = json.loads(out.read_text())

    assert len(result["weights"]) == 4 and result["floor"] == 0.2
    assert result["calibration"]["labelled"] == 3 and result["calibration"]["unrelated"] == 1
    assert result["calibration"]["unrelated_answered"] == 0  # the bias is set from it
    assert result["held_out"]["labelled"] == 1 and result["held_out"]["hit_at_5"] == 1
    assert set(result["current"]) == {"calibration", "held_out"}


def test_the_command_refuses_a_file_used_for_both_and_a_missing_file(entries, tmp_path):
    same = _write(tmp_path / "same.jsonl", [{"query": "점심 메뉴", "expected": ""}])
    with pytest.raises(CommandError, match="겹칩니다"):
        call_command("fit_faq_reranker", "--calibrate", same, "--held-out", same)
    only_unrelated = _write(tmp_path / "unrelated.jsonl", [{"query": "오늘 날씨", "expected": ""}])
    with pytest.raises(CommandError, match="no labelled question"):
        call_command("fit_faq_reranker", "--calibrate", only_unrelated, "--held-out", same)
    with pytest.raises(CommandError, match="파일이 없습니다"):
        call_command("fit_faq_reranker", "--calibrate", tmp_path / "none.jsonl", "--held-out", same)
