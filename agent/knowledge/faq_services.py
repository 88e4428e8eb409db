"""Writes of the FAQ store. Each runs in one transaction with a version snapshot and an audit row; the Qdrant
write happens after commit. If that write fails the entry stays marked unindexed (`indexed_at` null, shown by
the health check) and the next index sync or `rebuild_faq_index` heals it: the database stays the truth.
"""

import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agent.knowledge.embeddings import normalise_text, text_bigrams
from agent.knowledge.faq_index import FaqIndexUnavailable, faq_points_delete, faq_points_upsert
from agent.models import FaqEntry, FaqVersion
from config.db import analyze_after_bulk_write
from monitoring.services import audit_record

logger = logging.getLogger(__name__)

_LOCK_CHUNK = 1000


class FaqError(ValueError):
    """A rule of the FAQ store was broken; the message is shown to staff as is."""


def question_key(question: str) -> str:
    """Two questions are the same question when they match after case, spacing and punctuation are ignored."""
    return hashlib.sha256(normalise_text(question).encode("utf-8")).hexdigest()


def faq_snapshot(entry: FaqEntry) -> dict:
    return {
        "id": entry.pk,
        "point_id": str(entry.point_id),
        "question": entry.question,
        "answer": entry.answer,
        "category": entry.category,
        "url": entry.url,
        "source": entry.source,
        "source_id": entry.source_id,
        "source_created_at": entry.source_created_at.isoformat(),
        "status": entry.status,
        "replaced_by_id": entry.replaced_by_id,
    }


def _actor_fields(actor) -> tuple[str, str | None, str]:
    """(audit actor kind, audit actor id, version label) for a staff user or the system."""
    if actor is not None and getattr(actor, "pk", None) is not None:
        return "staff", actor.pk, actor.get_username()
    return "system", None, "system"


def _record(
    entry: FaqEntry,
    *,
    reason: str,
    action: str,
    actor,
    data: dict | None = None,
    origin: str = FaqVersion.Origin.CURATION,
) -> FaqVersion:
    actor_kind, actor_id, label = _actor_fields(actor)
    version = FaqVersion.objects.create(
        entry=entry,
        entry_ref=entry.pk,
        question_key=entry.question_key,
        snapshot=faq_snapshot(entry),
        reason=reason,
        origin=origin,
        actor=label,
    )
    audit_record(actor_kind=actor_kind, actor_id=actor_id, action=action, target=entry, data=data or {})
    return version


def _index_after_commit(*, upsert_ids=(), delete_point_ids=()) -> None:
    upsert_ids, delete_point_ids = list(upsert_ids), [str(point_id) for point_id in delete_point_ids]
    if upsert_ids or delete_point_ids:
        transaction.on_commit(lambda: _apply_index_changes(upsert_ids, delete_point_ids))


def _apply_index_changes(upsert_ids: list[int], delete_point_ids: list[str]) -> None:
    try:
        faq_points_delete(delete_point_ids)
        faq_points_upsert(FaqEntry.objects.filter(pk__in=upsert_ids, status=FaqEntry.Status.ACTIVE).order_by("pk"))
    except FaqIndexUnavailable as error:
        # Expected while another process holds the local index folder: that process syncs on its next search.
        logger.warning(
            "FAQ index write deferred (%s upserts, %s deletes): %s", len(upsert_ids), len(delete_point_ids), error
        )
    except Exception:
        # The entries stay unindexed (health reports them); the next sync or rebuild_faq_index writes them.
        logger.exception("FAQ index write failed (%s upserts, %s deletes)", len(upsert_ids), len(delete_point_ids))


def _clean(question: str, answer: str) -> tuple[str, str]:
    question, answer = (question or "").strip(), (answer or "").strip()
    if not normalise_text(question):
        raise FaqError("질문을 입력해 주세요.")
    if not answer:
        raise FaqError("답변을 입력해 주세요.")
    return question, answer


def faq_search_bigrams(question: str, answer: str) -> list[str]:
    """The entry's `search_bigrams`: every writer sets them with its question and answer."""
    return text_bigrams(f"{question} {answer}")


def _active_duplicate(key: str, *, exclude_pk=None) -> FaqEntry | None:
    return FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE, question_key=key).exclude(pk=exclude_pk).first()


