"""Run a labelled question set through the pipeline (dry runs) and report what must be zero and the rates."""

import json

from django.core.management.base import CommandError

from agent.evaluation import EvaluationFileInvalid, evaluate, evaluation_cases_read
from agent.llm.base import LlmError, provider_get
from config.commands import ProjectCommand


class Command(ProjectCommand):
    help = (
        "JSON Lines 평가 파일({room, question, expect})로 에이전트를 평가합니다. "
        "안전하지 않은 답이 하나라도 나가면 종료 코드 1."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="평가 사례 JSON Lines 파일")
        parser.add_argument("--json", action="store_true", help="요약과 사례별 결과를 JSON으로 출력")

    def handle(self, *args, **options):
        try:
            cases = evaluation_cases_read(options["file"])
        except (OSError, EvaluationFileInvalid) as exc:
            raise CommandError(str(exc)) from exc
        try:
            report = evaluate(cases, provider=provider_get())
        except LlmError as exc:
            raise CommandError(f"The LLM provider failed: {exc}") from exc
        summary = report.as_dict()
        if options["json"]:
            cases_out = [case.__dict__ for case in report.cases]
            self.stdout.write(json.dumps({"summary": summary, "cases": cases_out}, ensure_ascii=False))
        else:
            for case in report.cases:
                marks = "; ".join(case.failed_expectations + [v["kind"] for v in case.delivered_violations])
                self.stdout.write(f"{case.line:>3} [{case.status}] {case.question[:50]} {marks}")
            for key, value in summary.items():
                self.stdout.write(f"{key}: {value}")
        if not report.ok:
            raise CommandError("Unsafe content would have been delivered (see delivered_violations, claims, leaks).")
