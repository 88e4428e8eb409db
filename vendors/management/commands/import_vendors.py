from django.core.management.base import BaseCommand, CommandError

from vendors.services import VendorImportRefused, vendors_import_csv


class Command(BaseCommand):
    help = "벤더 CSV(머리글 code,name,aliases, 별칭은 | 로 구분)를 코드 기준으로 가져옵니다."

    def add_arguments(self, parser):
        parser.add_argument("file", help="CSV 파일 경로")

    def handle(self, *args, **options):
        try:
            report = vendors_import_csv(options["file"])
        except VendorImportRefused as exc:
            raise CommandError(str(exc)) from exc
        for error in report.errors:
            code = f" [{error.code}]" if error.code else ""
            self.stderr.write(f"{error.line}행{code}: {error.message}")
        self.stdout.write(
            f"{report.source}: 신규 {report.created}, 변경 {report.updated}, 그대로 {report.unchanged}, "
            f"오류 {len(report.errors)}"
        )
