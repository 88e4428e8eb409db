"""Management commands: resolve_room (--json, --batch) output exactly, import_vendors output and exit status."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from conversations.models import Room
from vendors.models import Vendor
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.django_db

TYPO = (
    '{"status": "blocked", "vendor_code": null, "vendor_name": null, "reason": "id_typo", "candidates": '
    '[{"code": "1001", "name": "대한물산", "score": 1.0}, '
    '{"code": "1234", "name": "가온상사", "score": 0.5714285714285714}]}'
)
CONTAINMENT = (
    '{"status": "matched", "vendor_code": "1001", "vendor_name": "대한물산", "reason": "containment", "candidates": '
    '[{"code": "1001", "name": "대한물산", "score": 1.0}, {"code": "1234", "name": "가온상사", "score": 0.5}]}'
)
NO_MATCH = (
    '{"status": "unresolved", "vendor_code": null, "vendor_name": null, "reason": "no_match", "candidates": '
    '[{"code": "1234", "name": "가온상사", "score": 0.7142857142857143}, '
    '{"code": "1001", "name": "대한물산", "score": 0.4444444444444444}]}'
)
EMPTY_NAME = (
    '{"status": "matched", "vendor_code": "1001", "vendor_name": "대한물산", "reason": "empty_name", "candidates": []}'
)
EMPTY_ROOM = (
    '{"status": "unresolved", "vendor_code": null, "vendor_name": null, "reason": "no_match", "candidates": []}'
)


@pytest.fixture
def vendors():
    VendorFactory(code="1001", name="대한물산", aliases=[])
    VendorFactory(code="1234", name="가온상사", aliases=["가온"])


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_resolve_room_json_prints_one_object_with_null_vendor_unless_matched(vendors):
    """`resolve_room NAME --json` prints the issue's object, Korean unescaped, vendor fields null when blocked."""
    assert run("resolve_room", "(1234) 대한물산", "--json") == TYPO + "\n"
    assert run("resolve_room", "대한물산 발주방", "--json") == CONTAINMENT + "\n"


def test_resolve_room_batch_prints_one_line_per_input_line_in_order(vendors, tmp_path):
    """`--batch FILE`: one JSON object per room name line, in order, blank lines answered too."""
    batch = tmp_path / "rooms.txt"
    batch.write_text("(1234) 대한물산\n대한물산 발주방\n나래상사\n\n(1001)\n", encoding="utf-8")

    assert run("resolve_room", "--batch", str(batch)).splitlines() == [
        TYPO,
        CONTAINMENT,
        NO_MATCH,
        EMPTY_ROOM,
        EMPTY_NAME,
    ]


def test_resolve_room_writes_nothing(vendors):
    """The command only reads: no room rows appear."""
    run("resolve_room", "대한물산", "--json")
    assert not Room.objects.exists()


def test_resolve_room_text_output_names_status_reason_and_candidates(vendors):
    """Without --json the outcome is printed for staff."""
    output = run("resolve_room", "대한물산 발주방")
    assert "상태: matched" in output
    assert "사유: containment" in output
    assert "(1001) 대한물산" in output


def test_resolve_room_needs_exactly_one_input(vendors, tmp_path):
    """Neither a name nor --batch, or both, is a usage error."""
    with pytest.raises(CommandError):
        run("resolve_room")
    with pytest.raises(CommandError):
        run("resolve_room", "대한물산", "--batch", str(tmp_path / "rooms.txt"))


def test_import_vendors_prints_row_errors_and_a_summary(tmp_path):
    """Per-row errors go to stderr with their lines, the summary to stdout; a usable file ends normally."""
    path = tmp_path / "vendors.csv"
    path.write_text("code,name,aliases\n1001,대한물산,대한\nabc,가온상사,\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()

    call_command("import_vendors", str(path), stdout=out, stderr=err)

    assert err.getvalue().splitlines() == ["3행 [abc]: 벤더 코드는 숫자만 쓸 수 있습니다: 'abc'"]
    assert out.getvalue().strip() == f"{path}: 신규 1, 변경 0, 그대로 0, 오류 1"
    assert Vendor.objects.get().code == "1001"


def test_import_vendors_fails_with_exit_status_1_on_an_unusable_file(tmp_path):
    """A bad header stops the command with a CommandError (exit status 1 from manage.py) naming the header."""
    path = tmp_path / "vendors.csv"
    path.write_text("id,vendor\n1001,대한물산\n", encoding="utf-8")

    with pytest.raises(CommandError, match="code,name,aliases") as failed:
        call_command("import_vendors", str(path))

    assert failed.value.returncode == 1
    assert not Vendor.objects.exists()
