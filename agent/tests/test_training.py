"""FAQ training uploads: reading the spreadsheet, the per-row outcomes, conflicts with existing FAQs and their
review (real PostgreSQL, Qdrant local mode in a temporary folder, the local USE embedding)."""

import io
import re

import pytest
from openpyxl import Workbook

from agent.knowledge.faq_services import faq_entry_create
from agent.knowledge.training import (
    TrainingError,
    TrainingFileInvalid,
    training_conflict_resolve,
    training_conflict_restore,
    training_conflicts_resolve,
    training_file_read,
    training_job_create,
    training_job_transition,
)
from agent.models import FaqEntry, FaqVersion, TrainingConflict, TrainingJob, TrainingJobRow
from monitoring.models import AuditEvent

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("knowledge_stores")]


def csv_bytes(*lines, encoding="utf-8"):
    return ("\n".join(lines) + "\n").encode(encoding)


def xlsx_bytes(rows):
    workbook = Workbook()
    for row in rows:
        workbook.active.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    def run(write, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return write(*args, **kwargs)

    return run


@pytest.fixture
def stored(committed):
    """Two FAQs already in the store."""
    return {
        "deadline": committed(
            faq_entry_create, question="발주 마감 시간은 몇 시인가요?", answer="평일 오후 2시입니다."
        ),
        "invoice": committed(
            faq_entry_create, question="세금계산서는 언제 발행되나요?", answer="매월 5일에 발행됩니다."
        ),
    }


def upload(committed, admin_user, data, name="training.csv"):
    job = committed(training_job_create, file_name=name, data=data, actor=admin_user)
    job.refresh_from_db()
    return job


def statuses(job):
    return dict(job.rows.values_list("row_number", "status"))


# --- reading the file -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("faq.csv", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe\xfa", "인코딩"),
        ("faq.xlsx", b"question,answer\n", "엑셀(.xlsx) 파일로 읽을 수 없습니다"),
        ("faq.txt", b"question,answer\n", ".xlsx"),
        ("faq.csv", csv_bytes("질문내용,답변"), "필수 열이 없습니다: question · 알 수 없는 열: 질문내용"),
        ("faq.csv", csv_bytes("question,answer,memo", "a,b,c"), "알 수 없는 열: memo"),
        ("faq.csv", csv_bytes("question,answer"), "데이터 행이 없습니다"),
    ],
)
def test_a_bad_file_gets_a_korean_message_naming_the_problem(name, data, message):
    with pytest.raises(TrainingFileInvalid, match=re.escape(message)):
        training_file_read(name, data)


def test_csv_in_cp949_and_xlsx_with_korean_headers_are_read():
    cp949 = csv_bytes("질문,답변,분류", "반품은 어떻게 하나요?,회수 신청 후 진행합니다.,반품", encoding="cp949")
    xlsx = xlsx_bytes([["question", "answer", "url"], ["정산일은?", "15일", "https://example.com/a"], [None, None]])

    assert [(r.row_number, r.question, r.category) for r in training_file_read("a.csv", cp949)] == [
        (2, "반품은 어떻게 하나요?", "반품")
    ]
    assert [(r.row_number, r.url) for r in training_file_read("a.xlsx", xlsx)] == [(2, "https://example.com/a")]


# --- processing ------------------------------------------------------------------------------------------------