def faq_entry_create(
    *,
    question: str,
    answer: str,
    category: str = "",
    url: str = "",
    source: str = "",
    source_id: str = "",
    source_created_at: datetime | None = None,
    actor=None,
) -> FaqEntry:
    question, answer = _clean(question, answer)
    key = question_key(question)
    try:
        with transaction.atomic():
            duplicate = _active_duplicate(key)
            if duplicate:
                raise FaqError(f"같은 질문의 FAQ가 이미 있습니다 (#{duplicate.pk}). 기존 항목을 수정해 주세요.")
            entry = FaqEntry.objects.create(
                question=question,
                answer=answer,
                search_bigrams=faq_search_bigrams(question, answer),
                question_key=key,
                category=category.strip(),
                url=url.strip(),
                source=source.strip(),
                source_id=source_id.strip(),
                source_created_at=source_created_at or timezone.now(),
            )
            _record(entry, reason=FaqVersion.Reason.CREATED, action="faq.create", actor=actor)
            _index_after_commit(upsert_ids=[entry.pk])
    except IntegrityError as error:
        # A concurrent create of the same question won the partial unique constraint.
        raise FaqError("같은 질문의 FAQ가 방금 등록되었습니다. 목록을 새로 고쳐 주세요.") from error
    return entry


def faq_entry_update(
    entry_id: int, *, question: str, answer: str, category: str = "", url: str = "", actor=None
) -> FaqEntry:
    """Edit an active entry. A changed question makes a new entry and retires the old one (seed 001: a new id),
    so the index never keeps a vector of a question that no longer exists. Returns the entry now current."""
    question, answer = _clean(question, answer)
    key = question_key(question)
    try:
        with transaction.atomic():
            entry = FaqEntry.objects.select_for_update().filter(pk=entry_id).first()
            if entry is None:
                raise FaqError("FAQ를 찾을 수 없습니다.")
            if entry.status != FaqEntry.Status.ACTIVE:
                raise FaqError("폐기된 FAQ는 수정할 수 없습니다. 대체 항목을 수정해 주세요.")
            if key != entry.question_key:
                return _replace_with_new_question(entry, question, answer, key, category=category, url=url, actor=actor)
            changes = {
                name: value
                for name, value in {
                    "question": question,
                    "answer": answer,
                    "category": category.strip(),
                    "url": url.strip(),
                }.items()
                if getattr(entry, name) != value
            }
            if not changes:
                return entry
            for name, value in changes.items():
                setattr(entry, name, value)
            entry.search_bigrams = faq_search_bigrams(entry.question, entry.answer)
            entry.indexed_at = None
            entry.save(update_fields=[*changes, "search_bigrams", "indexed_at", "updated_at"])
            _record(
                entry,
                reason=FaqVersion.Reason.UPDATED,
                action="faq.update",
                actor=actor,
                data={"fields": sorted(changes)},
            )
            _index_after_commit(upsert_ids=[entry.pk])
    except IntegrityError as error:
        raise FaqError("같은 질문의 FAQ가 방금 등록되었습니다. 목록을 새로 고쳐 주세요.") from error
    return entry


def _replace_with_new_question(entry, question, answer, key, *, category, url, actor) -> FaqEntry:
    duplicate = _active_duplicate(key, exclude_pk=entry.pk)
    if duplicate:
        raise FaqError(f"바꾸려는 질문의 FAQ가 이미 있습니다 (#{duplicate.pk}).")
    replacement = FaqEntry.objects.create(
        question=question,
        answer=answer,
        search_bigrams=faq_search_bigrams(question, answer),
        question_key=key,
        category=category.strip(),
        url=url.strip(),
        source=entry.source,
        source_id=entry.source_id,
        source_created_at=timezone.now(),
    )
    retired = FaqEntry.objects.filter(pk=entry.pk, status=FaqEntry.Status.ACTIVE).update(
        status=FaqEntry.Status.RETIRED, replaced_by=replacement, indexed_at=None, updated_at=timezone.now()
    )
    if retired != 1:
        raise FaqError("다른 작업이 먼저 이 FAQ를 변경했습니다. 새로 고친 뒤 다시 시도해 주세요.")
    entry.refresh_from_db()
    _record(
        entry,
        reason=FaqVersion.Reason.SUPERSEDED,
        action="faq.retire",
        actor=actor,
        data={"replaced_by": replacement.pk},
    )
    _record(
        replacement,
        reason=FaqVersion.Reason.QUESTION_CHANGED,
        action="faq.create",
        actor=actor,
        data={"replaces": entry.pk},
    )
    _index_after_commit(upsert_ids=[replacement.pk], delete_point_ids=[entry.point_id])
    return replacement


