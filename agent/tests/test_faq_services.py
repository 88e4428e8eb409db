"""FAQ writes: versions, audit rows, the changed-question rule, newest-version ingest, and the index healing from
the database (real PostgreSQL, Qdrant local mode in a temporary folder, the local embedding)."""

import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agent.knowledge import faq_index
from agent.knowledge.faq import faq_search
from agent.knowledge.faq_index import (
    FaqIndexUnavailable,
    faq_index_rebuild,
    faq_index_reset,
    faq_index_sync,
    faq_index_vector_count,
)
from agent.knowledge.faq_services import (
    FaqError,
    faq_entries_delete_batch,
    faq_entry_create,
    faq_entry_delete,
    faq_entry_update,
    faq_ingest_jsonl,
)
from agent.models import FaqEntry, FaqVersion
from monitoring.models import AuditEvent

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("knowledge_stores")]

KST = ZoneInfo("Asia/Seoul")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=KST)


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run a write and its after-commit index work, as a request would."""

    def run(write, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return write(*args, **kwargs)

    return run


def _jsonl(tmp_path, rows, name="faq.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(row if isinstance(row, str) else json.dumps(row, ensure_ascii=False) for row in rows))
    return path


def _titles(query):
    return [item.title for item in faq_search(query)]


# --- create / update / delete ---------------------------------------------------------------------------------


def test_create_writes_a_version_an_audit_row_and_the_index_after_commit(committed, admin_user):
    """The entry, a `created` snapshot and an audit row are written together; the point appears after commit."""
    entry = committed(
        faq_entry_create, question="반품은 어떻게 진행되나요?", answer="매주 화요일 회수", actor=admin_user
    )

    version = FaqVersion.objects.get(entry=entry)
    assert version.reason == "created" and version.actor == "admin"
    assert version.snapshot["question"] == "반품은 어떻게 진행되나요?"
    assert AuditEvent.objects.filter(action="faq.create", target_id=str(entry.pk), actor_kind="staff").exists()
    entry.refresh_from_db()
    assert entry.indexed_at is not None
    assert faq_index_vector_count() == 1
    assert _titles("반품 절차가 어떻게 되나요") == ["반품은 어떻게 진행되나요?"]


def test_create_refuses_a_second_active_entry_with_the_same_question(committed):
    """Questions equal after spacing and punctuation are the same question: edit the existing entry instead."""
    committed(faq_entry_create, question="정산일은 언제인가요?", answer="15일")

    with pytest.raises(FaqError):
        faq_entry_create(question="정산일은  언제인가요", answer="20일")


def test_nothing_is_indexed_when_the_transaction_rolls_back(django_capture_on_commit_callbacks):
    """The index write is an after-commit side effect: a rolled-back create leaves no point behind."""
    from django.db import transaction

    with (
        django_capture_on_commit_callbacks(execute=False) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        faq_entry_create(question="롤백될 질문", answer="답")
        raise RuntimeError("abort")
    assert callbacks == []
    assert faq_index_vector_count() == 0


def test_changed_question_creates_a_new_entry_and_retires_the_old_one(committed, admin_user):
    """Seed 001: a changed question gets a new id; the old entry is retired (pointing at its replacement), its
    vector deleted, and both keep snapshots."""
    old = committed(faq_entry_create, question="발주 마감은 몇 시?", answer="오후 3시", category="발주")

    new = committed(
        faq_entry_update, old.pk, question="발주 마감 시간은 몇 시인가요?", answer="오후 2시", category="발주",
        actor=admin_user,
    )  # fmt: skip

    old.refresh_from_db()
    assert new.pk != old.pk
    assert old.status == FaqEntry.Status.RETIRED and old.replaced_by_id == new.pk
    assert new.status == FaqEntry.Status.ACTIVE and new.answer == "오후 2시"
    assert list(FaqVersion.objects.filter(entry=old).values_list("reason", flat=True)) == ["superseded", "created"]
    assert FaqVersion.objects.get(entry=new).reason == "question_changed"
    assert faq_index_vector_count() == 1
    assert _titles("발주 마감 시간") == ["발주 마감 시간은 몇 시인가요?"]


def test_unchanged_question_updates_in_place_with_a_snapshot(committed):
    """Same question (ignoring spacing/punctuation), new answer: same id, same point, an `updated` snapshot."""
    entry = committed(faq_entry_create, question="정산일은 언제인가요?", answer="20일")
    point_id = entry.point_id

    current = committed(faq_entry_update, entry.pk, question="정산일은 언제인가요", answer="15일")

    assert current.pk == entry.pk and current.point_id == point_id
    assert current.answer == "15일" and current.question == "정산일은 언제인가요"
    assert list(FaqVersion.objects.filter(entry=entry).values_list("reason", flat=True)) == ["updated", "created"]
    assert faq_index_vector_count() == 1
    assert faq_search("정산일")[0].text.endswith("15일")


def test_update_without_changes_writes_nothing(committed):
    entry = committed(faq_entry_create, question="정산일은 언제인가요?", answer="15일")

    committed(faq_entry_update, entry.pk, question="정산일은 언제인가요?", answer="15일")

    assert FaqVersion.objects.filter(entry=entry).count() == 1


def test_a_retired_entry_cannot_be_edited(committed):
    old = committed(faq_entry_create, question="예전 질문입니다", answer="답")
    committed(faq_entry_update, old.pk, question="새 질문입니다", answer="답")

    with pytest.raises(FaqError):
        faq_entry_update(old.pk, question="또 다른 질문", answer="답")


def test_delete_and_batch_delete_keep_the_history_and_remove_the_points(committed, admin_user):
    """Deleted entries leave `deleted` snapshots (entry_ref kept) and audit rows; their points are gone."""
    first = committed(faq_entry_create, question="첫째 질문입니다", answer="답")
    second = committed(faq_entry_create, question="둘째 질문입니다", answer="답")
    third = committed(faq_entry_create, question="셋째 질문입니다", answer="답")

    committed(faq_entry_delete, first.pk, actor=admin_user)
    deleted = committed(faq_entries_delete_batch, [second.pk, third.pk, 999999], actor=admin_user)

    assert deleted == 2
    assert not FaqEntry.objects.exists()
    assert set(FaqVersion.objects.filter(reason="deleted").values_list("entry_ref", flat=True)) == {
        first.pk, second.pk, third.pk,
    }  # fmt: skip
    assert AuditEvent.objects.filter(action="faq.delete").count() == 3
    assert faq_index_vector_count() == 0


# --- ingest ---------------------------------------------------------------------------------------------------


def test_a_large_ingest_refreshes_the_planner_statistics_after_commit(committed, tmp_path, monkeypatch):
    """Right after a bulk ingest the keyword retry would be planned from the empty table's statistics (a scan,
    not the bigram index): the ingest analyses the table once committed (config.db)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    monkeypatch.setattr("config.db.BULK_WRITE_ROWS", 2)
    path = _jsonl(
        tmp_path,
        [
            {"q": "반품 기한은?", "a": "7일", "source_created_at": "2026-03-01T09:00:00+09:00"},
            {"q": "정산일은?", "a": "10일", "source_created_at": "2026-03-01T09:00:00+09:00"},
        ],
    )
    with CaptureQueriesContext(connection) as queries:
        report = committed(faq_ingest_jsonl, path)
    assert report.created == 2
    assert [query["sql"] for query in queries if query["sql"].startswith("ANALYZE")] == ['ANALYZE "agent_faqentry"']


