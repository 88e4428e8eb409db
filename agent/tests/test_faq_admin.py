"""FAQ admin: list with category counts, search (semantic and keyword), add, edit through the services (a changed
question becomes a new entry), delete and batch delete with confirmation, rebuild, read-only versions."""

import pytest
from django.urls import reverse

from agent.knowledge.faq_index import faq_index_reset, faq_index_vector_count
from agent.knowledge.faq_services import faq_entry_create
from agent.models import FaqEntry, FaqVersion

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("knowledge_stores")]


@pytest.fixture
def entries(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return [
            faq_entry_create(
                question="반품은 어떻게 진행되나요?", answer="매주 화요일 목록 등록", category="반품·교환"
            ),
            faq_entry_create(question="정산 지급일이 언제인가요?", answer="다음 달 15일 지급", category="정산"),
            faq_entry_create(question="세금계산서는 언제 발행하나요?", answer="5일까지 발행", category="정산"),
        ]


def test_changelist_shows_categories_with_counts(admin_client, entries):
    response = admin_client.get(reverse("admin:agent_faqentry_changelist"))

    assert response.status_code == 200
    body = response.content.decode()
    assert "정산 (2)" in body and "반품·교환 (1)" in body
    assert reverse("admin:agent_faqentry_search") in body and reverse("admin:agent_faqentry_rebuild") in body
    filtered = admin_client.get(reverse("admin:agent_faqentry_changelist"), {"category": "정산"})
    assert filtered.context["cl"].result_count == 2


def test_semantic_search_shows_the_pipeline_result(admin_client, entries):
    response = admin_client.get(
        reverse("admin:agent_faqentry_search"), {"query": "반품은 어떻게 하나요", "mode": "semantic"}
    )

    assert response.status_code == 200
    assert "반품은 어떻게 진행되나요?" in response.content.decode()
    assert response.context["trace"].dense_hits >= 1


@pytest.mark.parametrize(("field", "found"), [("question", False), ("answer", True), ("both", True)])
def test_keyword_search_over_question_answer_or_both(admin_client, entries, field, found):
    """`15일` appears only in an answer."""
    response = admin_client.get(
        reverse("admin:agent_faqentry_search"), {"query": "15일", "mode": "keyword", "field": field}
    )

    assert response.status_code == 200
    assert [entry.pk for entry in response.context["keyword"]] == ([entries[1].pk] if found else [])


def test_add_goes_through_the_service(admin_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:agent_faqentry_add"),
            {"question": "입고 예약은 어떻게 하나요?", "answer": "전날 오후 5시까지", "category": "납품", "url": ""},
        )

    entry = FaqEntry.objects.get()
    assert response.status_code == 302 and response.url == reverse("admin:agent_faqentry_change", args=[entry.pk])
    assert FaqVersion.objects.get(entry=entry).actor == "admin"
    assert faq_index_vector_count() == 1


def test_add_of_an_existing_question_shows_the_error(admin_client, entries):
    response = admin_client.post(
        reverse("admin:agent_faqentry_add"), {"question": "정산 지급일이 언제인가요", "answer": "다른 답"}
    )

    assert response.status_code == 200
    assert "같은 질문의 FAQ가 이미 있습니다" in response.content.decode()
    assert FaqEntry.objects.count() == 3


def test_edit_with_a_changed_question_creates_a_new_entry(admin_client, entries, django_capture_on_commit_callbacks):
    old = entries[0]
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:agent_faqentry_change", args=[old.pk]),
            {"question": "반품 절차가 어떻게 되나요?", "answer": old.answer, "category": old.category, "url": ""},
        )

    old.refresh_from_db()
    assert old.status == "retired" and old.replaced_by_id
    assert response.url == reverse("admin:agent_faqentry_change", args=[old.replaced_by_id])
    page = admin_client.get(reverse("admin:agent_faqentry_change", args=[old.pk])).content.decode()
    assert "폐기" in page and "버전 스냅숏" in page and "새 버전으로 교체" in page


def test_delete_uses_the_confirmation_page_and_the_service(admin_client, entries, django_capture_on_commit_callbacks):
    url = reverse("admin:agent_faqentry_delete", args=[entries[0].pk])
    assert admin_client.get(url).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url, {"post": "yes"})

    assert not FaqEntry.objects.filter(pk=entries[0].pk).exists()
    assert FaqVersion.objects.filter(entry_ref=entries[0].pk, reason="deleted").exists()
    assert faq_index_vector_count() == 2


def test_batch_delete_confirms_then_deletes_through_the_service(
    admin_client, entries, django_capture_on_commit_callbacks
):
    changelist = reverse("admin:agent_faqentry_changelist")
    selected = {"action": "delete_selected", "_selected_action": [entries[1].pk, entries[2].pk]}

    confirmation = admin_client.post(changelist, selected)
    assert confirmation.status_code == 200 and FaqEntry.objects.count() == 3
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(changelist, {**selected, "post": "yes"})

    assert list(FaqEntry.objects.values_list("pk", flat=True)) == [entries[0].pk]
    assert FaqVersion.objects.filter(reason="deleted").count() == 2
    assert faq_index_vector_count() == 1


def test_rebuild_index_confirms_then_rebuilds(admin_client, entries):
    url = reverse("admin:agent_faqentry_rebuild")
    assert "3건" in admin_client.get(url).content.decode()
    faq_index_reset(drop=True)

    response = admin_client.post(url)

    assert response.status_code == 302
    assert faq_index_vector_count() == 3


def test_versions_are_read_only(admin_client, entries):
    version = FaqVersion.objects.first()

    assert admin_client.get(reverse("admin:agent_faqversion_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:agent_faqversion_change", args=[version.pk])).status_code == 200
    assert admin_client.get(reverse("admin:agent_faqversion_add")).status_code == 403
