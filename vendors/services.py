"""Writes of the vendors app: vendor upserts, the CSV import, and resolving a room to its counterpart."""

import csv
import io
import os
import re
import unicodedata
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from conversations.models import Room
from monitoring.services import audit_record
from vendors.models import Vendor
from vendors.resolution import MATCHED, Resolution, normalize_name
from vendors.selectors import VENDOR_NAMES_GENERATION_KEY, room_name_resolve

IMPORT_HEADER = ("code", "name", "aliases")
ALIAS_SEPARATOR = "|"
_CODE = re.compile(r"[0-9]+")
_CODE_MAX_LENGTH = Vendor._meta.get_field("code").max_length
_NAME_MAX_LENGTH = Vendor._meta.get_field("name").max_length


class VendorInvalid(ValueError):
    """A vendor's code, name or aliases break a rule; the message is for staff."""


class VendorImportRefused(ValueError):
    """The whole file is unusable (unreadable, empty, wrong header); nothing was imported."""


class RoomResolutionStale(RuntimeError):
    """The matched vendor vanished twice between building the index and the write."""


@dataclass(frozen=True)
class ImportRowError:
    line: int
    code: str
    message: str


@dataclass
class ImportReport:
    source: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[ImportRowError] = field(default_factory=list)

    @property
    def imported(self) -> int:
        return self.created + self.updated + self.unchanged


def vendor_fields_clean(*, code: str, name: str, aliases) -> tuple[str, str, list[str]]:
    """The stored form of a vendor's fields, or VendorInvalid.

    The code is digits only (it is what staff write in `(1234) 대한물산`; full-width digits are accepted), the
    name and each alias must keep something after normalisation, aliases are stripped and deduplicated.
    """
    code = unicodedata.normalize("NFKC", code or "").strip()
    if not _CODE.fullmatch(code):
        raise VendorInvalid(f"벤더 코드는 숫자만 쓸 수 있습니다: {code!r}")
    if len(code) > _CODE_MAX_LENGTH:
        raise VendorInvalid(f"벤더 코드는 {_CODE_MAX_LENGTH}자 이하여야 합니다.")
    name = (name or "").strip()
    if not normalize_name(name):
        raise VendorInvalid("벤더명이 비어 있습니다.")
    if len(name) > _NAME_MAX_LENGTH:
        raise VendorInvalid(f"벤더명은 {_NAME_MAX_LENGTH}자 이하여야 합니다.")
    if isinstance(aliases, str) or not all(isinstance(alias, str) for alias in aliases or ()):
        raise VendorInvalid("별칭은 문자열 목록이어야 합니다.")
    cleaned: list[str] = []
    for alias in aliases or ():
        alias = alias.strip()
        if not alias or alias in cleaned:
            continue
        if not normalize_name(alias):
            raise VendorInvalid(f"별칭 {alias!r}은(는) 정규화하면 비어 있습니다.")
        if len(alias) > _NAME_MAX_LENGTH:
            raise VendorInvalid(f"별칭은 {_NAME_MAX_LENGTH}자 이하여야 합니다.")
        cleaned.append(alias)
    return code, name, cleaned


def _vendor_names_changed() -> None:
    """Tell every process's resolution index (and other name caches) that vendor names changed."""
    cache.add(VENDOR_NAMES_GENERATION_KEY, 0, timeout=None)
    try:
        cache.incr(VENDOR_NAMES_GENERATION_KEY)
    except ValueError:  # evicted between add and incr
        cache.set(VENDOR_NAMES_GENERATION_KEY, 1, timeout=None)


def _vendor_changes(vendor: Vendor, **wanted) -> dict[str, list]:
    return {
        name: [getattr(vendor, name), value]
        for name, value in wanted.items()
        if value is not None and getattr(vendor, name) != value
    }


