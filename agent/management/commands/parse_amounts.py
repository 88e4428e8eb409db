"""`python manage.py parse_amounts "<text>" [--json]` — the amounts and percentages the verifier sees."""

import json
import sys

from django.core.management.base import CommandError

from agent.verification import parse_quantities
from agent.verification.numbers import format_quantity
from config.commands import ProjectCommand


class Command(ProjectCommand):
    help = "글에서 금액·비율·퍼센트포인트를 찾아 정규화한 값을 보여 줍니다 (텍스트를 주지 않으면 표준 입력)."
    requires_system_checks = []  # pure text processing: no database, no other app
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("text", nargs="?", help="분석할 글 (생략하면 표준 입력)")
        parser.add_argument("--json", action="store_true", help="JSON 목록으로 출력")

    def handle(self, *args, text: str | None = None, **options):
        if text is None:
            text = (options.get("stdin") or sys.stdin).read()
        if not text.strip():
            raise CommandError("분석할 글이 비어 있습니다.")
        quantities = parse_quantities(text)
        if options["json"]:
            self.stdout.write(json.dumps([quantity.as_dict() for quantity in quantities], ensure_ascii=False))
            return
        if not quantities:
            self.stdout.write("금액·비율 없음")
        for quantity in quantities:
            approx = " (대략)" if quantity.approx else ""
            start, end = quantity.span
            self.stdout.write(f"{quantity.kind}\t{format_quantity(quantity)}{approx}\t[{start}, {end}]\t{quantity.raw}")
