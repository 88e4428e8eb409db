"""Every 4xx/5xx under /api/ is the documented JSON error body; the admin and other pages keep Django's pages."""

import re

import pytest
from django.conf import settings
from django.test import Client
from django.urls import path
from rest_framework.views import APIView

from config import urls as project_urls
from delivery.tests.factories import active_device


class _CrashingApi(APIView):
    authentication_classes = []
    permission_classes = []

    def get(self, request):
        raise RuntimeError("a bug in a view")


urlpatterns = [
    path("api/v1/test-crash", _CrashingApi.as_view()),
    path("crash", lambda request: 1 / 0),
    *project_urls.urlpatterns,
]
# The project's own handlers: this urlconf only adds the two crashing views.
handler404 = getattr(project_urls, "handler404", None)
handler500 = getattr(project_urls, "handler500", None)


@pytest.fixture
def client_without_raising():
    return Client(raise_request_exception=False)


def _is_json_error(response, status: int, code: str) -> None:
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    assert response.json()["error"] == code


@pytest.mark.django_db
class TestJsonUnderApi:
    def test_an_unknown_path_under_api_is_a_json_404(self, client):
        _is_json_error(client.get("/api/v1/no-such-thing"), 404, "NOT_FOUND")
        _is_json_error(client.post("/api/v2/uploads", data="{}", content_type="application/json"), 404, "NOT_FOUND")

    @pytest.mark.urls("tests.test_api_errors")
    def test_an_unhandled_exception_under_api_is_a_json_500(self, client_without_raising):
        response = client_without_raising.get("/api/v1/test-crash")
        _is_json_error(response, 500, "INTERNAL_ERROR")
        assert "a bug in a view" not in response.content.decode()

    def test_a_wrong_method_is_a_json_405(self, client):
        _, token = active_device(role="uploader")
        response = client.get("/api/v1/uploads", HTTP_AUTHORIZATION=f"Bearer {token}")
        _is_json_error(response, 405, "METHOD_NOT_ALLOWED")
        assert isinstance(response.json()["detail"], str)

    def test_a_parse_error_is_a_json_400(self, client):
        _, token = active_device(role="sender")
        response = client.post(
            "/api/v1/devices/heartbeat",
            data="{nope",
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        _is_json_error(response, 400, "PARSE_ERROR")

    def test_too_deep_json_is_a_json_400(self, client_without_raising):
        """The JSON parser's RecursionError is a parse error like any other, not a 500."""
        _, token = active_device(role="sender")
        response = client_without_raising.post(
            "/api/v1/devices/heartbeat",
            data="[" * 100_000,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        _is_json_error(response, 400, "PARSE_ERROR")

    def test_too_deep_json_on_pairing_is_its_one_identical_refusal(self, client_without_raising):
        response = client_without_raising.post(
            "/api/v1/devices/pair", data="[" * 100_000, content_type="application/json"
        )
        _is_json_error(response, 400, "PAIRING_CODE_INVALID")

    def test_a_missing_token_is_the_documented_401(self, client):
        _is_json_error(
            client.post("/api/v1/uploads", data="{}", content_type="application/json"), 401, "DEVICE_TOKEN_INVALID"
        )


@pytest.mark.django_db
class TestOtherPagesKeepDjangosPages:
    def test_an_unknown_admin_path_is_django_s_html_404(self, admin_client):
        response = admin_client.get("/admin/no/such/page/")
        assert response.status_code == 404
        assert response["Content-Type"].startswith("text/html")

    def test_an_unknown_path_outside_api_is_html(self, client):
        response = client.get("/apiary")
        assert response.status_code == 404
        assert response["Content-Type"].startswith("text/html")

    @pytest.mark.urls("tests.test_api_errors")
    def test_a_crash_outside_api_is_django_s_html_500(self, client_without_raising):
        response = client_without_raising.get("/crash")
        assert response.status_code == 500
        assert response["Content-Type"].startswith("text/html")


def test_every_operation_documents_the_error_body(client, db):
    """Whatever error an operation answers, the schema describes its body (schema checks rely on it)."""
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    error_schema = schema["components"]["schemas"]["ErrorBody"]
    assert error_schema["required"] == ["error"]
    for path_name, operations in schema["paths"].items():
        for method, operation in operations.items():
            default = operation["responses"].get("default")
            assert default, f"{method.upper()} {path_name} has no default error response"
            assert default["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}


# An error code written in the source: a JSON body's "error", a JSON error helper's argument, an exception's `code`.
_CODE_IN_SOURCE = re.compile(
    r"""["']error["']:\s*["']([A-Z_]+)["']|_error\(["']([A-Z_]+)["']|^\s+code = ["']([A-Z_]+)["']""", re.M
)


def test_the_schema_lists_every_error_code_the_apps_answer_as_an_enum(client, db):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    listed = set(schema["components"]["schemas"]["ErrorBody"]["properties"]["error"]["enum"])
    written = set()
    for app in ("config", "vendors", "conversations", "agent", "delivery", "monitoring"):
        for source in (settings.BASE_DIR / app).rglob("*.py"):
            if "tests" in source.parts or "migrations" in source.parts:
                continue
            for match in _CODE_IN_SOURCE.finditer(source.read_text(encoding="utf-8")):
                written.add(next(group for group in match.groups() if group))
    assert {"INVALID_BATCH", "SEND_JOB_STATE_CONFLICT", "HEALTH_TOKEN_INVALID"} <= written  # the pattern finds them
    assert written - listed == set()


def test_the_api_docs_page_loads_swagger_ui_from_our_own_static_files(client, db):
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower()
    script = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert script.status_code == 200
