"""FAQ training uploads: a spreadsheet of question / answer rows becomes FAQ entries, except rows whose question
is the same as or similar to an existing FAQ, which wait as conflicts for staff review.

    upload (.xlsx / .csv) → TrainingJob(queued) + one TrainingJobRow per row → task: for each row
        empty → SKIPPED_EMPTY · repeated in the file or already stored as is → SKIPPED_DUPLICATE
        same normalised question, or dense score ≥ FAQ_TRAINING_CONFLICT_SCORE → CONFLICT (TrainingConflict)
        otherwise → ADDED at once (faq_entry_create) · a row the store refuses → FAILED with the reason
    → review: keep_existing / add_new / update_existing / replace_existing, and restore from the snapshot

Every FAQ write goes through agent.knowledge.faq_services (versions, audit rows, index after commit); job status
changes only through `training_job_transition` (compare-and-set).
"""

import csv
import hashlib
import io
import logging
import zipfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agent.knowledge.embeddings import EmbeddingError, normalise_text
from agent.knowledge.faq import faq_similar_questions
from agent.knowledge.faq_index import FaqIndexUnavailable
from agent.knowledge.faq_services import (
    FaqError,
    faq_entries_delete_batch,
    faq_entry_create,
    faq_entry_update,
    question_key,
)
from agent.models import FaqEntry, FaqVersion, TrainingConflict, TrainingJob, TrainingJobRow
from monitoring.services import audit_record

logger = logging.getLogger(__name__)

# Column names staff may use, in English (seed 001) or Korean, mapped to the row field.
COLUMN_ALIASES = {
    "question": "question", "q": "question", "질문": "question",
    "answer": "answer", "a": "answer", "답변": "answer",
    "category": "category", "분류": "category", "카테고리": "category",
    "url": "url", "링크": "url",
    "source": "source", "출처": "source",
}  # fmt: skip
REQUIRED_COLUMNS = ("question", "answer")
MAX_ROWS = 50_000
_CHUNK_ROWS = 25  # rows per transaction: the progress the page shows moves this often
_CANDIDATES = 3
_FIELD_LIMITS = {"category": 100, "url": 500, "source": 100}
_url_valid = URLValidator(schemes=["http", "https"])

_STATUS_COUNTER = {
    TrainingJobRow.Status.ADDED: "added_count",
    TrainingJobRow.Status.CONFLICT: "conflict_count",
    TrainingJobRow.Status.SKIPPED_DUPLICATE: "skipped_count",
    TrainingJobRow.Status.SKIPPED_EMPTY: "skipped_count",
    TrainingJobRow.Status.FAILED: "failed_count",
}
# Which job statuses each status may be entered from: the one table every transition is checked against.
_TRANSITIONS = {
    TrainingJob.Status.RUNNING: {TrainingJob.Status.QUEUED, TrainingJob.Status.RUNNING},
    TrainingJob.Status.REVIEW: {TrainingJob.Status.RUNNING},
    TrainingJob.Status.DONE: {TrainingJob.Status.RUNNING, TrainingJob.Status.REVIEW},
    TrainingJob.Status.FAILED: {TrainingJob.Status.QUEUED, TrainingJob.Status.RUNNING},
    TrainingJob.Status.QUEUED: {TrainingJob.Status.FAILED},  # staff run a failed job again
}
DESTRUCTIVE_ACTIONS = {TrainingConflict.Action.UPDATE_EXISTING, TrainingConflict.Action.REPLACE_EXISTING}
ACTION_ALIASES = {"skip_new": TrainingConflict.Action.KEEP_EXISTING, "create_new": TrainingConflict.Action.ADD_NEW}


class TrainingFileInvalid(ValueError):
    """The uploaded file cannot be read as a training spreadsheet; the message tells staff what to fix."""


class TrainingError(ValueError):
    """A review action cannot be applied (the conflict or the FAQ changed meanwhile); the message is for staff."""


def conflict_score_threshold() -> float:
    return settings.FAQ_TRAINING_CONFLICT_SCORE


