"""The upload endpoint answers what its OpenAPI schema documents, for every status it can answer."""

from datetime import timedelta

import pytest
from jsonschema import Draft202012Validator
from rest_framework.test import APIClient

from conversations.tests.test_uploads import T0, URL, message, post
from delivery.tests.factories import active_device


@pytest.fixture
def schema(client, db):
    return client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def _assert_documented(schema: dict, response, *, method: str = "post") -> None:
    responses = schema["paths"][URL][method]["responses"] if method in schema["paths"][URL] else None
    if responses is None:  # a method the path does not have: any operation's `default` error body applies
        responses = {"default": next(iter(schema["paths"][URL].values()))["responses"]["default"]}
    entry = responses.get(str(response.status_code)) or responses["default"]
    body_schema = {**entry["content"]["application/json"]["schema"], "components": schema["components"]}
    errors = sorted(Draft202012Validator(body_schema).iter_errors(response.json()), key=str)
    assert not errors, f"{response.status_code}: {[error.message for error in errors]}"


@pytest.mark.django_db
class TestUploadResponsesMatchTheSchema:
    def test_200_with_rejections_and_cleaning(self, schema, uploader, vendor):
        bad = message("시각", at=T0 + timedelta(minutes=1))
        bad["sent_at"] = "2026-11-30T10:00:00+16:00"
        response = post(uploader, "b-1", [message("정\x00상"), bad, message("x" * 20001), None])
        assert response.status_code == 200
        assert response.json()["rejected"] == 3
        _assert_documented(schema, response)
        replay = post(uploader, "b-1", [])
        assert replay.json()["replayed"] is True
        _assert_documented(schema, replay)

    def test_401_and_403(self, schema, db):
        anonymous = APIClient().post(URL, {"batch_id": "b", "messages": []}, format="json")
        assert anonymous.status_code == 401
        _assert_documented(schema, anonymous)
        _, token = active_device(role="sender")
        sender = APIClient()
        sender.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        forbidden = post(sender, "b", [])
        assert forbidden.status_code == 403
        _assert_documented(schema, forbidden)

    def test_413_422_and_429(self, schema, uploader, settings):
        settings.UPLOAD_MAX_MESSAGES = 1
        too_many = post(uploader, "b-1", [message(), message()])
        assert too_many.status_code == 413
        _assert_documented(schema, too_many)
        for body in ("{not json", "[" * 100_000, '{"batch_id": "", "messages": []}', '{"batch_id": "b\\u0000"}'):
            invalid = uploader.post(URL, data=body, content_type="application/json")
            assert invalid.status_code == 422, body[:20]
            _assert_documented(schema, invalid)
        settings.UPLOAD_RATE_PER_MINUTE = 0
        limited = post(uploader, "b-2", [])
        assert limited.status_code == 429
        _assert_documented(schema, limited)

    def test_a_method_the_path_does_not_have(self, schema, uploader):
        response = uploader.get(URL)
        assert response.status_code == 405
        _assert_documented(schema, response, method="get")
