"""`python manage.py check_draft [--json] < case.json` or `--batch cases.jsonl` — verify drafts in code.

A case is `{"draft", "question", "evidence", "known_brands", "counterpart", "counterpart_brands", "other_vendors",
"other_vendor_brands", "confirmed_actions", "internal"}` (all but the draft optional; `internal: true` checks nothing
about other vendors, as in a staff room); the result is `{"violations", "clean_text", "quantities"}` (see
docs/verification.md).
"""

import json

from django.conf import settings
from django.core.management.base import CommandError

from agent.management.text_commands import TextCommand
from agent.verification import OtherVendors, VerificationResult, VerificationSettings, verify_draft

LIST_FIELDS = (
    "evidence",
    "known_brands",
    "counterpart",
    "counterpart_brands",
    "other_vendors",
    "other_vendor_brands",
    "confirmed_actions",
)
TEXT_FIELDS = ("question",)  # optional; dates, times, quantities and contacts it states count as support


class Command(TextCommand):
    help = (
        "초안 하나(표준 입력의 JSON) 또는 여러 개(--batch, 한 줄에 하나)를 근거와 대조해 "
        "위반과 보낼 수 있는 글을 보여 줍니다."
    )

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--batch", metavar="FILE", help="JSON Lines 파일: 한 줄에 사례 하나, 결과도 한 줄에 하나")

    def handle(self, *args, **options):
        verification_settings = VerificationSettings(
            min_fuzzy_brand_length=getattr(settings, "VERIFICATION_MIN_FUZZY_BRAND_LENGTH", 3)
        )
        if options["batch"]:
            cases = self._read_batch(options["batch"])
            for case in cases:  # all lines are valid before anything is printed
                result = _verify(case, verification_settings)
                self.json_write(result.as_dict())
            return
        case = parse_case(self.stdin_read(options), where="표준 입력")
        result = _verify(case, verification_settings)
        if options["json"]:
            self.json_write(result.as_dict(), indent=2)
        else:
            self._write_report(result)

    def _read_batch(self, path: str) -> list[dict]:
        try:
            with open(path, encoding="utf-8") as batch:
                lines = batch.read().splitlines()
        except OSError as error:
            raise CommandError(f"배치 파일을 읽을 수 없습니다: {path} ({error.strerror})") from error
        except UnicodeDecodeError as error:
            raise CommandError(f"배치 파일이 UTF-8이 아닙니다: {path}") from error
        return [
            parse_case(line, where=f"{path} {number}번째 줄") for number, line in enumerate(lines, 1) if line.strip()
        ]

    def _write_report(self, result: VerificationResult) -> None:
        if result.ok:
            self.stdout.write("위반 없음")
        for violation in result.violations:
            start, end = violation.span
            suggestion = (
                f" (제안: {violation.suggestion})"
                if violation.suggestion and violation.suggestion not in violation.reason
                else ""
            )
            self.stdout.write(f"[{violation.kind}] [{start}, {end}] {violation.reason}{suggestion}")
        self.stdout.write("")
        self.stdout.write("보낼 수 있는 글:" if result.clean_text else "보낼 수 있는 글 없음 (보류)")
        if result.clean_text:
            self.stdout.write(result.clean_text)


def parse_case(raw: str, *, where: str) -> dict:
    """A case from its JSON text, checked field by field; a CommandError names what is wrong."""
    try:
        case = json.loads(raw)
    except ValueError as error:
        raise CommandError(f"{where}: JSON이 아닙니다 ({error})") from error
    if not isinstance(case, dict):
        raise CommandError(f"{where}: 사례는 JSON 객체여야 합니다.")
    unknown = sorted(set(case) - {"draft", "internal", *LIST_FIELDS, *TEXT_FIELDS})
    if unknown:
        raise CommandError(f"{where}: 알 수 없는 항목: {', '.join(unknown)}")
    if not isinstance(case.get("draft"), str):
        raise CommandError(f'{where}: "draft"(문자열)가 필요합니다.')
    if not isinstance(case.setdefault("internal", False), bool):
        raise CommandError(f'{where}: "internal"는 true 또는 false여야 합니다.')
    for field in TEXT_FIELDS:
        if not isinstance(case.setdefault(field, ""), str):
            raise CommandError(f'{where}: "{field}"는 문자열이어야 합니다.')
    for field in LIST_FIELDS:
        value = case.setdefault(field, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise CommandError(f'{where}: "{field}"는 문자열 목록이어야 합니다.')
    return case


def _verify(case: dict, verification_settings: VerificationSettings) -> VerificationResult:
    return verify_draft(
        case["draft"],
        evidence=case["evidence"],
        known_brands=case["known_brands"],
        counterpart_names=case["counterpart"],
        other_vendor_names=OtherVendors(
            names=tuple(case["other_vendors"]),
            brands=tuple(case["other_vendor_brands"]),
            checked=not case["internal"],
        ),
        confirmed_actions=case["confirmed_actions"],
        settings=verification_settings,
        question=case["question"],
        counterpart_brands=case["counterpart_brands"],
    )
