"""The base of the commands that only read text and print what the verifier makes of it (`parse_amounts`,
`parse_values`, `check_draft`): no database and no other app, input from standard input (or an argument), output
as lines or, with `--json`, as JSON with Korean unescaped."""

import json
import sys

from django.core.management.base import CommandError

from config.commands import ProjectCommand


class TextCommand(ProjectCommand):
    requires_system_checks = []  # pure text processing: no database, no other app
    stealth_options = ("stdin",)  # tests pass a file object in place of standard input
    json_help = "JSON으로 출력"

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help=self.json_help)

    def stdin_read(self, options: dict) -> str:
        return (options.get("stdin") or sys.stdin).read()

    def json_write(self, data, *, indent: int | None = None) -> None:
        self.stdout.write(json.dumps(data, ensure_ascii=False, indent=indent))


class TextFindingsCommand(TextCommand):
    """Everything of one kind found in one text: one JSON object or one tab-separated line a finding."""

    none_found = ""  # the line printed when nothing is found

    def add_arguments(self, parser):
        parser.add_argument("text", nargs="?", help="분석할 글 (생략하면 표준 입력)")
        super().add_arguments(parser)

    def findings(self, text: str) -> list[tuple[dict, str]]:
        """What the text holds, in order: each finding's JSON object and its line."""
        raise NotImplementedError

    def handle(self, *args, text: str | None = None, **options):
        if text is None:
            text = self.stdin_read(options)
        if not text.strip():
            raise CommandError("분석할 글이 비어 있습니다.")
        found = self.findings(text)
        if options["json"]:
            self.json_write([payload for payload, _ in found])
            return
        if not found:
            self.stdout.write(self.none_found)
        for _, line in found:
            self.stdout.write(line)