def test_rows_are_added_skipped_failed_or_held_as_conflicts(committed, admin_user, stored):
    data = csv_bytes(
        "question,answer,category,url",
        "반품 회수는 언제 하나요?,매주 화요일에 회수합니다.,반품,",  # 2: new
        "발주 마감 시간은 몇 시인가요?,평일 오후 3시입니다.,발주,",  # 3: same question, other answer
        "세금계산서는 언제 발행되나요?,매월 5일에 발행됩니다.,,",  # 4: stored as is
        "반품 회수는 언제 하나요?,화요일,,",  # 5: repeats row 2
        ",답변만 있음,,",  # 6: empty question
        "입점 서류는 무엇인가요?,사업자등록증,,ftp://nope",  # 7: bad url
        "세금계산서 발행일은 언제인가요?,5일,,",  # 8: rewording of a stored question
    )

    job = upload(committed, admin_user, data)

    assert statuses(job) == {
        2: "ADDED",
        3: "CONFLICT",
        4: "SKIPPED_DUPLICATE",
        5: "SKIPPED_DUPLICATE",
        6: "SKIPPED_EMPTY",
        7: "FAILED",
        8: "CONFLICT",
    }
    assert job.status == TrainingJob.Status.REVIEW
    assert (
        job.rows_total,
        job.rows_done,
        job.added_count,
        job.conflict_count,
        job.skipped_count,
        job.failed_count,
    ) == (
        7,
        7,
        1,
        2,
        3,
        1,
    )
    same = TrainingConflict.objects.get(row__row_number=3)
    assert (same.match, same.score, same.existing_id) == ("same_question", 1.0, stored["deadline"].pk)
    similar = TrainingConflict.objects.get(row__row_number=8)
    assert similar.match == "similar" and similar.existing_id == stored["invoice"].pk and similar.score >= 0.85
    assert "파일의 2행" in job.rows.get(row_number=5).reason
    assert "url" in job.rows.get(row_number=7).reason
    added = job.rows.get(row_number=2).entry
    assert added.source_id == f"training:{job.pk}:2" and added.indexed_at is not None
    assert AuditEvent.objects.filter(action="training.upload", target_id=str(job.pk)).exists()


def test_a_job_without_conflicts_is_done_and_running_it_again_changes_nothing(committed, admin_user):
    job = upload(committed, admin_user, csv_bytes("question,answer", "배송비는 누가 부담하나요?,공급사 부담입니다."))

    assert job.status == TrainingJob.Status.DONE and job.added_count == 1
    from agent.knowledge.training import training_job_run

    assert training_job_run(job.pk) == TrainingJob.Status.DONE
    assert FaqEntry.objects.count() == 1


def test_transitions_are_compare_and_set(committed, admin_user):
    job = upload(committed, admin_user, csv_bytes("question,answer", "배송비는 누가 부담하나요?,공급사 부담입니다."))

    assert not training_job_transition(job.pk, to=TrainingJob.Status.RUNNING)  # done is final
    assert not training_job_transition(job.pk, to=TrainingJob.Status.QUEUED)  # only a failed job runs again


def test_an_unavailable_index_fails_the_job_with_a_message_and_adds_nothing(committed, admin_user, monkeypatch):
    from agent.knowledge import training
    from agent.knowledge.faq_index import FaqIndexUnavailable

    def unavailable(*args, **kwargs):
        raise FaqIndexUnavailable("held by another process")

    monkeypatch.setattr(training, "faq_similar_questions", unavailable)
    job = upload(committed, admin_user, csv_bytes("question,answer", "배송비는 누가 부담하나요?,공급사 부담입니다."))

    assert job.status == TrainingJob.Status.FAILED and "FAQ 색인을 사용할 수 없어" in job.error
    assert FaqEntry.objects.count() == 0 and job.rows.get().status == TrainingJobRow.Status.PENDING


# --- review ---------------------------------------------------------------------------------------------------


@pytest.fixture
def conflicted(committed, admin_user, stored):
    data = csv_bytes(
        "question,answer",
        "발주 마감 시간은 몇 시인가요?,평일 오후 3시입니다.",
        "세금계산서 발행일은 언제인가요?,매월 10일에 발행됩니다.",
    )
    job = upload(committed, admin_user, data)
    return job, {conflict.row.row_number: conflict for conflict in job.conflicts.select_related("row")}


def test_keep_existing_discards_the_row_and_closes_the_job(committed, admin_user, conflicted, stored):
    job, conflicts = conflicted

    resolved, errors = committed(
        training_conflicts_resolve, conflict_ids=[c.pk for c in conflicts.values()], action="skip_new", actor=admin_user
    )

    assert (resolved, errors) == (2, [])
    job.refresh_from_db()
    assert job.status == TrainingJob.Status.DONE
    assert FaqEntry.objects.filter(status="active").count() == 2
    assert set(TrainingConflict.objects.values_list("action", flat=True)) == {"keep_existing"}