def vendor_upsert(
    *,
    code: str,
    name: str,
    aliases=(),
    is_active: bool | None = None,
    answer_mode: str | None = None,
    actor_kind: str = "system",
    actor_id=None,
) -> tuple[Vendor, bool]:
    """Create the vendor with this code, or update its name/aliases (and active flag and answer mode unless None).

    Returns (vendor, created). Writes an audit row only when something changed.
    """
    code, name, aliases = vendor_fields_clean(code=code, name=name, aliases=aliases)
    if answer_mode is not None and answer_mode not in Vendor.AnswerMode.values:
        raise VendorInvalid(f"답변 모드는 {', '.join(Vendor.AnswerMode.values)} 중 하나여야 합니다: {answer_mode!r}")
    with transaction.atomic():
        vendor, created = Vendor.objects.select_for_update().get_or_create(
            code=code,
            defaults={
                "name": name,
                "aliases": aliases,
                "is_active": True if is_active is None else is_active,
                "answer_mode": answer_mode or Vendor.AnswerMode.AUTO,
            },
        )
        if created:
            audit_record(
                actor_kind=actor_kind,
                actor_id=actor_id,
                action="vendor.create",
                target=vendor,
                data={
                    "code": code,
                    "name": name,
                    "aliases": aliases,
                    "is_active": vendor.is_active,
                    "answer_mode": vendor.answer_mode,
                },
            )
        else:
            changes = _vendor_changes(vendor, name=name, aliases=aliases, is_active=is_active, answer_mode=answer_mode)
            if not changes:
                return vendor, False
            for attribute, (_old, new) in changes.items():
                setattr(vendor, attribute, new)
            vendor.save(update_fields=[*changes, "updated_at"])
            audit_record(
                actor_kind=actor_kind,
                actor_id=actor_id,
                action="vendor.update",
                target=vendor,
                data={"changes": changes},
            )
        transaction.on_commit(_vendor_names_changed)
    return vendor, created