# --- reading the file -----------------------------------------------------------------------------------------


@dataclass
class TrainingRowData:
    row_number: int
    question: str
    answer: str
    category: str = ""
    url: str = ""
    source: str = ""


def training_file_read(file_name: str, data: bytes) -> list[TrainingRowData]:
    """Rows of an .xlsx (first sheet) or .csv (UTF-8 or CP949) file with a header row. Raises TrainingFileInvalid
    naming what is wrong: the format, the encoding, missing columns or unknown ones."""
    suffix = Path(file_name).suffix.lower()
    if suffix == ".xlsx":
        header, records = _xlsx_records(data)
    elif suffix == ".csv":
        header, records = _csv_records(data)
    else:
        raise TrainingFileInvalid(f"{file_name}: 엑셀(.xlsx) 또는 CSV(.csv) 파일만 올릴 수 있습니다.")
    fields = _header_fields(header)
    rows = []
    for row_number, cells in records:
        values = {field: _cell_text(cell) for field, cell in zip(fields, cells, strict=False) if field}
        if not any(values.values()):
            continue
        rows.append(TrainingRowData(row_number=row_number, **values))
        if len(rows) > MAX_ROWS:
            raise TrainingFileInvalid(f"행이 너무 많습니다. 한 번에 {MAX_ROWS:,}행까지 올릴 수 있습니다.")
    if not rows:
        raise TrainingFileInvalid("머리글 아래에 데이터 행이 없습니다.")
    return rows


def _xlsx_records(data: bytes):
    from openpyxl import load_workbook

    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as error:
        raise TrainingFileInvalid(
            "엑셀(.xlsx) 파일로 읽을 수 없습니다. 엑셀에서 'Excel 통합 문서(.xlsx)'로 다시 저장해 주세요."
        ) from error
    try:
        sheet = workbook.worksheets[0]
        values = sheet.iter_rows(values_only=True)
        header = next(values, None) or ()
        records = [(number, list(cells)) for number, cells in enumerate(values, start=2)]
    finally:
        workbook.close()
    return [_cell_text(cell) for cell in header], records


def _csv_records(data: bytes):
    for encoding in ("utf-8-sig", "cp949"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        raise TrainingFileInvalid(
            "CSV 파일의 글자 인코딩을 읽을 수 없습니다. UTF-8 또는 CP949(엑셀의 'CSV(쉼표로 분리)')로 저장해 주세요."
        )
    if "\x00" in text:
        raise TrainingFileInvalid("CSV 텍스트 파일이 아닙니다 (이진 데이터가 들어 있습니다).")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, [])
        records = [(reader.line_num, cells) for cells in reader]
    except csv.Error as error:
        raise TrainingFileInvalid(f"CSV 형식이 잘못되었습니다: {error}") from error
    return header, records


def _header_fields(header: list[str]) -> list[str | None]:
    names = [str(name or "").strip() for name in header]
    fields = [COLUMN_ALIASES.get(name.lower()) for name in names]
    unknown = [name for name, field in zip(names, fields, strict=True) if name and field is None]
    missing = [column for column in REQUIRED_COLUMNS if column not in fields]
    problems = []
    if missing:
        problems.append(f"필수 열이 없습니다: {', '.join(missing)}")
    if unknown:
        problems.append(f"알 수 없는 열: {', '.join(unknown)}")
    if problems:
        allowed = "question(질문), answer(답변), category(분류), url, source(출처)"
        raise TrainingFileInvalid(f"{' · '.join(problems)}. 첫 행의 머리글은 {allowed} 중에서 써 주세요.")
    repeated = sorted({field for field in fields if field and fields.count(field) > 1})
    if repeated:
        raise TrainingFileInvalid(f"같은 열이 두 번 있습니다: {', '.join(repeated)}")
    return fields


def _cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).replace("\x00", "").strip()


# --- the job --------------------------------------------------------------------------------------------------


