"""python manage.py ingest_faq FILE — load FAQ entries from JSON Lines (newest version of a question wins)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from agent.knowledge.faq_services import faq_ingest_jsonl


class Command(BaseCommand):
    help = "Load FAQ entries from a JSON Lines file (q/a or question/answer, source_created_at required)."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the report as JSON")

    def handle(self, *args, file: Path, as_json: bool = False, **options):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        report = faq_ingest_jsonl(file)
        if as_json:
            self.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
        else:
            self.stdout.write(
                f"{file}: {report.lines} lines, {report.created} created, {report.updated} updated, "
                f"{report.unchanged} unchanged, {report.skipped_older} skipped (older), {len(report.errors)} errors"
            )
            for line, error in report.errors:
                self.stderr.write(f"  line {line}: {error}")
        if report.errors:
            raise CommandError(f"{len(report.errors)} line(s) were not loaded; the other lines were.")