def _import_text(path_or_file) -> tuple[str, str]:
    """(text, source label). UTF-8 (with or without BOM) first, then CP949, which Korean Excel writes."""
    if isinstance(path_or_file, str | os.PathLike):
        source = os.fspath(path_or_file)
        try:
            with open(source, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise VendorImportRefused(f"파일을 열 수 없습니다: {source} ({exc.strerror})") from exc
    else:
        source = getattr(path_or_file, "name", "<업로드 파일>")
        data = path_or_file.read()
    if isinstance(data, str):
        return data.removeprefix("\ufeff"), source
    for encoding in ("utf-8-sig", "cp949"):
        try:
            return data.decode(encoding), source
        except UnicodeDecodeError:
            continue
    raise VendorImportRefused("파일 인코딩을 읽을 수 없습니다. UTF-8 또는 CP949(엑셀 CSV)로 저장해 주세요.")


def _import_rows(text: str) -> tuple[list[tuple[int, str, str, list[str]]], list[ImportRowError]]:
    """Parse and validate the CSV: ([(line, code, name, aliases)], [errors]). Raises VendorImportRefused."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows, errors, first_line_by_code = [], [], {}
    header = None
    last_line = 0
    for cells in reader:
        line, last_line = last_line + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in cells]
            if sorted(header) != sorted(IMPORT_HEADER):
                raise VendorImportRefused(
                    f"{line}행 머리글이 잘못되었습니다: '{','.join(cells)}' (필요한 머리글: {','.join(IMPORT_HEADER)})"
                )
            continue
        if len(cells) != len(header):
            errors.append(ImportRowError(line, "", f"칸 수가 {len(header)}개가 아니라 {len(cells)}개입니다."))
            continue
        values = dict(zip(header, cells, strict=True))
        try:
            code, name, aliases = vendor_fields_clean(
                code=values["code"], name=values["name"], aliases=values["aliases"].split(ALIAS_SEPARATOR)
            )
        except VendorInvalid as exc:
            errors.append(ImportRowError(line, values["code"].strip(), str(exc)))
            continue
        if code in first_line_by_code:
            errors.append(ImportRowError(line, code, f"코드 {code}이(가) {first_line_by_code[code]}행과 중복됩니다."))
            continue
        first_line_by_code[code] = line
        rows.append((line, code, name, aliases))
    if header is None:
        raise VendorImportRefused(f"빈 파일입니다. 첫 줄은 머리글 {','.join(IMPORT_HEADER)} 이어야 합니다.")
    return rows, errors


def vendors_import_csv(path_or_file, *, actor_kind: str = "system", actor_id=None) -> ImportReport:
    """Load vendors from CSV (header `code,name,aliases`, aliases separated by `|`), upserting by code.

    Rows with errors are reported with their line numbers and skipped; the valid rows are written in one
    transaction, each created or changed vendor with its audit row. New vendors are active; an import leaves
    an existing vendor's active flag alone. Raises VendorImportRefused when the file as a whole is unusable.
    """
    text, source = _import_text(path_or_file)
    rows, errors = _import_rows(text)
    report = ImportReport(source=source, errors=errors)
    if not rows:
        return report
    now = timezone.now()
    with transaction.atomic():
        existing = {
            vendor.code: vendor
            for vendor in Vendor.objects.select_for_update()
            .filter(code__in=[code for _, code, _, _ in rows])
            .order_by("pk")
        }
        created, updated = [], []
        for _line, code, name, aliases in rows:
            vendor = existing.get(code)
            if vendor is None:
                created.append(Vendor(code=code, name=name, aliases=aliases, is_active=True))
                continue
            changes = _vendor_changes(vendor, name=name, aliases=aliases)
            if changes:
                vendor.name, vendor.aliases, vendor.updated_at = name, aliases, now
                updated.append((vendor, changes))
        created = Vendor.objects.bulk_create(created)
        Vendor.objects.bulk_update([vendor for vendor, _ in updated], ["name", "aliases", "updated_at"])
        for vendor in created:
            audit_record(
                actor_kind=actor_kind,
                actor_id=actor_id,
                action="vendor.import",
                target=vendor,
                data={"source": source, "created": True, "name": vendor.name, "aliases": vendor.aliases},
            )
        for vendor, changes in updated:
            audit_record(
                actor_kind=actor_kind,
                actor_id=actor_id,
                action="vendor.import",
                target=vendor,
                data={"source": source, "created": False, "changes": changes},
            )
        if created or updated:
            transaction.on_commit(_vendor_names_changed)
    report.created, report.updated = len(created), len(updated)
    report.unchanged = len(rows) - len(created) - len(updated)
    return report


def _resolution_with_vendor(room_name: str) -> tuple[Resolution, Vendor | None]:
    # The index is at the revision read just before; a vendor deleted or deactivated since then changes the
    # revision, so the second attempt resolves against the current vendors.
    for _attempt in range(2):
        resolution = room_name_resolve(room_name)
        if resolution.status != MATCHED:
            return resolution, None
        vendor = Vendor.objects.filter(code=resolution.vendor_code, is_active=True).first()
        if vendor is not None:
            return resolution, vendor
    raise RoomResolutionStale(f"Vendor {resolution.vendor_code} matched by the index is gone or inactive.")


def room_resolve(*, room: Room, actor_kind: str = "system", actor_id=None) -> Room:
    """Resolve the room's stored name to its counterpart and record the outcome on the room.

    Resolves the name as saved in the database (save a new name first), under a row lock, and returns the
    updated row as a fresh instance. The audit row is written only when status, vendor or reason changed.
    """
    with transaction.atomic():
        locked = Room.objects.select_for_update().get(pk=room.pk)
        resolution, vendor = _resolution_with_vendor(locked.name)
        previous = (locked.resolution_status, locked.vendor_id, locked.resolution_reason)
        previous_vendor_code = locked.vendor.code if locked.vendor_id else None
        locked.resolution_status = resolution.status
        locked.vendor = vendor
        locked.resolution_reason = resolution.reason
        locked.resolution_candidates = resolution.candidates
        locked.resolved_name = locked.name
        locked.resolved_at = timezone.now()
        locked.save(
            update_fields=[
                "resolution_status",
                "vendor",
                "resolution_reason",
                "resolution_candidates",
                "resolved_name",
                "resolved_at",
                "updated_at",
            ]
        )
        if previous != (locked.resolution_status, locked.vendor_id, locked.resolution_reason):
            audit_record(
                actor_kind=actor_kind,
                actor_id=actor_id,
                action="room.resolve",
                target=locked,
                data={
                    "room_name": locked.name,
                    "status": resolution.status,
                    "vendor_code": resolution.vendor_code,
                    "reason": resolution.reason,
                    "previous": {"status": previous[0], "vendor_code": previous_vendor_code, "reason": previous[2]},
                },
            )
    return locked