def test_ingest_keeps_only_the_newest_version_of_a_repeated_question(committed, tmp_path):
    """Within one file the newest source_created_at wins, whatever the line order; q/a and question/answer both work."""
    path = _jsonl(
        tmp_path,
        [
            {"q": "정산 지급일이 언제인가요?", "a": "다음 달 15일", "source_created_at": "2026-05-01T09:00:00+09:00"},
            {
                "question": "정산 지급일이 언제인가요?",
                "answer": "다음 달 20일",
                "source_created_at": "2025-01-01T09:00:00+09:00",
            },
            {"question": "반품 승인 기한은?", "answer": "3영업일", "source_created_at": "2025-01-01T09:00:00+09:00"},
            {"q": "반품 승인 기한은?", "a": "5영업일", "source_created_at": "2026-10-05T09:30:00+09:00"},
        ],
    )

    report = committed(faq_ingest_jsonl, path)

    assert (report.created, report.skipped_older, report.errors) == (2, 2, [])
    answers = dict(FaqEntry.objects.values_list("question", "answer"))
    assert answers == {"정산 지급일이 언제인가요?": "다음 달 15일", "반품 승인 기한은?": "5영업일"}
    assert faq_index_vector_count() == 2


def test_ingest_never_lets_an_older_version_overwrite_a_newer_stored_one(committed, tmp_path):
    """A later file with an older version of a stored question is skipped; a newer one updates in place."""
    committed(
        faq_ingest_jsonl,
        _jsonl(tmp_path, [{"q": "물류비 차감률은?", "a": "2.5%", "source_created_at": "2026-06-01T00:00:00+09:00"}]),
    )
    entry = FaqEntry.objects.get()

    older = committed(
        faq_ingest_jsonl,
        _jsonl(
            tmp_path,
            [{"q": "물류비 차감률은?", "a": "3%", "source_created_at": "2024-08-19T00:00:00+09:00"}],
            "old.jsonl",
        ),
    )
    entry.refresh_from_db()
    assert older.skipped_older == 1 and entry.answer == "2.5%"

    same = committed(
        faq_ingest_jsonl,
        _jsonl(
            tmp_path,
            [{"q": "물류비 차감률은?", "a": "2.5%", "source_created_at": "2026-06-01T00:00:00+09:00"}],
            "same.jsonl",
        ),
    )
    assert same.unchanged == 1

    newer = committed(
        faq_ingest_jsonl,
        _jsonl(
            tmp_path,
            [{"q": "물류비 차감률은?", "a": "2%", "source_created_at": "2026-11-01T00:00:00+09:00"}],
            "new.jsonl",
        ),
    )
    entry.refresh_from_db()
    assert newer.updated == 1 and entry.answer == "2%"
    assert FaqEntry.objects.count() == 1
    assert faq_search("물류비 차감률")[0].text.endswith("2%")


