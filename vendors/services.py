"""Writes of the vendors app: vendor upserts, the CSV import, the curation of records, products and brands, and
staged uploads. Resolving a room to its counterpart writes the room, so it is conversations' (`room_services`)."""

import csv
import hashlib
import io
import os
import re
import unicodedata
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from monitoring.services import audit_record
from vendors.models import Vendor
from vendors.resolution import normalize_name
from vendors.selectors import VENDOR_NAMES_GENERATION_KEY

IMPORT_HEADER = ("code", "name", "aliases")
ALIAS_SEPARATOR = "|"
_CODE = re.compile(r"[0-9]+")
_CODE_MAX_LENGTH = Vendor._meta.get_field("code").max_length
_NAME_MAX_LENGTH = Vendor._meta.get_field("name").max_length


class VendorInvalid(ValueError):
    """A vendor's code, name or aliases break a rule; the message is for staff."""


class VendorImportRefused(ValueError):
    """The whole file is unusable (unreadable, empty, wrong header); nothing was imported."""


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
    changes: list[dict] = field(default_factory=list)  # {"code", "action": create|update, "fields"} for a preview

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


def _import_rows(text: str, progress=None) -> tuple[list[tuple[int, str, str, list[str]]], list[ImportRowError]]:
    """Parse and validate the CSV: ([(line, code, name, aliases)], [errors]). Raises VendorImportRefused."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows, errors, first_line_by_code = [], [], {}
    header = None
    last_line = 0
    total_lines = text.count("\n") + 1
    for cells in reader:
        line, last_line = last_line + 1, reader.line_num
        if progress:
            progress("검사", min(reader.line_num, total_lines), total_lines)
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


def vendors_import_csv(path_or_file, *, actor_kind: str = "system", actor_id=None, progress=None) -> ImportReport:
    """Load vendors from CSV (header `code,name,aliases`, aliases separated by `|`), upserting by code.

    Rows with errors are reported with their line numbers and skipped; the valid rows are written in one
    transaction, each created or changed vendor with its audit row. New vendors are active; an import leaves
    an existing vendor's active flag alone. Raises VendorImportRefused when the file as a whole is unusable.
    """
    text, source = _import_text(path_or_file)
    rows, errors = _import_rows(text, progress)
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
    report.changes = [{"code": v.code, "action": "create", "fields": []} for v in created] + [
        {"code": v.code, "action": "update", "fields": sorted(changes)} for v, changes in updated
    ]
    return report


# --- curation of records, products and brands (the admin pages) ------------------------------------------------

RECORD_EDITABLE = ("kind", "title", "body", "values", "effective_from", "effective_to", "source", "source_id")
PRODUCT_EDITABLE = ("name", "brand", "unit_price", "category", "cost_price", "stock_quantity", "safety_stock")


def _field_value(obj, name):
    value = getattr(obj, f"{name}_id") if name == "brand" else getattr(obj, name)
    return value.isoformat() if hasattr(value, "isoformat") else value


def _curation_save(obj, *, fields: dict, editable: tuple, action: str, actor, refresh) -> dict:
    """Apply the editable `fields`, re-derive the search text, validate, save and audit; returns the changes."""
    unknown = sorted(set(fields) - set(editable))
    if unknown:
        raise VendorInvalid(f"고칠 수 없는 항목입니다: {', '.join(unknown)}")
    creating = obj.pk is None
    before = {name: _field_value(obj, name) for name in editable}
    for name, value in fields.items():
        setattr(obj, name, value)
    changes = {
        name: [before[name], _field_value(obj, name)] for name in editable if before[name] != _field_value(obj, name)
    }
    if not changes and not creating:
        return {}
    refresh(obj)
    obj.full_clean(exclude=["search_text"])
    obj.save()
    audit_record(
        actor_kind="staff" if getattr(actor, "pk", None) else "system",
        actor_id=getattr(actor, "pk", None),
        action=action,
        target=obj,
        data={"changes": changes, "created": creating},
    )
    return changes


def vendor_record_save(*, record, fields: dict, actor=None) -> dict:
    """Create or edit a vendor record (staff), audited; the search text follows. Raises ValidationError."""
    from vendors.records import record_search_refresh

    with transaction.atomic():
        if record.pk is not None:
            record = type(record).objects.select_for_update().get(pk=record.pk)
        return _curation_save(
            record,
            fields=fields,
            editable=RECORD_EDITABLE,
            action="records.record_save",
            actor=actor,
            refresh=record_search_refresh,
        )


def product_save(*, product, fields: dict, actor=None) -> dict:
    """Create or edit a product (staff), audited; the search text follows its brand. Raises ValidationError."""
    from vendors.records import product_search_refresh

    with transaction.atomic():
        if product.pk is not None:
            product = type(product).objects.select_for_update().get(pk=product.pk)
        return _curation_save(
            product,
            fields=fields,
            editable=PRODUCT_EDITABLE,
            action="records.product_save",
            actor=actor,
            refresh=lambda p: product_search_refresh(p, p.brand),
        )


def brand_save(*, brand, name: str, aliases: list[str], actor=None) -> dict:
    """Rename a brand or change its aliases, audited; every product of the brand is re-indexed."""
    from vendors.models import Product
    from vendors.records import product_search_refresh

    aliases = [alias.strip() for alias in aliases if alias.strip()]
    with transaction.atomic():
        creating = brand.pk is None
        if not creating:
            brand = type(brand).objects.select_for_update().get(pk=brand.pk)
        changes = {
            key: [old, new]
            for key, old, new in (("name", brand.name, name.strip()), ("aliases", brand.aliases, aliases))
            if old != new
        }
        if not changes and not creating:
            return {}
        brand.name, brand.aliases = name.strip(), aliases
        brand.full_clean()
        brand.save()
        products = list(Product.objects.filter(brand=brand).order_by("pk"))
        for product in products:
            product_search_refresh(product, brand)
        Product.objects.bulk_update(products, ["search_text"], batch_size=1000)
        audit_record(
            actor_kind="staff" if getattr(actor, "pk", None) else "system",
            actor_id=getattr(actor, "pk", None),
            action="records.brand_save",
            target=brand,
            data={"changes": changes, "created": creating, "products_reindexed": len(products)},
        )
    return changes


def records_retire(*, model, ids, actor, retire: bool = True) -> int:
    """Retire (or restore) records or products: a retired row leaves the search, the tools and the aggregates but
    stays visible to staff, and an import does not bring it back (staff restore it here). Returns how many
    changed; each gets an audit row."""
    from vendors.records import product_search_refresh, record_search_refresh

    action = "retire" if retire else "restore"
    with transaction.atomic():
        rows = list(
            model.objects.select_for_update(of=("self",))
            .filter(pk__in=list(ids), retired_at__isnull=retire)
            .select_related(*(["brand"] if model.__name__ == "Product" else []))
            .order_by("pk")
        )
        now = timezone.now()
        for row in rows:
            row.retired_at = now if retire else None
            if model.__name__ == "Product":
                product_search_refresh(row, row.brand)
            else:
                record_search_refresh(row)
            row.save(update_fields=["retired_at", "search_text", "updated_at"])
            audit_record(
                actor_kind="staff",
                actor_id=getattr(actor, "pk", None),
                action=f"records.{model.__name__.lower()}_{action}",
                target=row,
            )
    return len(rows)


# --- uploads in the admin, previewed before they are applied --------------------------------------------------


class _DryRunRollback(Exception):
    pass


def vendors_import_preview(data: bytes, *, file_name: str) -> ImportReport:
    """Dry run of `vendors_import_csv`: the same checks and writes, rolled back, so the report is what the import
    would do now. Raises VendorImportRefused as the import would."""
    upload = io.BytesIO(data)
    upload.name = file_name
    result = {}
    try:
        with transaction.atomic():
            result["report"] = vendors_import_csv(upload, actor_kind="system", actor_id="dry-run")
            raise _DryRunRollback
    except _DryRunRollback:
        pass
    return result["report"]


def _staged_preview(staged) -> dict:
    """The preview of a staged upload as stored on the row: counts, changes, warnings, errors."""
    from vendors.models import StagedImport, Vendor
    from vendors.records import RecordImportInvalid, records_content_read, records_import_preview

    if staged.kind == StagedImport.Kind.VENDORS:
        try:
            report = vendors_import_preview(bytes(staged.content), file_name=staged.file_name)
        except VendorImportRefused as refused:
            return {"errors": [str(refused)], "blocking": True, "changes": [], "counts": {}, "warnings": []}
        return {
            "counts": {
                "vendors_created": report.created,
                "vendors_updated": report.updated,
                "vendors_unchanged": report.unchanged,
            },
            "changes": [{"type": "vendor", "vendor": c["code"], "key": c["code"], **c} for c in report.changes],
            "errors": [f"{e.line}행{f' [{e.code}]' if e.code else ''}: {e.message}" for e in report.errors],
            "blocking": False,  # rows with errors are skipped, the others apply
            "warnings": ["오류가 있는 행은 건너뛰고 나머지 행만 반영합니다."] if report.errors else [],
        }
    try:
        rows = records_content_read(staged.file_name, bytes(staged.content))
        preview = records_import_preview(rows=rows, file_name=staged.file_name, replace_unkeyed=staged.replace_unkeyed)
    except RecordImportInvalid as invalid:
        return {"errors": invalid.errors, "blocking": True, "changes": [], "counts": {}, "warnings": []}
    codes = dict(Vendor.objects.filter(pk__in={c["vendor_id"] for c in preview.changes}).values_list("pk", "code"))
    warning = preview.unkeyed.warning()
    return {
        "counts": preview.counts,
        "changes": [{**c, "vendor": codes.get(c["vendor_id"], "")} for c in preview.changes],
        "errors": [],
        "blocking": False,
        "warnings": [warning] if warning else [],
        "unkeyed_rows": preview.unkeyed.rows,
        "unkeyed_stored": preview.unkeyed.stored,
    }


def staged_import_create(*, kind: str, file_name: str, data: bytes, replace_unkeyed: bool, actor):
    """Keep an uploaded file with its dry-run preview; nothing else is written until staff apply it."""
    from vendors.models import StagedImport

    staged = StagedImport(
        kind=kind,
        file_name=os.path.basename(file_name)[:300],
        file_sha256=hashlib.sha256(data).hexdigest(),
        content=data,
        replace_unkeyed=replace_unkeyed and kind == StagedImport.Kind.RECORDS,
        created_by=actor,
    )
    staged.preview = _staged_preview(staged)
    with transaction.atomic():
        staged.save()
        audit_record(
            actor_kind="staff",
            actor_id=actor.pk,
            action="import.preview",
            target=staged,
            data={"kind": kind, "file_name": staged.file_name, "counts": staged.preview["counts"]},
        )
    return staged


def staged_import_repreview(*, staged, replace_unkeyed: bool):
    """Preview again (the data may have changed, or staff switched replacing rows without a source id)."""
    from vendors.models import StagedImport

    with transaction.atomic():
        locked = StagedImport.objects.select_for_update().get(pk=staged.pk)
        if locked.status != StagedImport.Status.PREVIEWED:
            raise VendorInvalid("이미 반영했거나 닫은 업로드입니다.")
        locked.replace_unkeyed = replace_unkeyed and locked.kind == StagedImport.Kind.RECORDS
        locked.preview = _staged_preview(locked)
        locked.save(update_fields=["replace_unkeyed", "preview"])
    return locked


def staged_import_apply(*, staged, actor):
    """Apply a previewed upload once (compare-and-set previewed → applied); the import writes its own audit row."""
    from vendors.models import StagedImport
    from vendors.records import RecordImportInvalid, records_content_read, records_import

    with transaction.atomic():
        claimed = StagedImport.objects.filter(pk=staged.pk, status=StagedImport.Status.PREVIEWED).update(
            status=StagedImport.Status.APPLIED, applied_at=timezone.now()
        )
        if not claimed:
            raise VendorInvalid("이미 반영했거나 닫은 업로드입니다.")
        staged.refresh_from_db()
        if staged.kind == StagedImport.Kind.VENDORS:
            upload = io.BytesIO(bytes(staged.content))
            upload.name = staged.file_name
            try:
                report = vendors_import_csv(upload, actor_kind="staff", actor_id=actor.pk)
            except VendorImportRefused as refused:
                raise VendorInvalid(str(refused)) from refused
            staged.result = {"vendors_created": report.created, "vendors_updated": report.updated,
                             "vendors_unchanged": report.unchanged, "errors": len(report.errors)}  # fmt: skip
        else:
            try:
                record_import = records_import(
                    rows=records_content_read(staged.file_name, bytes(staged.content)),
                    file_name=staged.file_name,
                    file_sha256=staged.file_sha256,
                    actor_kind="staff",
                    actor_id=actor.pk,
                    replace_unkeyed=staged.replace_unkeyed,
                )
            except RecordImportInvalid as invalid:
                raise VendorInvalid(" / ".join(invalid.errors[:5])) from invalid
            staged.record_import = record_import
            staged.result = record_import.counts
        staged.save(update_fields=["result", "record_import"])
        audit_record(actor_kind="staff", actor_id=actor.pk, action="import.apply", target=staged, data=staged.result)
    return staged


def staged_import_discard(*, staged, actor) -> bool:
    from vendors.models import StagedImport

    with transaction.atomic():
        closed = StagedImport.objects.filter(pk=staged.pk, status=StagedImport.Status.PREVIEWED).update(
            status=StagedImport.Status.DISCARDED, content=b""
        )
        if closed:
            audit_record(actor_kind="staff", actor_id=actor.pk, action="import.discard", target=staged)
    return bool(closed)
