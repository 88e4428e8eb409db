from django.core.management.base import CommandError

from config.commands import ProjectCommand
from config.progress import StagedProgress
from vendors.services import VendorImportRefused, vendors_import_csv, vendors_import_preview


class Command(ProjectCommand):
    help = "벤더 CSV(머리글 code,name,aliases, 별칭은 | 로 구분)를 코드 기준으로 가져옵니다."

    def add_arguments(self, parser):
        parser.add_argument("file", help="CSV 파일 경로 (UTF-8 또는 CP949)")
        parser.add_argument("--dry-run", action="store_true", help="반영하지 않고 바뀔 내용만 보여 줍니다")

    def handle(self, *args, **options):
        try:
            if options["dry_run"]:
                with open(options["file"], "rb") as handle:
                    report = vendors_import_preview(handle.read(), file_name=options["file"])
            else:
                bar = StagedProgress(self, description="벤더 가져오기")
                try:
                    report = vendors_import_csv(options["file"], progress=bar)
                finally:
                    bar.close()
        except OSError as exc:
            raise CommandError(f"파일을 열 수 없습니다: {options['file']} ({exc.strerror})") from exc
        except VendorImportRefused as exc:
            raise CommandError(str(exc)) from exc
        for error in report.errors:
            code = f" [{error.code}]" if error.code else ""
            self.stderr.write(f"{error.line}행{code}: {error.message}")
        prefix = "미리보기 (반영하지 않음) " if options["dry_run"] else ""
        self.stdout.write(
            f"{prefix}{report.source}: 신규 {report.created}, 변경 {report.updated}, 그대로 {report.unchanged}, "
            f"오류 {len(report.errors)}"
        )
        if options["dry_run"]:
            for change in report.changes:
                fields = f" ({', '.join(change['fields'])})" if change["fields"] else ""
                self.stdout.write(f"  {change['action']} {change['code']}{fields}")
