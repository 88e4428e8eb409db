"""`python manage.py import_records FILE` — brands, products and vendor records from CSV, XLSX or JSON Lines.

Every row is checked first; one bad row and nothing is written (the errors are listed with their rows).
Column reference: docs/knowledge.md, "Per-counterpart records".
"""

import hashlib
from pathlib import Path

from django.core.management.base import CommandError

from config.commands import ProjectCommand
from config.progress import StagedProgress
from vendors.records import (
    RecordImportInvalid,
    records_file_read,
    records_import,
    records_import_preview,
    records_rows_validate,
    records_unkeyed_rows,
)


class Command(ProjectCommand):
    help = (
        "벤더 기록·상품·브랜드를 CSV / XLSX / JSON Lines 파일에서 가져옵니다 "
        "(오류가 있으면 아무것도 반영하지 않음). 열 설명: docs/knowledge.md"
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="가져올 파일 (.csv UTF-8/CP949, .xlsx, .jsonl)")
        parser.add_argument(
            "--replace-unkeyed",
            action="store_true",
            help=(
                "source_id가 없는 기록은 같은 벤더·출처(기본: 파일명)의 source_id 없는 기존 기록을 지우고 새로 넣습니다"
            ),
        )
        parser.add_argument("--dry-run", action="store_true", help="반영하지 않고 바뀔 내용만 보여 줍니다")

    def handle(self, *args, file: Path, replace_unkeyed: bool, dry_run: bool, **options):
        if not file.is_file():
            raise CommandError(f"파일이 없습니다: {file}")
        bar = StagedProgress(self, description="기록 가져오기")
        try:
            rows = records_file_read(file)
            if dry_run:
                preview = records_import_preview(rows=rows, file_name=file.name, replace_unkeyed=replace_unkeyed)
                bar.close()
                self._warn_unkeyed(preview.unkeyed, replace_unkeyed)
                self._write_preview(preview)
                return
            plan = records_rows_validate(rows, default_source=f"import:{file.name}", progress=bar)
            self._warn_unkeyed(records_unkeyed_rows(plan), replace_unkeyed)
            record_import = records_import(
                rows=rows,
                plan=plan,
                file_name=file.name,
                file_sha256=hashlib.sha256(file.read_bytes()).hexdigest(),
                actor_kind="system",
                actor_id="import_records",
                replace_unkeyed=replace_unkeyed,
            )
        except RecordImportInvalid as invalid:
            bar.close()
            for error in invalid.errors:
                self.stderr.write(error)
            raise CommandError(f"오류 {len(invalid.errors)}건 — 아무것도 반영하지 않았습니다.") from None
        bar.close()
        counts = ", ".join(f"{name}={value}" for name, value in record_import.counts.items())
        self.stdout.write(self.style.SUCCESS(f"가져오기 #{record_import.pk} 완료: {counts}"))

    def _warn_unkeyed(self, unkeyed, replace_unkeyed: bool) -> None:
        if unkeyed.rows and not replace_unkeyed:
            self.stderr.write(self.style.WARNING(f"경고: {unkeyed.warning()}"))

    def _write_preview(self, preview) -> None:
        counts = ", ".join(f"{name}={value}" for name, value in preview.counts.items())
        self.stdout.write(f"미리보기 (반영하지 않음): {counts}")
        for change in preview.changes:
            fields = f" ({', '.join(change['fields'])})" if change["fields"] else ""
            self.stdout.write(f"  {change['action']} {change['type']} {change['key']}{fields}")