def faq_entry_delete(entry_id: int, *, actor=None) -> None:
    faq_entries_delete_batch([entry_id], actor=actor)


def faq_entries_delete_batch(entry_ids, *, actor=None) -> int:
    """Delete entries (active or retired); their version history stays. Returns how many were deleted."""
    entry_ids = sorted({int(entry_id) for entry_id in entry_ids})
    with transaction.atomic():
        entries = list(FaqEntry.objects.select_for_update().filter(pk__in=entry_ids).order_by("pk"))
        for entry in entries:
            _record(entry, reason=FaqVersion.Reason.DELETED, action="faq.delete", actor=actor)
        point_ids = [entry.point_id for entry in entries]
        FaqEntry.objects.filter(pk__in=[entry.pk for entry in entries]).delete()
        _index_after_commit(delete_point_ids=point_ids)
    return len(entries)


# --- batch ingest -------------------------------------------------------------------------------------------


@dataclass
class FaqIngestReport:
    lines: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped_older: int = 0  # an equal or newer version is already stored (or comes later in the file)
    skipped_curated: int = 0  # staff edited, renamed or deleted the question after the row's source_created_at
    errors: list[tuple[int, str]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "lines": self.lines,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped_older": self.skipped_older,
            "skipped_curated": self.skipped_curated,
            "errors": [{"line": line, "error": error} for line, error in self.errors],
        }


@dataclass
class _IngestRow:
    line: int
    question: str
    answer: str
    key: str
    category: str
    url: str
    source: str
    source_id: str
    source_created_at: datetime


INGEST_KEYS = ("q", "a", "question", "answer", "source_created_at", "category", "url", "source", "source_id")


def _parse_line(line_number: int, raw: str) -> _IngestRow:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise FaqError(f"JSON이 아닙니다: {error.msg}") from error
    if not isinstance(data, dict):
        raise FaqError("한 줄에 JSON 객체 하나가 있어야 합니다.")
    unknown = sorted(key for key in data if key not in INGEST_KEYS)
    if unknown:
        # A misspelt key ("qestion", "source_created") would otherwise be dropped without a word.
        raise FaqError(f"알 수 없는 키: {', '.join(unknown)} (쓸 수 있는 키: {', '.join(INGEST_KEYS)})")
    question = data.get("question", data.get("q"))
    answer = data.get("answer", data.get("a"))
    if not isinstance(question, str) or not isinstance(answer, str):
        raise FaqError("q/a 또는 question/answer 문자열이 필요합니다.")
    question, answer = _clean(question, answer)
    raw_created = data.get("source_created_at")
    created = parse_datetime(raw_created) if isinstance(raw_created, str) else None
    if created is None:
        raise FaqError("source_created_at(ISO 8601 시각)이 필요합니다.")
    if timezone.is_naive(created):
        created = timezone.make_aware(created)
    return _IngestRow(
        line=line_number,
        question=question,
        answer=answer,
        key=question_key(question),
        category=str(data.get("category") or "").strip()[:100],
        url=str(data.get("url") or "").strip()[:500],
        source=str(data.get("source") or "").strip()[:100],
        source_id=str(data.get("source_id") or "").strip()[:200],
        source_created_at=created,
    )


def _no_progress(_stage: str, _done: int, _total: int) -> None:
    return None


