"""Re-ingesting an FAQ file never undoes staff curation: an edit, a changed question or a deletion is a version
newer than every file row dated before it; a file row wins only when its source_created_at is newer than the last
staff change of that question (real PostgreSQL, Qdrant local mode in a temporary folder)."""

import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from agent.knowledge.faq import faq_search
from agent.knowledge.faq_services import (
    INGEST_KEYS,
    faq_entries_delete_batch,
    faq_entry_delete,
    faq_entry_update,
    faq_ingest_jsonl,
)
from agent.models import FaqEntry, FaqVersion

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("knowledge_stores")]


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    def run(write, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return write(*args, **kwargs)

    return run


def _file(tmp_path, rows, name="faq.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows), encoding="utf-8")
    return path


PAST = "2025-04-08T11:13:00+09:00"
ROWS = [
    {"q": "발주 마감 시간은 몇 시인가요?", "a": "평일 오후 2시입니다.", "source_created_at": PAST},
    {"q": "반품 회수는 언제 하나요?", "a": "매주 화요일에 회수합니다.", "source_created_at": PAST},
    {"q": "정산일은 언제인가요?", "a": "매월 15일입니다.", "source_created_at": PAST},
]


def _active(question):
    return FaqEntry.objects.filter(question=question, status=FaqEntry.Status.ACTIVE).first()


def test_reloading_the_same_file_keeps_a_staff_edit(committed, tmp_path, admin_user):
    """The edit keeps the old source_created_at, yet the file row dated before the edit no longer overwrites it."""
    path = _file(tmp_path, ROWS)
    committed(faq_ingest_jsonl, path)
    entry = _active("발주 마감 시간은 몇 시인가요?")
    committed(
        faq_entry_update, entry.pk, question=entry.question, answer="평일 오후 3시로 바뀌었습니다.", actor=admin_user
    )

    report = committed(faq_ingest_jsonl, path)

    entry.refresh_from_db()
    assert entry.answer == "평일 오후 3시로 바뀌었습니다."
    assert (report.updated, report.skipped_curated, report.unchanged) == (0, 1, 2)
    assert faq_search("발주 마감 시간")[0].text.endswith("오후 3시로 바뀌었습니다.")


def test_a_renamed_question_does_not_come_back_beside_its_replacement(committed, tmp_path, admin_user):
    path = _file(tmp_path, ROWS)
    committed(faq_ingest_jsonl, path)
    entry = _active("반품 회수는 언제 하나요?")
    replacement = committed(
        faq_entry_update, entry.pk, question="반품 회수 요일은 언제인가요?", answer=entry.answer, actor=admin_user
    )

    report = committed(faq_ingest_jsonl, path)

    assert _active("반품 회수는 언제 하나요?") is None
    assert list(FaqEntry.objects.filter(status="active").values_list("pk", flat=True).order_by("pk"))[-1] == (
        replacement.pk
    )
    assert report.created == 0 and report.skipped_curated == 1


def test_deleted_and_batch_deleted_entries_do_not_come_back(committed, tmp_path, admin_user):
    path = _file(tmp_path, ROWS)
    committed(faq_ingest_jsonl, path)
    committed(faq_entry_delete, _active("정산일은 언제인가요?").pk, actor=admin_user)
    committed(
        faq_entries_delete_batch,
        [_active("발주 마감 시간은 몇 시인가요?").pk, _active("반품 회수는 언제 하나요?").pk],
        actor=admin_user,
    )

    report = committed(faq_ingest_jsonl, path)

    assert FaqEntry.objects.count() == 0
    assert (report.created, report.skipped_curated) == (0, 3)
    # The history is kept: three deletion snapshots, each remembering its question.
    assert FaqVersion.objects.filter(reason="deleted").count() == 3


def test_a_file_row_newer_than_the_staff_change_wins(committed, tmp_path, admin_user):
    """The rule is by date, not "staff always wins": a row written after the deletion brings the question back,
    and a row written after an edit replaces the edit."""
    committed(faq_ingest_jsonl, _file(tmp_path, ROWS))
    committed(faq_entry_delete, _active("정산일은 언제인가요?").pk, actor=admin_user)
    edited = _active("발주 마감 시간은 몇 시인가요?")
    committed(faq_entry_update, edited.pk, question=edited.question, answer="오후 3시", actor=admin_user)
    later = (timezone.now() + timedelta(minutes=5)).isoformat()

    report = committed(
        faq_ingest_jsonl,
        _file(
            tmp_path,
            [
                {"q": "정산일은 언제인가요?", "a": "매월 20일입니다.", "source_created_at": later},
                {"q": "발주 마감 시간은 몇 시인가요?", "a": "오후 4시", "source_created_at": later},
            ],
            "newer.jsonl",
        ),
    )

    assert (report.created, report.updated, report.skipped_curated) == (1, 1, 0)
    assert _active("정산일은 언제인가요?").answer == "매월 20일입니다."
    assert _active("발주 마감 시간은 몇 시인가요?").answer == "오후 4시"


def test_versions_say_whether_a_file_or_curation_made_them(committed, tmp_path, admin_user):
    committed(faq_ingest_jsonl, _file(tmp_path, ROWS[:1]))
    entry = _active(ROWS[0]["q"])
    committed(faq_entry_update, entry.pk, question=entry.question, answer="오후 3시", actor=admin_user)

    origins = list(FaqVersion.objects.filter(entry=entry).order_by("id").values_list("reason", "origin"))
    assert origins == [("created", "file"), ("updated", "curation")]
    assert set(FaqVersion.objects.values_list("question_key", flat=True)) == {entry.question_key}


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_ingest_command_draws_a_progress_bar_on_a_terminal(tmp_path):
    terminal, piped = _Terminal(), io.StringIO()
    call_command("ingest_faq", str(_file(tmp_path, ROWS)), stderr=terminal, stdout=io.StringIO())
    call_command("ingest_faq", str(_file(tmp_path, ROWS, "again.jsonl")), stderr=piped, stdout=io.StringIO())

    drawn = terminal.getvalue()
    assert "FAQ 적재 · 읽기" in drawn and "FAQ 적재 · 반영" in drawn and "행/s" in drawn and "3/3" in drawn
    assert piped.getvalue() == ""  # logs and pipes get only the summary line


def test_an_unknown_key_is_named_and_its_line_not_loaded(tmp_path):
    path = _file(tmp_path, [{"qestion": "오타 난 키", "a": "답", "source_created_at": PAST}, *ROWS])

    report = faq_ingest_jsonl(path)

    assert report.created == 3
    assert report.errors == [(1, f"알 수 없는 키: qestion (쓸 수 있는 키: {', '.join(INGEST_KEYS)})")]