def training_job_create(*, file_name: str, data: bytes, actor) -> TrainingJob:
    """Read the file (TrainingFileInvalid when it cannot be used), store the job and its rows, and start the task
    once committed."""
    rows = training_file_read(file_name, data)
    with transaction.atomic():
        job = TrainingJob.objects.create(
            file_name=Path(file_name).name[:255],
            file_sha256=hashlib.sha256(data).hexdigest(),
            rows_total=len(rows),
            created_by=actor if getattr(actor, "pk", None) else None,
        )
        TrainingJobRow.objects.bulk_create(
            [
                TrainingJobRow(
                    job=job,
                    row_number=row.row_number,
                    question=row.question,
                    question_key=question_key(row.question),
                    answer=row.answer,
                    category=row.category[:200],
                    url=row.url[:1000],
                    source=row.source[:200],
                )
                for row in rows
            ],
            batch_size=1000,
        )
        audit_record(
            actor_kind="staff",
            actor_id=getattr(actor, "pk", None),
            action="training.upload",
            target=job,
            data={"file_name": job.file_name, "rows": len(rows)},
        )
        transaction.on_commit(lambda: _dispatch(job.pk))
    return job


def _dispatch(job_id: int) -> None:
    from agent.tasks import training_job_run_task

    training_job_run_task.delay(job_id)


def training_job_transition(job_id: int, *, to: str, **fields) -> bool:
    """Move the job to `to` if its current status allows it (compare-and-set). Returns whether it moved."""
    allowed = _TRANSITIONS[to]
    return bool(TrainingJob.objects.filter(pk=job_id, status__in=allowed).update(status=to, **fields))


def training_job_retry(*, job: TrainingJob, actor) -> bool:
    """Run a failed job again: rows already done stay done, the task continues with the rest."""
    with transaction.atomic():
        moved = training_job_transition(job.pk, to=TrainingJob.Status.QUEUED, error="", finished_at=None)
        if moved:
            audit_record(actor_kind="staff", actor_id=actor.pk, action="training.retry", target=job)
            transaction.on_commit(lambda: _dispatch(job.pk))
    return moved


def training_job_run(job_id: int) -> str:
    """Process the job's pending rows (idempotent: a redelivered or second run only takes rows still pending,
    locked with SKIP LOCKED). Returns the job's status afterwards."""
    if not training_job_transition(job_id, to=TrainingJob.Status.RUNNING, started_at=timezone.now()):
        job = TrainingJob.objects.filter(pk=job_id).first()
        return job.status if job else "missing"
    job = TrainingJob.objects.get(pk=job_id)
    try:
        while _process_chunk(job):
            pass
    except (FaqIndexUnavailable, EmbeddingError) as error:
        logger.warning("Training job %s stopped: %s", job_id, error)
        training_job_fail(job_id, reason=f"FAQ 색인을 사용할 수 없어 유사 질문을 확인하지 못했습니다: {error}")
        return TrainingJob.Status.FAILED
    except Exception as error:
        # The chunk in progress rolled back; the job must not stay "running" with nobody working on it.
        logger.exception("Training job %s failed", job_id)
        training_job_fail(job_id, reason=f"처리 중 오류가 났습니다 ({type(error).__name__}). 다시 실행할 수 있습니다.")
        return TrainingJob.Status.FAILED
    return _finish(job_id)


def training_job_fail(job_id: int, *, reason: str) -> None:
    with transaction.atomic():
        if training_job_transition(job_id, to=TrainingJob.Status.FAILED, error=reason, finished_at=timezone.now()):
            job = TrainingJob.objects.get(pk=job_id)
            audit_record(
                actor_kind="system", actor_id=None, action="training.fail", target=job, data={"reason": reason}
            )


def _finish(job_id: int) -> str:
    with transaction.atomic():
        open_conflicts = TrainingConflict.objects.filter(job_id=job_id, status=TrainingConflict.Status.OPEN).exists()
        target = TrainingJob.Status.REVIEW if open_conflicts else TrainingJob.Status.DONE
        if training_job_transition(job_id, to=target, finished_at=timezone.now()):
            job = TrainingJob.objects.get(pk=job_id)
            audit_record(
                actor_kind="system",
                actor_id=None,
                action="training.finish",
                target=job,
                data={
                    "status": target,
                    "added": job.added_count,
                    "conflicts": job.conflict_count,
                    "skipped": job.skipped_count,
                    "failed": job.failed_count,
                },
            )
    return TrainingJob.objects.get(pk=job_id).status


