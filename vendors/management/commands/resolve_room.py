import json
import sys

from django.core.management.base import CommandError

from config.commands import ProjectCommand
from vendors.selectors import room_name_resolve


class Command(ProjectCommand):
    help = "방 이름이 어느 벤더를 가리키는지 판정합니다 (DB에 쓰지 않음)."

    def add_arguments(self, parser):
        parser.add_argument("room_name", nargs="?", help="방 이름, 예: '(1234) 대한물산'")
        parser.add_argument("--json", action="store_true", help="JSON 한 줄로 출력")
        parser.add_argument(
            "--batch", metavar="FILE", help="한 줄에 방 이름 하나인 파일('-'는 표준 입력); 줄마다 JSON 한 줄 출력"
        )

    def handle(self, *args, **options):
        if (options["room_name"] is None) == (options["batch"] is None):
            raise CommandError("방 이름 하나 또는 --batch FILE 중 하나만 주세요.")
        if options["batch"] is not None:
            for room_name in self._batch_names(options["batch"]):
                self._write_json(room_name)
        elif options["json"]:
            self._write_json(options["room_name"])
        else:
            self._write_text(options["room_name"])

    def _batch_names(self, path: str) -> list[str]:
        # Every line is a room name, blank ones included, so output line N answers input line N.
        if path == "-":
            return sys.stdin.read().removeprefix("\ufeff").splitlines()
        try:
            with open(path, encoding="utf-8-sig") as handle:
                return handle.read().splitlines()
        except OSError as exc:
            raise CommandError(f"파일을 열 수 없습니다: {path} ({exc.strerror})") from exc

    def _write_json(self, room_name: str) -> None:
        self.stdout.write(json.dumps(room_name_resolve(room_name).as_dict(), ensure_ascii=False))

    def _write_text(self, room_name: str) -> None:
        result = room_name_resolve(room_name)
        vendor = f"({result.vendor_code}) {result.vendor_name}" if result.vendor_code else "-"
        self.stdout.write(f"상태: {result.status}  사유: {result.reason}  벤더: {vendor}")
        for candidate in result.candidates:
            self.stdout.write(f"  후보 ({candidate['code']}) {candidate['name']}  {candidate['score']:.3f}")
