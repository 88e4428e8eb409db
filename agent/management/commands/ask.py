"""Run the whole answering pipeline for one question, synchronously, as a dry run: nothing is stored or sent.

Irreversible tools are offered as in a real run; the action requests they would record and the `[시스템 확인]`
line a real run would append are printed, and nothing is recorded."""

import argparse
import datetime
import json

from django.core.management.base import CommandError

from agent.actions import confirmation_line_preview
from agent.llm.base import LlmError, provider_get
from agent.pipeline import QuestionContext, answer_compose
from config.commands import ProjectCommand
from conversations.models import Room
from vendors.selectors import room_name_resolve, vendor_get_by_code


class Command(ProjectCommand):
    help = "지정한 방에서 에이전트가 할 답을 만들어 보여 줍니다 (시험 실행: 저장·발송하지 않음)."

    def add_arguments(self, parser):
        parser.add_argument("question", help="질문")
        parser.add_argument("--room", required=True, help='보이는 그대로의 방 이름, 예: "(1001) 대한물산"')
        parser.add_argument("--internal", action="store_true", help="내부 방(직원 전용)으로 취급")
        parser.add_argument("--json", action="store_true", help="JSON 객체 하나로 출력")
        parser.add_argument(
            "--history",
            action="append",
            default=[],
            metavar="MESSAGE",
            help="이 질문 앞의 대화 한 줄 (여러 번, 오래된 것부터). 후속 질문을 시험할 때.",
        )
        parser.add_argument(
            "--history-role",
            action="append",
            default=[],
            choices=["user", "assistant"],
            help="같은 순서의 --history가 누구의 말인지 (기본 user: 거래처; assistant: 봇).",
        )
        parser.add_argument("--date", type=_date, help="질문한 날짜 YYYY-MM-DD (기본 오늘): 그날 유효한 근거만 씁니다.")

    def handle(self, *args, **options):
        question, room = options["question"], options["room"]
        if not question.strip():
            raise CommandError("The question is empty.")
        if len(options["history_role"]) > len(options["history"]):
            raise CommandError("--history-role is given more often than --history.")
        resolution = room_name_resolve(room)
        if resolution.status != Room.ResolutionStatus.MATCHED:
            result = {
                "status": "blocked",
                "answer": "",
                "reason": f"room_{resolution.status}:{resolution.reason}",
                "rounds": [],
                "evidence": [],
                "tool_calls": [],
                "action_requests": [],
                "system_line": "",
            }
        else:
            vendor = vendor_get_by_code(resolution.vendor_code)
            context = QuestionContext(
                question_id=None,
                question_text=question,
                vendor=vendor,
                room=None,
                room_kind=Room.Kind.INTERNAL if options["internal"] else Room.Kind.EXTERNAL,
                history=history_items(options["history"], options["history_role"]),
                asked_on=options["date"],
            )
            try:
                trace = answer_compose(context, provider=provider_get())
            except LlmError as exc:
                raise CommandError(f"The LLM provider failed: {exc}") from exc
            result = _result(trace)
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False, default=str))
            return
        self.stdout.write(f"[{result['status']}] {result['answer'] or result.get('reason', '')}")
        for round_ in result["rounds"]:
            kinds = ", ".join(v["kind"] for v in round_["violations"]) or "위반 없음"
            self.stdout.write(f"  round {round_['number']}: {kinds}")
        for request in result["action_requests"]:
            self.stdout.write(
                f"  동작 요청(기록하지 않음): {request['tool']} {json.dumps(request['arguments'], ensure_ascii=False)}"
                f" · {request['label']} · 키 {request['idempotency_key']}"
            )
        if result["system_line"]:
            self.stdout.write(f"  붙일 줄: {result['system_line']}")


def _date(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from exc


def history_items(texts: list[str], roles: list[str]) -> list[dict]:
    """Earlier messages as the pipeline takes them, oldest first; a message without a role is the vendor's."""
    return [
        {"role": roles[index] if index < len(roles) else "user", "text": text, "sent_at": None}
        for index, text in enumerate(texts)
        if text.strip()
    ]


def _result(trace) -> dict:
    data = trace.as_dict()
    return {
        "status": trace.outcome,
        "answer": trace.final_text,
        "reason": trace.outcome_reason,
        "search_query": trace.search_query,
        "rounds": [
            {"number": r["number"], "draft": r["draft"], "violations": r["violations"], "removed": r["removed"]}
            for r in data["rounds"]
        ],
        "evidence": data["evidence"],
        "tool_calls": data["tool_calls"],
        # What a real run would record and append; a dry run records nothing and sends nothing.
        "action_requests": data["action_requests"],
        "system_line": system_line_preview(trace),
    }


def system_line_preview(trace) -> str:
    """The `[시스템 확인]` line a real run would append: only a verified answer runs its actions."""
    requests = trace.action_requests if trace.outcome == "answered" else []
    if trace.outcome == "held":
        return ""
    return confirmation_line_preview(requests, asked=trace.action_asked)
