"""python manage.py ingest_faq FILE — load FAQ entries from JSON Lines (newest version of a question wins)."""

import json
from pathlib import Path

from django.core.management.base import CommandError

from agent.knowledge.faq_services import INGEST_KEYS, FaqError, faq_ingest_jsonl, faq_jsonl_line_count
from config.commands import ProjectCommand
from config.progress import StagedProgress


class Command(ProjectCommand):
    help = (
        "JSON Lines 파일에서 FAQ를 적재합니다. 한 줄에 JSON 객체 하나 "
        f"(쓸 수 있는 키: {', '.join(INGEST_KEYS)}; q/a 또는 question/answer와 source_created_at 필수). "
        "같은 질문은 가장 최근 source_created_at만 남고, 직원이 그 뒤에 수정·삭제한 질문은 건너뜁니다."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="JSON Lines 파일 경로 (UTF-8)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="결과를 JSON으로 출력")

    def handle(self, *args, file: Path, as_json: bool = False, **options):
        if not file.is_file():
            raise CommandError(f"파일이 없습니다: {file}")
        lines = faq_jsonl_line_count(file)
        bar = StagedProgress(self, description="FAQ 적재")
        try:
            report = faq_ingest_jsonl(file, progress=bar, total_lines=lines)
        except FaqError as error:
            raise CommandError(str(error)) from error
        finally:
            bar.close()
        if as_json:
            self.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
        else:
            self.stdout.write(
                f"{file}: {lines}줄 중 {report.lines}건 — 신규 {report.created}, 변경 {report.updated}, "
                f"그대로 {report.unchanged}, 더 오래된 버전 건너뜀 {report.skipped_older}, "
                f"직원 변경 이후가 아니어서 건너뜀 {report.skipped_curated}, 오류 {len(report.errors)}"
            )
            for line, error in report.errors:
                self.stderr.write(f"  {line}행: {error}")
        if report.errors:
            raise CommandError(f"{len(report.errors)}줄을 적재하지 못했습니다. 나머지 줄은 적재했습니다.")
