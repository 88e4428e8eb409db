"""`python manage.py import_records FILE` — brands, products and vendor records from CSV, XLSX or JSON Lines.

Every row is checked first; one bad row and nothing is written (the errors are listed with their rows).
Column reference: docs/knowledge.md, "Per-counterpart records".
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from vendors.records import RecordImportInvalid, records_import_file


class Command(BaseCommand):
    help = "벤더 기록·상품·브랜드를 CSV / XLSX / JSON Lines 파일에서 가져옵니다 (오류가 있으면 아무것도 반영하지 않음)."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options):
        if not file.is_file():
            raise CommandError(f"파일이 없습니다: {file}")
        try:
            record_import = records_import_file(file, actor_kind="system", actor_id="import_records")
        except RecordImportInvalid as invalid:
            for error in invalid.errors:
                self.stderr.write(error)
            raise CommandError(f"오류 {len(invalid.errors)}건 — 아무것도 반영하지 않았습니다.") from None
        counts = ", ".join(f"{name}={value}" for name, value in record_import.counts.items())
        self.stdout.write(self.style.SUCCESS(f"가져오기 #{record_import.pk} 완료: {counts}"))