def test_update_existing_in_place_and_restore(committed, admin_user, conflicted, stored):
    _job, conflicts = conflicted
    entry = stored["deadline"]

    committed(training_conflict_resolve, conflict_id=conflicts[2].pk, action="update_existing", actor=admin_user)
    entry.refresh_from_db()
    assert entry.answer == "평일 오후 3시입니다."

    restored = committed(training_conflict_restore, conflict_id=conflicts[2].pk, actor=admin_user)
    assert restored.pk == entry.pk and restored.answer == "평일 오후 2시입니다."
    assert TrainingConflict.objects.get(pk=conflicts[2].pk).status == "restored"


def test_update_existing_with_a_changed_question_retires_and_recreates_then_restores(
    committed, admin_user, conflicted, stored
):
    _job, conflicts = conflicted
    old = stored["invoice"]

    conflict = committed(
        training_conflict_resolve, conflict_id=conflicts[3].pk, action="update_existing", actor=admin_user
    )
    old.refresh_from_db()
    assert old.status == "retired" and conflict.result_entry.question == "세금계산서 발행일은 언제인가요?"
    assert conflict.snapshot_version.snapshot["question"] == "세금계산서는 언제 발행되나요?"

    restored = committed(training_conflict_restore, conflict_id=conflict.pk, actor=admin_user)
    active = FaqEntry.objects.filter(status="active")
    assert restored.question == "세금계산서는 언제 발행되나요?" and restored.answer == "매월 5일에 발행됩니다."
    assert not active.filter(question="세금계산서 발행일은 언제인가요?").exists()


def test_replace_existing_keeps_a_deletion_snapshot_and_restores_it(committed, admin_user, conflicted, stored):
    _job, conflicts = conflicted
    old_pk = stored["deadline"].pk

    conflict = committed(
        training_conflict_resolve, conflict_id=conflicts[2].pk, action="replace_existing", actor=admin_user
    )
    assert not FaqEntry.objects.filter(pk=old_pk).exists()
    assert conflict.snapshot_version.reason == FaqVersion.Reason.DELETED
    assert conflict.result_entry.answer == "평일 오후 3시입니다."

    restored = committed(training_conflict_restore, conflict_id=conflict.pk, actor=admin_user)
    assert restored.answer == "평일 오후 2시입니다."
    assert list(FaqEntry.objects.filter(status="active", question="발주 마감 시간은 몇 시인가요?")) == [restored]
    assert AuditEvent.objects.filter(action="training.restore").count() == 1


def test_add_new_beside_a_similar_faq_and_refusals(committed, admin_user, conflicted):
    _job, conflicts = conflicted

    conflict = committed(training_conflict_resolve, conflict_id=conflicts[3].pk, action="add_new", actor=admin_user)
    assert conflict.result_entry.question == "세금계산서 발행일은 언제인가요?"
    with pytest.raises(TrainingError, match="이미"):
        training_conflict_resolve(conflict_id=conflicts[3].pk, action="keep_existing", actor=admin_user)
    with pytest.raises(TrainingError, match="같은 질문"):  # a second entry of the same question is refused
        training_conflict_resolve(conflict_id=conflicts[2].pk, action="add_new", actor=admin_user)
    with pytest.raises(TrainingError, match="되돌릴 스냅숏"):
        training_conflict_restore(conflict_id=conflicts[3].pk, actor=admin_user)


def test_an_unexpected_error_fails_the_job_and_a_retry_finishes_it(committed, admin_user, monkeypatch):
    from agent.knowledge import training
    from agent.knowledge.training import training_job_retry

    real = training.faq_similar_questions

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(training, "faq_similar_questions", broken)
    job = upload(committed, admin_user, csv_bytes("question,answer", "배송비는 누가 부담하나요?,공급사 부담입니다."))
    assert job.status == TrainingJob.Status.FAILED and "RuntimeError" in job.error

    monkeypatch.setattr(training, "faq_similar_questions", real)
    assert committed(training_job_retry, job=job, actor=admin_user)
    job.refresh_from_db()
    assert job.status == TrainingJob.Status.DONE and job.added_count == 1 and job.error == ""