def test_ingest_reports_bad_lines_and_loads_the_good_ones(committed, tmp_path):
    """Per-line errors: not JSON, no question, no answer, missing or invalid source_created_at."""
    path = _jsonl(
        tmp_path,
        [
            "{not json",
            {"a": "답만 있음", "source_created_at": "2026-01-01T00:00:00+09:00"},
            {"q": "답이 없는 질문", "source_created_at": "2026-01-01T00:00:00+09:00"},
            {"q": "날짜가 없는 질문", "a": "답"},
            {"q": "날짜가 틀린 질문", "a": "답", "source_created_at": "어제"},
            {"q": "멀쩡한 질문입니다", "a": "답", "source_created_at": "2026-01-01T00:00:00"},
        ],
    )

    report = committed(faq_ingest_jsonl, path)

    assert [line for line, _ in report.errors] == [1, 2, 3, 4, 5]
    assert report.created == 1
    # A naive time is read in TIME_ZONE.
    assert FaqEntry.objects.get().source_created_at == datetime(2026, 1, 1, tzinfo=KST)


def test_ingest_command_loads_the_demo_faq(tmp_path, capsys):
    """`manage.py ingest_faq demo/data/faq.jsonl` keeps the newest of the repeated questions (≥ 200 entries)."""
    call_command("ingest_faq", "demo/data/faq.jsonl")

    assert FaqEntry.objects.count() >= 200
    assert FaqEntry.objects.get(question="정산 지급일이 언제인가요?").answer.startswith(
        "대금은 매월 말일 마감 후 다음 달 15일"
    )
    assert "5영업일" in FaqEntry.objects.get(question="반품 승인 기한이 있나요?").answer
    assert "신규 " in capsys.readouterr().out


def test_ingest_command_fails_on_bad_lines_after_loading_the_good_ones(tmp_path):
    path = _jsonl(
        tmp_path, ["{bad", {"q": "좋은 질문입니다", "a": "답", "source_created_at": "2026-01-01T00:00:00+09:00"}]
    )

    with pytest.raises(CommandError):
        call_command("ingest_faq", str(path))
    assert FaqEntry.objects.count() == 1


# --- the index heals from the database ----------------------------------------------------------------------


def test_rebuild_restores_the_index_from_the_database(committed, tmp_path):
    """The index is disposable: wiped, it comes back from the rows with one command; retired entries stay out."""
    keep = committed(faq_entry_create, question="세금계산서는 언제 발행하나요?", answer="5일까지")
    old = committed(faq_entry_create, question="예전 질문입니다", answer="답")
    committed(faq_entry_update, old.pk, question="새로 바뀐 질문입니다", answer="답")
    faq_index_reset(drop=True)
    assert faq_index_vector_count() == 0

    call_command("rebuild_faq_index")

    assert faq_index_vector_count() == 2
    assert set(_titles("세금계산서 발행")) >= {keep.question}
    assert FaqEntry.objects.filter(status="active", indexed_at__isnull=True).count() == 0


def test_a_failed_index_write_is_recorded_and_healed_by_the_next_sync(committed, monkeypatch):
    """If Qdrant is unreachable after commit the row stays (indexed_at null, what health reports) and the next
    search's sync writes the point."""
    from agent.knowledge import faq_services

    def unavailable(*args, **kwargs):
        raise FaqIndexUnavailable("server down")

    monkeypatch.setattr(faq_services, "faq_points_upsert", unavailable)
    entry = committed(faq_entry_create, question="조기 지급을 받을 수 있나요?", answer="분기별 신청")
    entry.refresh_from_db()
    assert entry.indexed_at is None
    monkeypatch.undo()

    assert _titles("대금 조기 지급") == ["조기 지급을 받을 수 있나요?"]
    entry.refresh_from_db()
    assert entry.indexed_at is not None


