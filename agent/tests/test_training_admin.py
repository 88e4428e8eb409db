"""The training upload pages with Django's test client: upload, progress, conflicts side by side, bulk review,
confirmation of destructive actions and restore (real PostgreSQL, Qdrant local mode, the local embedding)."""

import pytest
from django.urls import reverse

from agent.knowledge.faq_services import faq_entry_create
from agent.models import FaqEntry, TrainingConflict, TrainingJob

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("knowledge_stores")]

FILE = (
    "question,answer,category\n"
    "발주 마감 시간은 몇 시인가요?,평일 오후 3시입니다.,발주\n"
    "세금계산서 발행일은 언제인가요?,매월 10일에 발행됩니다.,정산\n"
    "배송비는 누가 부담하나요?,공급사가 부담합니다.,배송\n"
).encode()


@pytest.fixture
def client_with_faqs(admin_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        faq_entry_create(question="발주 마감 시간은 몇 시인가요?", answer="평일 오후 2시입니다.")
        faq_entry_create(question="세금계산서는 언제 발행되나요?", answer="매월 5일에 발행됩니다.")
    return admin_client


def _upload(client, captured, data=FILE, name="training.csv"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    with captured(execute=True):  # the task runs once the upload commits, as on the embedded default
        response = client.post(reverse("admin:agent_trainingjob_add"), {"file": SimpleUploadedFile(name, data)})
    return client.get(response["Location"]) if response.status_code == 302 else response


def test_upload_runs_the_job_and_shows_progress_and_conflicts_side_by_side(
    client_with_faqs, django_capture_on_commit_callbacks
):
    response = _upload(client_with_faqs, django_capture_on_commit_callbacks)

    assert response.request["PATH_INFO"] == reverse(
        "admin:agent_trainingjob_change", args=[TrainingJob.objects.get().pk]
    )
    page = response.content.decode()
    assert 'id="training-job-status" data-status="review"' in page
    assert '<progress id="training-progress" value="3" max="3">' in page
    assert "평일 오후 2시입니다." in page and "평일 오후 3시입니다." in page  # both texts
    assert page.count('class="conflict-select"') == 2
    similar = TrainingConflict.objects.get(match="similar")
    assert f'<td class="conflict-score">{similar.score:.3f}</td>' in page


def test_a_bad_file_is_refused_on_the_form_in_korean(client_with_faqs, django_capture_on_commit_callbacks):
    response = _upload(client_with_faqs, django_capture_on_commit_callbacks, data=b"\xff\xfe\x00\x81\x82", name="x.csv")

    assert response.status_code == 200 and TrainingJob.objects.count() == 0
    assert "인코딩을 읽을 수 없습니다" in response.content.decode()


def test_bulk_replace_asks_for_confirmation_then_applies_and_can_be_restored(
    client_with_faqs, django_capture_on_commit_callbacks
):
    _upload(client_with_faqs, django_capture_on_commit_callbacks)
    job = TrainingJob.objects.get()
    ids = [str(pk) for pk in job.conflicts.values_list("pk", flat=True)]
    url = reverse("admin:agent_trainingjob_resolve", args=[job.pk])

    confirm = client_with_faqs.post(url, {"conflict_ids": ids, "action": "replace_existing"})
    assert 'id="confirm-resolve"' in confirm.content.decode()
    assert FaqEntry.objects.filter(question="발주 마감 시간은 몇 시인가요?").get().answer == "평일 오후 2시입니다."

    with django_capture_on_commit_callbacks(execute=True):
        client_with_faqs.post(url, {"conflict_ids": ids, "action": "replace_existing", "confirmed": "yes"})
    job.refresh_from_db()
    assert job.status == TrainingJob.Status.DONE
    assert FaqEntry.objects.get(question="발주 마감 시간은 몇 시인가요?").answer == "평일 오후 3시입니다."
    assert not FaqEntry.objects.filter(question="세금계산서는 언제 발행되나요?").exists()

    conflict = job.conflicts.get(row__row_number=3)
    page = client_with_faqs.get(reverse("admin:agent_trainingjob_change", args=[job.pk])).content.decode()
    assert f'id="conflict-restore-{conflict.pk}"' in page
    restore_url = reverse("admin:agent_trainingjob_restore", args=[job.pk, conflict.pk])
    assert 'id="confirm-restore"' in client_with_faqs.get(restore_url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        client_with_faqs.post(restore_url, {"confirmed": "yes"})
    assert FaqEntry.objects.get(question="세금계산서는 언제 발행되나요?").answer == "매월 5일에 발행됩니다."
    assert not FaqEntry.objects.filter(question="세금계산서 발행일은 언제인가요?").exists()


def test_keep_existing_needs_no_confirmation(client_with_faqs, django_capture_on_commit_callbacks):
    _upload(client_with_faqs, django_capture_on_commit_callbacks)
    job = TrainingJob.objects.get()
    conflict = job.conflicts.get(row__row_number=2)

    response = client_with_faqs.post(
        reverse("admin:agent_trainingjob_resolve", args=[job.pk]),
        {"conflict_ids": [conflict.pk], "action": "keep_existing"},
        follow=True,
    )

    conflict.refresh_from_db()
    assert conflict.status == "resolved" and "충돌 1건을 처리했습니다." in response.content.decode()
    assert TrainingJob.objects.get().status == TrainingJob.Status.REVIEW  # one conflict still open


def test_the_list_shows_status_progress_and_open_conflicts(client_with_faqs, django_capture_on_commit_callbacks):
    _upload(client_with_faqs, django_capture_on_commit_callbacks)

    page = client_with_faqs.get(reverse("admin:agent_trainingjob_changelist")).content.decode()

    assert "검토 대기" in page and "3 / 3" in page
