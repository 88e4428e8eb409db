"""`python manage.py parse_values "<text>" [--json]` — every value the verifier finds in a text: amounts and
percentages (exactly as `parse_amounts` reports them), dates, clock times, quantities and contacts."""

import json
import sys

from django.core.management.base import CommandError

from agent.verification import parse_quantities
from agent.verification.numbers import format_quantity
from agent.verification.values import display, parse_values
from config.commands import ProjectCommand


class Command(ProjectCommand):
    help = (
        "글에서 검증 엔진이 찾는 값을 모두 보여 줍니다: 금액·비율·퍼센트포인트, 날짜, 시각, 수량, 연락처 "
        "(텍스트를 주지 않으면 표준 입력)."
    )
    requires_system_checks = []  # pure text processing: no database, no other app
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("text", nargs="?", help="분석할 글 (생략하면 표준 입력)")
        parser.add_argument("--json", action="store_true", help="JSON 목록으로 출력 (값 하나에 객체 하나, 위치 순)")

    def handle(self, *args, text: str | None = None, **options):
        if text is None:
            text = (options.get("stdin") or sys.stdin).read()
        if not text.strip():
            raise CommandError("분석할 글이 비어 있습니다.")
        found = [(quantity.span, quantity.as_dict(), format_quantity(quantity)) for quantity in parse_quantities(text)]
        found += [(value.span, value.as_dict(), display(value)) for value in parse_values(text)]
        found.sort(key=lambda item: item[0])
        if options["json"]:
            self.stdout.write(json.dumps([payload for _, payload, _ in found], ensure_ascii=False))
            return
        if not found:
            self.stdout.write("값 없음")
        for (start, end), payload, shown in found:
            self.stdout.write(f"{payload['kind']}\t{shown}\t[{start}, {end}]\t{payload['raw']}")