def _process_chunk(job: TrainingJob) -> bool:
    """One transaction over the next pending rows; False when none are left."""
    with transaction.atomic():
        rows = list(
            TrainingJobRow.objects.select_for_update(skip_locked=True)
            .filter(job=job, status=TrainingJobRow.Status.PENDING)
            .order_by("row_number")[:_CHUNK_ROWS]
        )
        if not rows:
            return False
        counters = dict.fromkeys(set(_STATUS_COUNTER.values()), 0)
        for row in rows:
            _row_process(job, row)
            counters[_STATUS_COUNTER[row.status]] += 1
        TrainingJob.objects.filter(pk=job.pk).update(
            rows_done=F("rows_done") + len(rows), **{name: F(name) + count for name, count in counters.items()}
        )
    return True


def _row_process(job: TrainingJob, row: TrainingJobRow) -> None:
    if not normalise_text(row.question) or not row.answer.strip():
        _row_set(row, TrainingJobRow.Status.SKIPPED_EMPTY, "질문 또는 답변이 비어 있습니다.")
        return
    problem = _row_problem(row)
    if problem:
        _row_set(row, TrainingJobRow.Status.FAILED, problem)
        return
    key = question_key(row.question)
    earlier = _earlier_row_with_key(job, row, key)
    if earlier is not None:
        _row_set(row, TrainingJobRow.Status.SKIPPED_DUPLICATE, f"파일의 {earlier}행과 같은 질문입니다.")
        return
    same = FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE, question_key=key).first()
    if same is not None and same.answer.strip() == row.answer.strip():
        _row_set(row, TrainingJobRow.Status.SKIPPED_DUPLICATE, f"같은 질문과 답변의 FAQ #{same.pk}가 이미 있습니다.")
        return
    similar = _similar_entries(row.question, exclude=same)
    if same is not None:
        _conflict_open(job, row, same, TrainingConflict.Match.SAME_QUESTION, 1.0, similar)
        return
    if similar:
        best, score = similar[0]
        _conflict_open(job, row, best, TrainingConflict.Match.SIMILAR, score, similar[1:])
        return
    try:
        with transaction.atomic():
            entry = _entry_from_row(job, row)
    except FaqError as error:
        _row_set(row, TrainingJobRow.Status.FAILED, str(error))
        return
    row.entry = entry
    _row_set(row, TrainingJobRow.Status.ADDED, "")


def _row_problem(row: TrainingJobRow) -> str:
    for name, limit in _FIELD_LIMITS.items():
        if len(getattr(row, name)) > limit:
            return f"{name}: {limit}자를 넘습니다."
    if row.url:
        try:
            _url_valid(row.url)
        except ValidationError:
            return f"url: 올바른 http(s) 주소가 아닙니다 ({row.url[:80]})."
    return ""


def _earlier_row_with_key(job: TrainingJob, row: TrainingJobRow, key: str) -> int | None:
    earlier = (
        TrainingJobRow.objects.filter(job=job, question_key=key, row_number__lt=row.row_number)
        .exclude(status__in=[TrainingJobRow.Status.SKIPPED_EMPTY, TrainingJobRow.Status.FAILED])
        .order_by("row_number")
        .values_list("row_number", flat=True)
        .first()
    )
    return earlier


def _similar_entries(question: str, *, exclude: FaqEntry | None) -> list[tuple[FaqEntry, float]]:
    """Active entries at or above the conflict score, best first (the index may lag: entries are re-read)."""
    hits = faq_similar_questions([question], min_score=conflict_score_threshold(), limit=_CANDIDATES + 1)[0]
    entries = FaqEntry.objects.in_bulk([faq_id for faq_id, _ in hits])
    found = []
    for faq_id, score in hits:
        entry = entries.get(faq_id)
        if entry is not None and entry.status == FaqEntry.Status.ACTIVE and entry != exclude:
            found.append((entry, round(score, 4)))
    return found[:_CANDIDATES]