def faq_ingest_jsonl(path: str | Path, *, actor=None, progress=None, total_lines: int = 0) -> FaqIngestReport:
    """Load FAQ entries from JSON Lines. For a repeated question only the newest `source_created_at` stays, in
    the file and against the store: an older version never overwrites a newer one. Curation counts as a version
    dated when it happened: a row is skipped when staff edited, renamed or deleted its question after the row's
    `source_created_at`, so loading the same file again never undoes their work. Bad lines are reported and
    skipped; the good ones are applied in one transaction. `progress(stage, done, total)` reports lines read
    ("읽기", total = `total_lines` when given) and questions written ("반영") for a command's progress bar."""
    progress = progress or _no_progress
    report = FaqIngestReport()
    newest: dict[str, _IngestRow] = {}
    for line_number, raw in _jsonl_lines(path):
        progress("읽기", line_number, total_lines)
        if not raw.strip():
            continue
        report.lines += 1
        try:
            row = _parse_line(line_number, raw)
        except FaqError as error:
            report.errors.append((line_number, str(error)))
            continue
        kept = newest.get(row.key)
        if kept is not None and kept.source_created_at > row.source_created_at:
            report.skipped_older += 1
            continue
        if kept is not None:
            report.skipped_older += 1  # the earlier line of the same question loses to this one
        newest[row.key] = row

    with transaction.atomic():
        existing = _lock_active_by_key(list(newest))
        curated_at = _last_curation_by_key(list(newest))
        upserts = []
        for written, row in enumerate(newest.values(), start=1):
            entry = existing.get(row.key)
            last_curation = curated_at.get(row.key)
            if last_curation is not None and row.source_created_at <= last_curation:
                report.skipped_curated += 1
            elif entry is None:
                entry = FaqEntry.objects.create(
                    question=row.question,
                    answer=row.answer,
                    search_bigrams=faq_search_bigrams(row.question, row.answer),
                    question_key=row.key,
                    category=row.category,
                    url=row.url,
                    source=row.source,
                    source_id=row.source_id,
                    source_created_at=row.source_created_at,
                )
                _record(
                    entry,
                    reason=FaqVersion.Reason.CREATED,
                    action="faq.ingest",
                    actor=actor,
                    data={"line": row.line},
                    origin=FaqVersion.Origin.FILE,
                )
                report.created += 1
                upserts.append(entry.pk)
            elif entry.source_created_at > row.source_created_at:
                report.skipped_older += 1
            elif _same_content(entry, row):
                report.unchanged += 1
            else:
                for name in ("question", "answer", "category", "url", "source", "source_id", "source_created_at"):
                    setattr(entry, name, getattr(row, name))
                entry.search_bigrams = faq_search_bigrams(entry.question, entry.answer)
                entry.indexed_at = None
                entry.save()
                _record(
                    entry,
                    reason=FaqVersion.Reason.UPDATED,
                    action="faq.ingest",
                    actor=actor,
                    data={"line": row.line},
                    origin=FaqVersion.Origin.FILE,
                )
                report.updated += 1
                upserts.append(entry.pk)
            progress("반영", written, len(newest))
        _index_after_commit(upsert_ids=upserts)
        analyze_after_bulk_write(FaqEntry, rows=report.created + report.updated)
    return report


def _jsonl_lines(path: str | Path):
    """(line number, text) of a UTF-8 JSON Lines file; a file in another encoding is refused as a whole."""
    try:
        with open(path, encoding="utf-8-sig") as lines:
            yield from enumerate(lines, start=1)
    except UnicodeDecodeError as error:
        raise FaqError(
            f"{Path(path).name}: UTF-8 텍스트가 아닙니다 ({error.start}번째 바이트). "
            "JSON Lines 파일을 UTF-8로 저장해 주세요."
        ) from error


def faq_jsonl_line_count(path: str | Path) -> int:
    """Lines in the file, for a progress bar's total (read once more as bytes: cheap next to embedding)."""
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


def _lock_active_by_key(keys: list[str]) -> dict[str, FaqEntry]:
    found = {}
    for start in range(0, len(keys), _LOCK_CHUNK):
        chunk = keys[start : start + _LOCK_CHUNK]
        active = FaqEntry.objects.select_for_update().filter(status=FaqEntry.Status.ACTIVE, question_key__in=chunk)
        found.update({entry.question_key: entry for entry in active.order_by("pk")})
    return found


def _last_curation_by_key(keys: list[str]) -> dict[str, datetime]:
    """When staff (or any writer other than a file load) last changed each question: created, edited, renamed
    away or deleted it. Deleted and renamed questions are found by their key in the version history."""
    found = {}
    for start in range(0, len(keys), _LOCK_CHUNK):
        chunk = keys[start : start + _LOCK_CHUNK]
        rows = (
            FaqVersion.objects.filter(question_key__in=chunk, origin=FaqVersion.Origin.CURATION)
            .values("question_key")
            .annotate(latest=Max("created_at"))
        )
        found.update({row["question_key"]: row["latest"] for row in rows})
    return found


def _same_content(entry: FaqEntry, row: _IngestRow) -> bool:
    names = ("question", "answer", "category", "url", "source", "source_id", "source_created_at")
    return all(getattr(entry, name) == getattr(row, name) for name in names)
