"""vendors_import_csv: header `code,name,aliases`, aliases split on `|`, per-row errors, upsert by code."""

import io

import pytest
from django.conf import settings

from monitoring.models import AuditEvent
from vendors.models import Vendor
from vendors.selectors import room_name_resolve
from vendors.services import VendorImportRefused, vendors_import_csv
from vendors.tests.factories import VendorFactory

pytestmark = pytest.mark.django_db


def write_csv(tmp_path, text: str, encoding: str = "utf-8", name: str = "vendors.csv"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_good_file_creates_vendors_with_aliases(tmp_path):
    """Every row becomes an active vendor; aliases are split on `|`, stripped, deduplicated; one audit row each."""
    path = write_csv(
        tmp_path,
        'code,name,aliases\n1001,대한물산,대한 | 대한물산(주)|대한\n1002,가온상사,\n1003,"한빛 유통, 본사",한빛\n',
    )

    report = vendors_import_csv(path)

    assert (report.created, report.updated, report.unchanged, report.errors) == (3, 0, 0, [])
    assert list(Vendor.objects.values_list("code", "name", "aliases", "is_active")) == [
        ("1001", "대한물산", ["대한", "대한물산(주)"], True),
        ("1002", "가온상사", [], True),
        ("1003", "한빛 유통, 본사", ["한빛"], True),
    ]
    audits = AuditEvent.objects.filter(action="vendor.import")
    assert audits.count() == 3
    assert {a.data["source"] for a in audits} == {str(path)}


def test_reimport_updates_changed_rows_only_and_keeps_the_active_flag(tmp_path):
    """Upsert by code: a changed name is updated and audited, an identical row is left alone, and an
    import does not reactivate a vendor staff switched off."""
    VendorFactory(code="1001", name="대한물산", aliases=["대한"], is_active=False)
    VendorFactory(code="1002", name="가온상사", aliases=[])
    path = write_csv(tmp_path, "code,name,aliases\n1001,대한물산,대한\n1002,가온상사(구),가온\n")

    report = vendors_import_csv(path, actor_kind="staff", actor_id=3)

    assert (report.created, report.updated, report.unchanged) == (0, 1, 1)
    assert Vendor.objects.get(code="1002").all_names == ["가온상사(구)", "가온"]
    assert Vendor.objects.get(code="1001").is_active is False
    audit = AuditEvent.objects.get(action="vendor.import")
    assert (audit.actor_kind, audit.actor_id) == ("staff", "3")
    assert audit.data["changes"] == {"name": ["가온상사", "가온상사(구)"], "aliases": [[], ["가온"]]}


def test_per_row_errors_carry_line_numbers_and_valid_rows_are_still_imported(tmp_path):
    """Bad rows are reported by their line in the file (blank lines and multi-line cells counted) and skipped."""
    path = write_csv(
        tmp_path,
        "code,name,aliases\n"
        "1001,대한물산,\n"  # line 2: fine
        "\n"  # line 3: blank, skipped
        "12a4,가온상사,\n"  # line 4: code not digits
        "1005,,\n"  # line 5: no name
        "1006,(주),\n"  # line 6: nothing left after normalisation
        "1007,세림식품\n"  # line 7: two cells
        '1008,"한빛\n유통",\n'  # lines 8-9: a quoted cell over two lines, fine
        "1001,대한물산 중복,\n"  # line 10: duplicate code
        "１００９,미래식품,(주)|미래\n",  # line 11: alias empty after normalisation
    )

    report = vendors_import_csv(path)

    assert [(e.line, e.code) for e in report.errors] == [
        (4, "12a4"),
        (5, "1005"),
        (6, "1006"),
        (7, ""),
        (10, "1001"),
        (11, "１００９"),
    ]
    assert "2행" in report.errors[4].message
    assert (report.created, report.imported) == (2, 2)
    assert sorted(Vendor.objects.values_list("code", flat=True)) == ["1001", "1008"]


def test_bad_header_is_refused_and_nothing_is_stored(tmp_path):
    """A file whose first row is not code,name,aliases is refused as a whole with a message naming the header."""
    path = write_csv(tmp_path, "코드,이름,별칭\n1001,대한물산,\n")

    with pytest.raises(VendorImportRefused, match="code,name,aliases"):
        vendors_import_csv(path)

    assert not Vendor.objects.exists()
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize("text", ["", "\n\n"])
def test_empty_file_is_refused(tmp_path, text):
    """An empty file has no header and is refused."""
    with pytest.raises(VendorImportRefused):
        vendors_import_csv(write_csv(tmp_path, text))


def test_missing_file_is_refused(tmp_path):
    """A path that cannot be opened is refused with the path in the message."""
    with pytest.raises(VendorImportRefused, match=r"nope\.csv"):
        vendors_import_csv(tmp_path / "nope.csv")


def test_header_order_and_case_do_not_matter_and_excel_encodings_are_read(tmp_path):
    """Columns may come in any order and case; UTF-8 with BOM and CP949 (Korean Excel) both read."""
    vendors_import_csv(write_csv(tmp_path, "\ufeffName,ALIASES,Code\n대한물산,대한,1001\n", name="bom.csv"))
    vendors_import_csv(write_csv(tmp_path, "code,name,aliases\n1002,가온상사,가온\n", encoding="cp949", name="x.csv"))

    assert list(Vendor.objects.values_list("code", "name", "aliases")) == [
        ("1001", "대한물산", ["대한"]),
        ("1002", "가온상사", ["가온"]),
    ]


def test_file_objects_are_accepted():
    """A binary or text file object works as well as a path."""
    report = vendors_import_csv(io.BytesIO("code,name,aliases\n1001,대한물산,\n".encode()))
    report_text = vendors_import_csv(io.StringIO("code,name,aliases\n1002,가온상사,\n"))

    assert (report.created, report_text.created) == (1, 1)


def test_demo_vendor_file_imports_cleanly_and_shows_each_rule():
    """demo/data/vendors.csv loads without errors and holds the pairs the demo relies on."""
    report = vendors_import_csv(settings.BASE_DIR / "demo" / "data" / "vendors.csv")

    assert (report.created, report.errors) == (30, [])
    outcomes = {
        room: (r.status, r.reason, r.vendor_code)
        for room in ["(1001) 대한물산", "(1003) 가온상사", "가온", "한빛유통서비스 발주방", "대한물산 본사 발주방"]
        for r in [room_name_resolve(room)]
    }
    assert outcomes == {
        "(1001) 대한물산": ("matched", "id", "1001"),
        "(1003) 가온상사": ("blocked", "id_typo", None),
        "가온": ("unresolved", "ambiguous", None),
        "한빛유통서비스 발주방": ("unresolved", "ambiguous", None),
        "대한물산 본사 발주방": ("matched", "containment", "1001"),
    }