def _conflict_open(job, row, existing: FaqEntry, match: str, score: float, others) -> None:
    TrainingConflict.objects.create(
        job=job,
        row=row,
        existing=existing,
        existing_snapshot=_entry_view(existing),
        match=match,
        score=round(score, 4),
        candidates=[{"faq_id": entry.pk, "question": entry.question, "score": score} for entry, score in others],
    )
    label = "같은 질문" if match == TrainingConflict.Match.SAME_QUESTION else f"비슷한 질문 (유사도 {score:.3f})"
    _row_set(row, TrainingJobRow.Status.CONFLICT, f"기존 FAQ #{existing.pk}와 {label}입니다. 검토가 필요합니다.")


def _entry_view(entry: FaqEntry) -> dict:
    return {"id": entry.pk, "question": entry.question, "answer": entry.answer, "category": entry.category}


def _row_set(row: TrainingJobRow, status: str, reason: str) -> None:
    row.status, row.reason = status, reason
    row.save(update_fields=["status", "reason", "entry"])


def _entry_from_row(job: TrainingJob, row: TrainingJobRow) -> FaqEntry:
    return faq_entry_create(
        question=row.question,
        answer=row.answer,
        category=row.category,
        url=row.url,
        source=row.source or f"training:{job.file_name}"[:100],
        source_id=f"training:{job.pk}:{row.row_number}",
        actor=job.created_by,
    )


# --- review ---------------------------------------------------------------------------------------------------


def training_conflict_resolve(*, conflict_id: int, action: str, actor) -> TrainingConflict:
    """Apply one review action in one transaction with its audit row. `update_existing` edits the existing FAQ
    (a changed question retires it and creates a new entry); `replace_existing` deletes it and adds the row.
    Before either, the existing FAQ's version snapshot is recorded on the conflict so it can be restored."""
    action = ACTION_ALIASES.get(action, action)
    if action not in TrainingConflict.Action.values:
        raise TrainingError(f"알 수 없는 조치입니다: {action}")
    try:
        with transaction.atomic():
            conflict = _conflict_locked(conflict_id, TrainingConflict.Status.OPEN)
            row, job, existing = conflict.row, conflict.job, conflict.existing
            result, snapshot = None, None
            if action in DESTRUCTIVE_ACTIONS:
                existing = _existing_active(conflict)
                snapshot = existing.versions.order_by("-id").first()
            if action == TrainingConflict.Action.ADD_NEW:
                result = _entry_from_row(job, row)
            elif action == TrainingConflict.Action.UPDATE_EXISTING:
                result = faq_entry_update(
                    existing.pk,
                    question=row.question,
                    answer=row.answer,
                    category=row.category or existing.category,
                    url=row.url or existing.url,
                    actor=actor,
                )
                if result.pk != existing.pk:  # the question changed: the retirement's snapshot is the old FAQ
                    snapshot = existing.versions.order_by("-id").first()
            elif action == TrainingConflict.Action.REPLACE_EXISTING:
                faq_entries_delete_batch([existing.pk], actor=actor)
                snapshot = FaqVersion.objects.filter(entry_ref=existing.pk, reason=FaqVersion.Reason.DELETED).latest(
                    "id"
                )
                result = _entry_from_row(job, row)
            conflict.status, conflict.action = TrainingConflict.Status.RESOLVED, action
            conflict.result_entry, conflict.snapshot_version = result, snapshot
            conflict.resolved_by, conflict.resolved_at = actor, timezone.now()
            # Not a full save: a replaced FAQ was just deleted, and `existing` has been set null in the database.
            conflict.save(
                update_fields=["status", "action", "result_entry", "snapshot_version", "resolved_by", "resolved_at"]
            )
            audit_record(
                actor_kind="staff",
                actor_id=actor.pk,
                action="training.resolve",
                target=conflict,
                data={
                    "action": action,
                    "existing": conflict.existing_id,
                    "result": result.pk if result else None,
                    "row": row.row_number,
                },
            )
            _close_job_when_reviewed(job.pk)
    except FaqError as error:
        raise TrainingError(str(error)) from error
    return conflict


