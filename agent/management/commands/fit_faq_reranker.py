"""`python manage.py fit_faq_reranker [--calibrate FILE ...] [--held-out FILE ...]` — fit the local reranker.

Prints the weights and bias to put in `LocalReranker` and the figures they give, on the calibration files and on
held-out files the fit never reads. Run it over the demo FAQ (`manage.py demo --load-only`).
"""

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from agent.knowledge.rerank import LocalReranker
from agent.knowledge.rerank_fit import (
    LabelledSetInvalid,
    candidate_rows,
    fit_logistic,
    floor_bias,
    labelled_questions,
    ranking_figures,
    training_matrix,
)
from agent.models import FaqEntry
from config.commands import ProjectCommand

ROOT = Path(settings.BASE_DIR)
TEST_DATA = ROOT / "agent" / "tests" / "data"
DEMO_DATA = ROOT / "demo" / "data"
# The calibration quality sets and the FAQ retrieval set the first weights were fitted on; the held-out files are
# sets written after them, apart from them.
DEFAULT_CALIBRATION = [
    TEST_DATA / "faq_eval.jsonl",
    DEMO_DATA / "quality.jsonl",
    DEMO_DATA / "quality_heldout.jsonl",
    *(DEMO_DATA / f"quality_heldout{number}.jsonl" for number in range(2, 19)),
]
DEFAULT_HELD_OUT = [
    TEST_DATA / "faq_heldout.jsonl",
    DEMO_DATA / "quality_heldout19.jsonl",
    DEMO_DATA / "quality_heldout20.jsonl",
]


class Command(ProjectCommand):
    help = (
        "FAQ 로컬 재순위 모델의 가중치를 라벨된 질문으로 다시 맞춥니다. 보정 파일로 맞추고, 맞출 때 읽지 않은 "
        "평가 파일로 성능을 보고합니다(결과 가중치는 agent/knowledge/rerank.py 의 LocalReranker 에 넣습니다)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--calibrate", nargs="+", type=Path, help="보정(학습) 파일들 (기본: 보정용 품질 세트)")
        parser.add_argument("--held-out", nargs="+", type=Path, help="평가 전용 파일들 (기본: 보류 세트)")
        parser.add_argument("--json", action="store_true", help="JSON으로 출력")

    def handle(self, *args, **options):
        calibration_files = options["calibrate"] or DEFAULT_CALIBRATION
        held_out_files = options["held_out"] or DEFAULT_HELD_OUT
        overlap = {path.resolve() for path in calibration_files} & {path.resolve() for path in held_out_files}
        if overlap:
            raise CommandError(f"보정 파일과 평가 파일이 겹칩니다: {', '.join(sorted(p.name for p in overlap))}")
        entries = list(FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE).order_by("pk"))
        if not entries:
            raise CommandError("활성 FAQ 항목이 없습니다. 먼저 FAQ를 적재하세요(manage.py demo --load-only).")
        try:
            calibration = [q for path in self._existing(calibration_files) for q in labelled_questions(path, entries)]
            held_out = [q for path in self._existing(held_out_files) for q in labelled_questions(path, entries)]
        except LabelledSetInvalid as error:
            raise CommandError(str(error)) from error

        floor = settings.FAQ_RERANK_FLOOR_LOCAL
        calibration_rows = candidate_rows(calibration, entries)
        held_out_rows = candidate_rows(held_out, entries)
        try:
            features, labels = training_matrix(calibration_rows)
            weights, _ = fit_logistic(features, labels)
            bias = floor_bias(calibration_rows, weights, floor)
        except LabelledSetInvalid as error:
            raise CommandError(str(error)) from error
        result = {
            "weights": [round(float(weight), 3) for weight in weights],
            "bias": round(bias, 3),
            "floor": floor,
            "calibration": ranking_figures(calibration_rows, weights, bias, floor),
            "held_out": ranking_figures(held_out_rows, weights, bias, floor),
            "current": {
                "calibration": ranking_figures(calibration_rows, LocalReranker.WEIGHTS, LocalReranker.BIAS, floor),
                "held_out": ranking_figures(held_out_rows, LocalReranker.WEIGHTS, LocalReranker.BIAS, floor),
            },
        }
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=2))
            return
        self.stdout.write(f"가중치: {result['weights']}  편향: {result['bias']}  (하한 {floor})")
        for label, key in (("보정", "calibration"), ("평가", "held_out")):
            new, current = result[key], result["current"][key]
            self.stdout.write(
                f"{label}: 라벨 질문 {new['labelled']}개 hit@1 {new['hit_at_1']} (현재 {current['hit_at_1']}), "
                f"hit@5 {new['hit_at_5']} (현재 {current['hit_at_5']}); 무관한 질문 {new['unrelated']}개 중 "
                f"FAQ를 받은 질문 {new['unrelated_answered']} (현재 {current['unrelated_answered']})"
            )

    def _existing(self, paths: list[Path]) -> list[Path]:
        missing = [str(path) for path in paths if not path.is_file()]
        if missing:
            raise CommandError(f"파일이 없습니다: {', '.join(missing)}")
        return paths
