"""Run a labelled question set through the pipeline (dry runs) and report what must be zero and the rates."""

import contextlib
import json
from pathlib import Path

from django.core.management.base import CommandError

from agent.evaluation import EvaluationFileInvalid, evaluate, evaluation_cases_read, review_cases_jsonl
from agent.llm.base import LlmError, provider_get, provider_override
from config.commands import ProjectCommand


class Command(ProjectCommand):
    help = (
        "JSON Lines 평가 파일({room, question, expect, history?, date?, topic?})로 에이전트를 평가합니다. "
        "안전하지 않거나 틀린 답이 하나라도 나가면 종료 코드 1. "
        "--from-reviews: 직원이 오답으로 표시한 답변을 모두 FILE에 평가 사례로 씁니다 (평가는 하지 않음)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="평가 사례 JSON Lines 파일 (--from-reviews와 함께면 써 낼 파일)")
        parser.add_argument(
            "--from-reviews",
            action="store_true",
            help="오답 표시(사유, 질문, 방, 직원이 적은 바른 답변)를 평가 사례로 FILE에 씁니다 (있던 파일은 덮어씀).",
        )
        parser.add_argument("--json", action="store_true", help="요약과 사례별 결과를 JSON으로 출력")
        parser.add_argument(
            "--fake-openai",
            action="store_true",
            help=(
                "OpenAI 호환 제공자를 이 프로세스 안의 적대적 모델 서버(agent/llm/hostile_server.py)의 협조 모드에 "
                "HTTP로 연결해 실행합니다: 근거를 그대로 옮기는 모델이 같은 근거를 받는지(근거 적중률)를 봅니다."
            ),
        )

    def handle(self, *args, **options):
        if options["from_reviews"]:
            self._export(Path(options["file"]))
            return
        try:
            cases = evaluation_cases_read(options["file"])
        except (OSError, EvaluationFileInvalid) as exc:
            raise CommandError(str(exc)) from exc
        with contextlib.ExitStack() as stack:
            provider = provider_get()
            if options["fake_openai"]:
                from agent.llm.hostile_server import COOPERATIVE, HostileCase, HostileOpenAIServer
                from agent.llm.openai_compat import OpenAICompatibleProvider

                server = stack.enter_context(HostileOpenAIServer())
                server.play(HostileCase(COOPERATIVE))
                provider = OpenAICompatibleProvider(base_url=server.base_url, model="fake-model", api_key="")
                stack.enter_context(provider_override(provider))
            try:
                report = evaluate(cases, provider=provider)
            except LlmError as exc:
                raise CommandError(f"The LLM provider failed: {exc}") from exc
        summary = report.as_dict()
        if options["json"]:
            cases_out = [case.__dict__ for case in report.cases]
            self.stdout.write(json.dumps({"summary": summary, "cases": cases_out}, ensure_ascii=False))
        else:
            for case in report.cases:
                marks = "; ".join(
                    case.failed_expectations
                    + case.defects
                    + [f"handoff: {sentence}" for sentence in case.handoffs]
                    + [v["kind"] for v in case.delivered_violations]
                )
                verdict = f" {case.verdict}" if case.verdict else ""
                self.stdout.write(f"{case.line:>3} [{case.status}{verdict}] {case.question[:50]} {marks}")
            topics = summary.pop("topics")
            for key, value in summary.items():
                self.stdout.write(f"{key}: {value}")
            self.stdout.write("topic | right | refused | wrong | evidence hit")
            for topic, row in topics.items():
                self.stdout.write(
                    f"{topic} | {row['right']} | {row['refused']} | {row['wrong']} | {row['evidence_hit']}"
                )
        if not report.ok:
            raise CommandError(
                "Unsafe or wrong content would have been delivered (see delivered_violations, claims, leaks, "
                "delivered_handoffs, wrong_answers, answer_defects)."
            )

    def _export(self, path: Path) -> None:
        text = review_cases_jsonl()
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"오답 {text.count(chr(10))}건을 평가 사례로 썼습니다: {path}")