def training_conflicts_resolve(*, conflict_ids, action: str, actor) -> tuple[int, list[str]]:
    """Bulk review: each conflict in its own transaction, so one refusal does not undo the others.
    Returns (resolved, errors)."""
    resolved, errors = 0, []
    for conflict_id in sorted({int(conflict_id) for conflict_id in conflict_ids}):
        try:
            training_conflict_resolve(conflict_id=conflict_id, action=action, actor=actor)
        except TrainingError as error:
            errors.append(f"충돌 #{conflict_id}: {error}")
        else:
            resolved += 1
    return resolved, errors


def training_conflict_restore(*, conflict_id: int, actor) -> FaqEntry:
    """Undo an update or replacement: the FAQ the action wrote is removed (or, when it is the same entry, set
    back) and the existing FAQ comes back from its version snapshot. Returns the restored entry."""
    try:
        with transaction.atomic():
            conflict = _conflict_locked(conflict_id, TrainingConflict.Status.RESOLVED)
            if conflict.action not in DESTRUCTIVE_ACTIONS or conflict.snapshot_version is None:
                raise TrainingError("되돌릴 스냅숏이 없는 조치입니다.")
            snapshot = conflict.snapshot_version.snapshot
            result = conflict.result_entry
            fields = {
                "question": snapshot["question"],
                "answer": snapshot["answer"],
                "category": snapshot.get("category", ""),
                "url": snapshot.get("url", ""),
            }
            if result is not None and result.pk == snapshot["id"] and result.status == FaqEntry.Status.ACTIVE:
                restored = faq_entry_update(result.pk, **fields, actor=actor)
            else:
                if result is not None:
                    faq_entries_delete_batch([result.pk], actor=actor)
                restored = faq_entry_create(
                    **fields, source=snapshot.get("source", ""), source_id=snapshot.get("source_id", ""), actor=actor
                )
            conflict.status = TrainingConflict.Status.RESTORED
            conflict.save(update_fields=["status"])
            audit_record(
                actor_kind="staff",
                actor_id=actor.pk,
                action="training.restore",
                target=conflict,
                data={
                    "restored": restored.pk,
                    "from_version": conflict.snapshot_version_id,
                    "removed": result and result.pk,
                },
            )
    except FaqError as error:
        raise TrainingError(str(error)) from error
    return restored


def _conflict_locked(conflict_id: int, status: str) -> TrainingConflict:
    conflict = (
        TrainingConflict.objects.select_for_update(of=("self",))
        .select_related("row", "job", "existing", "result_entry", "snapshot_version")
        .filter(pk=conflict_id)
        .first()
    )
    if conflict is None:
        raise TrainingError("충돌 항목을 찾을 수 없습니다.")
    if conflict.status != status:
        raise TrainingError(f"이미 '{conflict.get_status_display()}' 상태입니다. 새로 고친 뒤 다시 확인해 주세요.")
    return conflict


def _existing_active(conflict: TrainingConflict) -> FaqEntry:
    existing = FaqEntry.objects.select_for_update().filter(pk=conflict.existing_id).first()
    if existing is None or existing.status != FaqEntry.Status.ACTIVE:
        raise TrainingError("기존 FAQ가 그사이 삭제되었거나 바뀌었습니다. '새 FAQ로 추가' 또는 '기존 유지'를 고르세요.")
    return existing


def _close_job_when_reviewed(job_id: int) -> None:
    reviewed = not TrainingConflict.objects.filter(job_id=job_id, status=TrainingConflict.Status.OPEN).exists()
    if reviewed and training_job_transition(job_id, to=TrainingJob.Status.DONE, finished_at=timezone.now()):
        job = TrainingJob.objects.get(pk=job_id)
        audit_record(actor_kind="system", actor_id=None, action="training.reviewed", target=job)
