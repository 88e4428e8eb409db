"""GET /api/v1/health and the admin health page: database, Redis, FAQ index (vector count against the active
entries) and the hub. Anonymous callers get status words only; details need the health token or a staff login."""

from dataclasses import replace

import pytest
from django.urls import reverse

from agent.api import health
from agent.knowledge.faq_services import faq_entry_create
from agent.models import FaqEntry
from delivery.tests.factories import StaffUserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("knowledge_stores")]

HEALTH_TOKEN = "health-token-for-tests-0123456789"


def _with_check(monkeypatch, name, run):
    """Replace one entry of the check table (the others run for real)."""
    checks = [replace(check, run=run) if check.name == name else check for check in health.HEALTH_CHECKS]
    monkeypatch.setattr(health, "HEALTH_CHECKS", checks)


@pytest.fixture
def hub_ok(monkeypatch):
    """The hub has its own tests; here its status is fixed so this file tests the aggregation."""
    _with_check(monkeypatch, "hub", lambda: {"status": "ok"})


@pytest.fixture
def health_token(settings):
    settings.HEALTH_TOKEN = HEALTH_TOKEN
    return {"HTTP_AUTHORIZATION": f"Bearer {HEALTH_TOKEN}"}


@pytest.fixture
def redis_down(settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"


def test_anonymous_callers_get_status_words_only(client, hub_ok, redis_down, settings):
    """Without a token the answer is `ok`/`degraded` per component and overall: no paths, hosts, counts or
    exception names (they would map the deployment for anyone); the status code still says degraded."""
    settings.QDRANT_PATH = "/srv/secret-folder/qdrant"

    response = client.get(reverse("health"))

    assert response.status_code == 503
    assert response.json() == {
        "status": "degraded",
        "checks": {"database": "ok", "redis": "degraded", "faq_index": "ok", "hub": "ok"},
    }
    for leak in (b"127.0.0.1", b"Error", b"secret-folder", b"reason", b"vector_count"):
        assert leak not in response.content


def test_ok_when_every_dependency_answers(client, hub_ok, health_token, django_capture_on_commit_callbacks):
    """With the health token: the same words plus each check's details; the FAQ index reports its vector count."""
    with django_capture_on_commit_callbacks(execute=True):
        faq_entry_create(question="반품은 어떻게 진행되나요?", answer="화요일 등록")

    response = client.get(reverse("health"), **health_token)

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["reasons"] == []
    assert body["checks"] == {"database": "ok", "redis": "ok", "faq_index": "ok", "hub": "ok"}
    assert body["details"]["database"]["status"] == "ok"
    assert body["details"]["faq_index"]["vector_count"] == 1
    assert body["details"]["faq_index"]["backend"] == "local"


def test_a_wrong_health_token_is_refused(client, hub_ok, health_token):
    """A token that does not match is 401 in the documented error shape, never the details."""
    response = client.get(reverse("health"), HTTP_AUTHORIZATION="Bearer not-the-token")

    assert response.status_code == 401
    assert response.json() == {"error": "HEALTH_TOKEN_INVALID"}


def test_without_a_configured_token_no_token_opens_the_details(client, hub_ok, settings):
    settings.HEALTH_TOKEN = ""

    response = client.get(reverse("health"), HTTP_AUTHORIZATION="Bearer ")

    assert response.status_code == 401


def test_degraded_with_the_reason_when_the_index_lags_the_database(client, hub_ok, health_token):
    """An entry whose index write never happened: 503, and the reason says what to run."""
    FaqEntry.objects.create(
        question="색인 안 된 질문", answer="답", question_key="k" * 64, source_created_at="2026-01-01T00:00:00Z"
    )

    response = client.get(reverse("health"), **health_token)

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["faq_index"] == "degraded"
    assert body["details"]["faq_index"]["unindexed_entries"] == 1
    assert "rebuild_faq_index" in body["reasons"][0]


def test_degraded_when_redis_does_not_answer(client, hub_ok, health_token, redis_down):
    response = client.get(reverse("health"), **health_token)

    assert response.status_code == 503
    assert response.json()["details"]["redis"]["status"] == "degraded"
    assert response.json()["reasons"][0].startswith("redis:")


def test_degraded_when_the_local_index_folder_is_held_by_another_process(client, hub_ok, health_token, settings):
    from qdrant_client import QdrantClient

    other = QdrantClient(path=settings.QDRANT_PATH)
    try:
        response = client.get(reverse("health"), **health_token)
    finally:
        other.close()

    assert response.status_code == 503
    assert "held by another process" in response.json()["details"]["faq_index"]["reason"]


def test_hub_status_is_reported(client, monkeypatch, health_token):
    """A degraded hub degrades the report with the hub's own reason."""
    _with_check(monkeypatch, "hub", lambda: {"status": "degraded", "reason": "no workspace enabled"})

    response = client.get(reverse("health"), **health_token)

    assert response.status_code == 503
    assert response.json()["reasons"] == ["hub: no workspace enabled"]


def test_redis_not_configured_is_fine(hub_ok, settings):
    settings.REDIS_URL = ""

    assert health.health_report()["checks"]["redis"]["status"] == "ok"


def test_one_more_component_is_one_more_entry(client, monkeypatch, hub_ok, health_token):
    """The API and the admin page both read the check table: an added entry shows up in both."""
    checks = [*health.HEALTH_CHECKS, health.HealthCheck("extra", "추가 구성요소", lambda: {"status": "ok", "n": 7})]
    monkeypatch.setattr(health, "HEALTH_CHECKS", checks)

    assert client.get(reverse("health")).json()["checks"]["extra"] == "ok"
    assert client.get(reverse("health"), **health_token).json()["details"]["extra"]["n"] == 7


class TestAdminHealthPage:
    def test_staff_see_every_component_with_its_details_in_korean(self, client, hub_ok, redis_down):
        client.force_login(StaffUserFactory(is_staff=True))

        response = client.get(reverse("admin_health"))

        assert response.status_code == 200
        page = response.content.decode()
        assert "서버 상태" in page
        for label in ("데이터베이스", "Redis", "FAQ 색인", "지식 허브"):
            assert label in page
        assert "저하" in page and "정상" in page
        assert "127.0.0.1:1" in page  # the reason, with the host, is for staff

    def test_the_page_is_for_staff_only(self, client, hub_ok):
        anonymous = client.get(reverse("admin_health"))
        client.force_login(StaffUserFactory(is_staff=False))
        member = client.get(reverse("admin_health"))

        assert anonymous.status_code == 302 and "/admin/login/" in anonymous["Location"]
        assert member.status_code == 302 and "/admin/login/" in member["Location"]

    def test_the_admin_index_links_to_it(self, client):
        client.force_login(StaffUserFactory(is_staff=True, is_superuser=True))

        index = client.get(reverse("admin:index")).content.decode()

        assert reverse("admin_health") in index