def test_writes_from_another_process_reach_this_process_index_on_its_next_search(committed):
    """Local mode lets one process hold the folder: a write made elsewhere (here: rows changed while this process
    had already synced) is replayed from the version log, deletes included."""
    gone = committed(faq_entry_create, question="곧 삭제될 질문입니다", answer="답")
    assert faq_index_sync() == 0  # already in step after the after-commit writes
    assert faq_index_vector_count() == 1

    # Another process: rows and versions change, but its index writes cannot reach this folder.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("agent.knowledge.faq_services.faq_points_upsert", lambda entries: 0)
        patch.setattr("agent.knowledge.faq_services.faq_points_delete", lambda point_ids: None)
        committed(faq_entry_delete, gone.pk)
        committed(faq_entry_create, question="새로 생긴 질문입니다", answer="답")
    assert faq_index_vector_count() == 1

    assert faq_index_sync() == 2
    assert faq_index_vector_count() == 1
    assert _titles("새로 생긴 질문") == ["새로 생긴 질문입니다"]


def test_first_sync_in_a_process_reconciles_a_stale_index(committed):
    """A process opening a folder that missed changes (points of deleted rows, rows never indexed) fixes both."""
    committed(faq_entry_create, question="남아 있을 질문입니다", answer="답")
    stale = committed(faq_entry_create, question="지워진 질문입니다", answer="답")
    FaqEntry.objects.filter(pk=stale.pk).delete()  # as if deleted while another process held the folder
    FaqEntry.objects.create(
        question="색인 안 된 질문입니다", answer="답", question_key="x" * 64, source_created_at=T0 - timedelta(days=1)
    )
    faq_index_reset()  # a fresh process

    assert faq_index_sync() == 2
    assert faq_index_vector_count() == 2


def test_an_index_made_with_cosine_distance_is_recreated_and_refilled_with_the_same_scores(committed):
    """Earlier versions made cosine collections; the current layout is dot product (the vectors are normalised, so
    the scores are the same). A process meeting the old layout drops it and its next sync re-indexes everything."""
    from qdrant_client import models

    committed(faq_entry_create, question="반품 접수는 어떻게 하나요?", answer="파트너센터에서 접수합니다.")
    scores_before = [item.extra["dense_score"] for item in faq_search("반품 접수 방법")]
    client = faq_index.faq_index_client()
    name = faq_index.faq_collection_name()
    client.delete_collection(name)
    client.create_collection(
        name,
        vectors_config={
            vector: models.VectorParams(size=512, distance=models.Distance.COSINE)
            for vector in (faq_index.DENSE, faq_index.PASSAGE)
        },
    )
    faq_index_reset()  # a fresh process, as after an upgrade

    assert faq_index_sync() == 1
    params = faq_index.faq_index_client().get_collection(name).config.params.vectors
    assert {params[vector].distance for vector in (faq_index.DENSE, faq_index.PASSAGE)} == {models.Distance.DOT}
    assert [item.extra["dense_score"] for item in faq_search("반품 접수 방법")] == pytest.approx(scores_before)
    assert scores_before and scores_before[0] > 0.4


def test_a_bulk_write_in_local_mode_reopens_the_folder_and_keeps_what_was_synced(committed, monkeypatch):
    """After writing many points a local-mode process reads the folder again (see faq_index._reopen_local);
    nothing is lost and the next sync has nothing to replay."""
    monkeypatch.setattr(faq_index, "_REOPEN_AFTER_POINTS", 2)
    faq_index_sync()
    before = faq_index.faq_index_client()

    assert faq_index_rebuild() == 0
    committed(faq_entry_create, question="반품 접수는 어떻게 하나요?", answer="파트너센터에서 접수합니다.")
    committed(faq_entry_create, question="정산 대금은 언제 들어오나요?", answer="매월 10일에 지급합니다.")
    assert faq_index.faq_index_client() is before  # one point at a time: no reopen

    assert faq_index_rebuild() == 2
    assert faq_index.faq_index_client() is not before
    assert faq_index_sync() == 0
    assert faq_index_vector_count() == 2
    assert _titles("반품 접수 방법")[0] == "반품 접수는 어떻게 하나요?"


def test_a_second_client_on_the_same_local_folder_is_reported_not_crashed(settings):
    """The local folder is locked by its first client; another holder gets FaqIndexUnavailable with the reason."""
    from qdrant_client import QdrantClient

    other = QdrantClient(path=settings.QDRANT_PATH)
    try:
        with pytest.raises(FaqIndexUnavailable, match="held by another process"):
            faq_index.faq_index_client()
    finally:
        other.close()


def test_rebuild_command_reports_an_unavailable_index(settings):
    from qdrant_client import QdrantClient

    other = QdrantClient(path=settings.QDRANT_PATH)
    try:
        with pytest.raises(CommandError, match="held by another process"):
            call_command("rebuild_faq_index")
    finally:
        other.close()
    assert faq_index_rebuild() == 0
