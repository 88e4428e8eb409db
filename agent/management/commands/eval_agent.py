"""Run a labelled question set through the pipeline (dry runs) and report what must be zero and the rates."""

import contextlib
import json

from django.core.management.base import BaseCommand, CommandError

from agent.evaluation import EvaluationFileInvalid, evaluate, evaluation_cases_read
from agent.llm.base import LlmError, provider_get, provider_override


class Command(BaseCommand):
    help = (
        "Evaluate the agent on a JSON Lines file of {room, question, expect, history?, date?, topic?}; exits 1 if "
        "anything unsafe or wrong gets out."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--json", action="store_true", help="Print the summary and each case as JSON.")
        parser.add_argument(
            "--fake-openai",
            action="store_true",
            help=(
                "OpenAI 호환 제공자를 이 프로세스 안의 가짜 서버(agent/llm/fake_server.py)에 연결해 실행합니다: "
                "모델이 같은 근거를 받는지(근거 적중률)를 봅니다."
            ),
        )

    def handle(self, *args, **options):
        try:
            cases = evaluation_cases_read(options["file"])
        except (OSError, EvaluationFileInvalid) as exc:
            raise CommandError(str(exc)) from exc
        with contextlib.ExitStack() as stack:
            provider = provider_get()
            if options["fake_openai"]:
                from agent.llm.fake_server import FakeOpenAIServer
                from agent.llm.openai_compat import OpenAICompatibleProvider

                server = stack.enter_context(FakeOpenAIServer())
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
                    case.failed_expectations + case.defects + [v["kind"] for v in case.delivered_violations]
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
                "wrong_answers, answer_defects)."
            )
