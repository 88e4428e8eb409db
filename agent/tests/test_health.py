"""GET /api/v1/health: database, Redis, FAQ index (vector count against the active entries) and the hub."""

import pytest
from django.urls import reverse

from agent.api import health
from agent.knowledge.faq_services import faq_entry_create
from agent.models import FaqEntry

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("knowledge_stores")]


@pytest.fixture
def hub_ok(monkeypatch):
    """The hub has its own tests; here its status is fixed so this file tests the aggregation."""
    monkeypatch.setitem(health.CHECKS, "hub", lambda: {"status": "ok"})


def test_ok_when_every_dependency_answers(client, hub_ok, django_capture_on_commit_callbacks):
    """No authentication needed; the FAQ index reports its vector count (= active entries)."""
    with django_capture_on_commit_callbacks(execute=True):
        faq_entry_create(question="반품은 어떻게 진행되나요?", answer="화요일 등록")

    response = client.get(reverse("health"))

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["reasons"] == []
    assert body["checks"]["database"]["status"] == "ok"
    assert body["checks"]["redis"]["status"] == "ok"
    assert body["checks"]["faq_index"]["vector_count"] == 1
    assert body["checks"]["faq_index"]["backend"] == "local"


def test_degraded_with_the_reason_when_the_index_lags_the_database(client, hub_ok):
    """An entry whose index write never happened: 503, and the reason says what to run."""
    FaqEntry.objects.create(
        question="색인 안 된 질문", answer="답", question_key="k" * 64, source_created_at="2026-01-01T00:00:00Z"
    )

    response = client.get(reverse("health"))

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["faq_index"]["unindexed_entries"] == 1
    assert "rebuild_faq_index" in body["reasons"][0]


def test_degraded_when_redis_does_not_answer(client, hub_ok, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"

    response = client.get(reverse("health"))

    assert response.status_code == 503
    assert response.json()["checks"]["redis"]["status"] == "degraded"
    assert response.json()["reasons"][0].startswith("redis:")


def test_degraded_when_the_local_index_folder_is_held_by_another_process(client, hub_ok, settings):
    from qdrant_client import QdrantClient

    other = QdrantClient(path=settings.QDRANT_PATH)
    try:
        response = client.get(reverse("health"))
    finally:
        other.close()

    assert response.status_code == 503
    assert "held by another process" in response.json()["checks"]["faq_index"]["reason"]


def test_hub_status_is_reported(client, monkeypatch):
    """A degraded hub degrades the report with the hub's own reason."""
    monkeypatch.setitem(health.CHECKS, "hub", lambda: {"status": "degraded", "reason": "no workspace enabled"})

    response = client.get(reverse("health"))

    assert response.status_code == 503
    assert response.json()["reasons"] == ["hub: no workspace enabled"]


def test_redis_not_configured_is_fine(hub_ok, settings):
    settings.REDIS_URL = ""

    assert health.CHECKS["redis"]()["status"] == "ok"
