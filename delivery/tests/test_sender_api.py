"""The send-job HTTP API through DRF's APIClient with real device tokens (docs/edge-api.md)."""

import base64
import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from conversations.tests.factories import QuestionFactory, RoomFactory
from delivery.models import Device, SendJob
from delivery.services import send_jobs_expire_leases
from delivery.tests.factories import StaffUserFactory, active_device

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
SEND_REQUESTS = "/api/v1/send-requests"
CLAIM = "/api/v1/sender/claim"


def _job_url(job_id, action):
    return f"/api/v1/sender/jobs/{job_id}/{action}"


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def room(db):
    return RoomFactory(vendor=None, name="(1234) 대한물산", stable_key="chat-9912")


@pytest.fixture
def staff_client(db):
    client = APIClient()
    client.force_login(StaffUserFactory(is_staff=True))
    return client


def _device_client(role=Device.Role.SENDER, rooms=()):
    device, token = active_device(role=role)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    if rooms:
        response = client.post(
            "/api/v1/devices/heartbeat",
            {"rooms": [{"room_key": room.stable_key, "room_name": room.name} for room in rooms]},
            format="json",
        )
        assert response.status_code == 200
    return device, client


@pytest.fixture
def sender(room):
    return _device_client(rooms=[room])


def _body(room, text="이번 달 단가는 30,000원입니다.", photo=PNG, **extra):
    return {
        "room_key": room.stable_key,
        "items": [
            {"kind": "text", "text": text},
            {"kind": "photo", "name": "단가표.png", "content_base64": base64.b64encode(photo).decode()},
        ],
        **extra,
    }


def _request_send(client, body, key="key-1"):
    headers = {"Idempotency-Key": key} if key else {}
    return client.post(SEND_REQUESTS, body, format="json", headers=headers)


@pytest.mark.django_db
class TestSendRequests:
    def test_a_new_request_creates_a_queued_job(self, staff_client, room):
        """201 with outcome `created` and the job: room, items with hashes, expected counts."""
        question = QuestionFactory(message__room=room)

        response = _request_send(staff_client, _body(room, question_id=question.pk))

        assert response.status_code == 201
        body = response.json()
        assert body["outcome"] == "created"
        job = body["job"]
        assert (job["room_key"], job["state"], job["attempt"], job["question_id"]) == (
            "chat-9912",
            "queued",
            1,
            question.pk,
        )
        assert job["expected"] == {"texts": 1, "photos": 1, "files": 0}
        assert job["items"][1]["sha256"] == hashlib.sha256(PNG).hexdigest()
        assert job["idempotency_key"] == "key-1"

    def test_the_same_request_again_is_replayed(self, staff_client, room):
        """200 with outcome `replayed` and the same job; no second job."""
        first = _request_send(staff_client, _body(room)).json()["job"]

        response = _request_send(staff_client, _body(room))

        assert response.status_code == 200
        assert response.json()["outcome"] == "replayed"
        assert response.json()["job"]["id"] == first["id"]
        assert SendJob.objects.count() == 1

    def test_a_different_body_under_the_same_key_is_422(self, staff_client, room):
        first = _request_send(staff_client, _body(room)).json()["job"]

        response = _request_send(staff_client, _body(room, text="이번 달 단가는 35,000원입니다."))

        assert response.status_code == 422
        assert response.json() == {"error": "IDEMPOTENCY_KEY_REUSED", "job_id": first["id"]}

    def test_an_unknown_job_answers_409_never_success(self, staff_client, room, sender):
        job_id = _request_send(staff_client, _body(room)).json()["job"]["id"]
        sender[1].post(CLAIM, {}, format="json")
        send_jobs_expire_leases(now=timezone.now() + timedelta(hours=1))

        response = _request_send(staff_client, _body(room))

        assert response.status_code == 409
        assert response.json() == {"error": "SEND_STATE_UNKNOWN", "job_id": job_id, "state": "unknown"}

    def test_a_failed_job_is_requeued(self, staff_client, room, sender):
        job_id = _request_send(staff_client, _body(room)).json()["job"]["id"]
        _, client = sender
        client.post(CLAIM, {}, format="json")
        client.post(_job_url(job_id, "result"), {"outcome": "failed", "reason": "전송 도구 오류"}, format="json")

        response = _request_send(staff_client, _body(room))

        assert response.status_code == 200
        assert response.json()["outcome"] == "requeued"
        assert (response.json()["job"]["state"], response.json()["job"]["attempt"]) == ("queued", 2)

    def test_the_idempotency_key_header_is_required(self, staff_client, room):
        response = _request_send(staff_client, _body(room), key=None)

        assert response.status_code == 400
        assert response.json() == {"error": "IDEMPOTENCY_KEY_REQUIRED"}
        assert not SendJob.objects.exists()

    @pytest.mark.parametrize(
        "change",
        [
            {"items": [{"kind": "photo", "name": "a.png", "content_base64": "%%%not base64%%%"}]},
            {"items": [{"kind": "photo", "name": "a.png", "content_base64": base64.b64encode(b"text").decode()}]},
            {"items": []},
            {"question_id": 999999},
        ],
        ids=["bad-base64", "not-an-image", "no-items", "unknown-question"],
    )
    def test_invalid_bodies_are_400(self, staff_client, room, change):
        response = _request_send(staff_client, {**_body(room), **change})

        assert response.status_code == 400
        assert response.json()["error"] == "INVALID_SEND_REQUEST"
        assert not SendJob.objects.exists()

    def test_a_photo_over_the_size_limit_is_400(self, staff_client, room, settings):
        settings.SEND_ITEM_MAX_BYTES = 16

        response = _request_send(staff_client, _body(room))

        assert response.status_code == 400
        assert response.json()["detail"]["index"] == 1

    def test_an_unknown_room_is_400(self, staff_client, room):
        response = _request_send(staff_client, {**_body(room), "room_key": "chat-none"})

        assert response.status_code == 400
        assert response.json() == {"error": "ROOM_NOT_FOUND"}

    def test_only_staff_may_request_sends(self, room):
        """Anonymous → 401; a non-staff user → 403; a device token is not staff either."""
        anonymous = APIClient()
        assert _request_send(anonymous, _body(room)).status_code == 401
        member = APIClient()
        member.force_login(StaffUserFactory(is_staff=False))
        assert _request_send(member, _body(room)).status_code == 403
        _, device_client = _device_client()
        assert _request_send(device_client, _body(room)).status_code == 401
        assert not SendJob.objects.exists()

    def test_basic_authentication_is_refused_without_hashing_the_password(self, room, monkeypatch):
        """A staff password over HTTP Basic is not accepted, right or wrong, and no password hash is computed:
        each check costs a full key-derivation, which let a few connections starve the upload workers."""
        user = StaffUserFactory(is_staff=True)
        user.set_password("s3cret-pass")
        user.save()
        hashed = []
        monkeypatch.setattr(
            "django.contrib.auth.hashers.check_password", lambda *args, **kwargs: hashed.append(args) or True
        )
        monkeypatch.setattr(type(user), "check_password", lambda self, raw: hashed.append(raw) or True)

        for password in ("s3cret-pass", "wrong"):
            client = APIClient()
            client.credentials(
                HTTP_AUTHORIZATION="Basic " + base64.b64encode(f"{user.username}:{password}".encode()).decode()
            )
            response = _request_send(client, _body(room), key=f"key-{password}")
            assert response.status_code == 401
            assert response.json()["error"] == "NOT_AUTHENTICATED"
        assert hashed == []
        assert not SendJob.objects.exists()

    def test_a_staff_session_needs_the_csrf_token(self, room):
        """The staff session is the way in, with Django's CSRF check like every form of the admin."""
        user = StaffUserFactory(is_staff=True)
        client = APIClient(enforce_csrf_checks=True)
        client.force_login(user)

        refused = _request_send(client, _body(room))
        client.get("/admin/")  # the admin page sets the CSRF cookie
        token = client.cookies["csrftoken"].value
        accepted = client.post(
            SEND_REQUESTS, _body(room), format="json", headers={"Idempotency-Key": "key-1", "X-CSRFToken": token}
        )

        assert refused.status_code == 403
        assert accepted.status_code == 201


@pytest.mark.django_db
class TestSenderFlow:
    def test_claim_send_verify_report(self, staff_client, room, sender):
        """The contract end to end: claim (200 job), download the photo, heartbeat, progress, result."""
        job_id = _request_send(staff_client, _body(room)).json()["job"]["id"]
        device, client = sender

        claimed = client.post(CLAIM, {}, format="json")

        assert claimed.status_code == 200
        job = claimed.json()["job"]
        assert set(job) == {"id", "room_key", "room_name", "state", "items", "lease_expires_at", "attempt"}
        assert (job["id"], job["room_key"], job["room_name"], job["state"], job["attempt"]) == (
            job_id,
            "chat-9912",
            "(1234) 대한물산",
            "claimed",
            1,
        )
        text_item, photo_item = job["items"]
        assert text_item == {"index": 0, "kind": "text", "text": "이번 달 단가는 30,000원입니다."}
        assert photo_item == {
            "index": 1,
            "kind": "photo",
            "name": "단가표.png",
            "sha256": hashlib.sha256(PNG).hexdigest(),
            "content_url": f"/api/v1/sender/jobs/{job_id}/items/1/content",
        }

        content = client.get(photo_item["content_url"])
        assert content.status_code == 200
        assert b"".join(content.streaming_content) == PNG
        assert content["Content-Type"] == "image/png"

        heartbeat = client.post(_job_url(job_id, "heartbeat"), {}, format="json")
        assert heartbeat.status_code == 200
        assert set(heartbeat.json()) == {"lease_expires_at"}

        sending = client.post(_job_url(job_id, "progress"), {"state": "sending"}, format="json")
        assert (sending.status_code, sending.json()["state"]) == (200, "sending")
        verifying = client.post(
            _job_url(job_id, "progress"), {"state": "verifying", "note": "기준 수 확인"}, format="json"
        )
        assert (verifying.status_code, verifying.json()["state"]) == (200, "verifying")

        result = client.post(
            _job_url(job_id, "result"),
            {"outcome": "sent", "observed": {"texts": 1, "photos": 1, "files": 0}, "resent": {"texts": 0}},
            format="json",
        )
        assert result.status_code == 200
        assert result.json()["state"] == "sent"
        assert result.json()["lease_expires_at"] is None
        stored = SendJob.objects.get(pk=job_id)
        assert stored.observed_counts == {"texts": 1, "photos": 1, "files": 0}
        assert stored.claimed_by == device

    def test_claim_with_nothing_waiting_is_204(self, sender):
        response = sender[1].post(CLAIM, {}, format="json")

        assert response.status_code == 204
        assert response.content == b""

    def test_a_sender_gets_only_jobs_of_rooms_it_serves(self, staff_client, room):
        _request_send(staff_client, _body(room))
        _, client = _device_client(rooms=[RoomFactory(vendor=None)])

        assert client.post(CLAIM, {}, format="json").status_code == 204

    def test_another_devices_job_is_answered_exactly_like_a_missing_one(self, staff_client, room, sender):
        """A job leased to another sender, or one this sender never claimed, is 404 SEND_JOB_NOT_FOUND on every
        job call, byte for byte the answer for an id that does not exist: job ids cannot be probed."""
        job_id = _request_send(staff_client, _body(room)).json()["job"]["id"]
        queued_id = _request_send(staff_client, _body(room, text="다른 안내"), key="key-2").json()["job"]["id"]
        sender[1].post(CLAIM, {}, format="json")
        _, other = _device_client(rooms=[room])
        missing_id = queued_id + 1000

        def calls(target_id):
            return [
                other.post(_job_url(target_id, "heartbeat"), {}, format="json"),
                other.post(_job_url(target_id, "progress"), {"state": "sending"}, format="json"),
                other.post(_job_url(target_id, "result"), {"outcome": "sent"}, format="json"),
                other.get(f"/api/v1/sender/jobs/{target_id}/items/1/content"),
            ]

        for leased, never_claimed, missing in zip(calls(job_id), calls(queued_id), calls(missing_id), strict=True):
            assert (leased.status_code, leased.content) == (404, b'{"error":"SEND_JOB_NOT_FOUND"}')
            assert (never_claimed.status_code, never_claimed.content) == (leased.status_code, leased.content)
            assert (missing.status_code, missing.content) == (leased.status_code, leased.content)
        assert SendJob.objects.get(pk=job_id).state == "claimed"
        assert SendJob.objects.get(pk=queued_id).state == "queued"

    def test_a_lapsed_lease_is_not_held_any_more(self, staff_client, room, sender):
        """After the sweep the job is `unknown`; the former holder's report is a 409 and nobody can claim it."""
        job_id = _request_send(staff_client, _body(room)).json()["job"]["id"]
        _, client = sender
        client.post(CLAIM, {}, format="json")
        send_jobs_expire_leases(now=timezone.now() + timedelta(hours=1))

        response = client.post(_job_url(job_id, "result"), {"outcome": "sent"}, format="json")

        assert response.status_code == 409
        assert response.json() == {"error": "LEASE_NOT_HELD"}
        assert client.post(CLAIM, {}, format="json").status_code == 204
        assert SendJob.objects.get(pk=job_id).state == "unknown"

    def test_unknown_job_and_item_are_404(self, staff_client, room, sender):
        job_id = _request_send(staff_client, _body(room)).json()["job"]["id"]
        _, client = sender
        client.post(CLAIM, {}, format="json")

        missing_job = client.post(_job_url(job_id + 1000, "heartbeat"), {}, format="json")
        text_content = client.get(f"/api/v1/sender/jobs/{job_id}/items/0/content")
        missing_item = client.get(f"/api/v1/sender/jobs/{job_id}/items/7/content")

        assert (missing_job.status_code, missing_job.json()) == (404, {"error": "SEND_JOB_NOT_FOUND"})
        assert (text_content.status_code, text_content.json()) == (404, {"error": "ITEM_NOT_FOUND"})
        assert missing_item.status_code == 404

    def test_bad_progress_and_result_bodies_are_400(self, staff_client, room, sender):
        job_id = _request_send(staff_client, _body(room)).json()["job"]["id"]
        _, client = sender
        client.post(CLAIM, {}, format="json")

        progress = client.post(_job_url(job_id, "progress"), {"state": "sent"}, format="json")
        result = client.post(_job_url(job_id, "result"), {"outcome": "sent", "observed": {"texts": -1}}, format="json")

        assert (progress.status_code, progress.json()["error"]) == (400, "INVALID_SEND_REQUEST")
        assert (result.status_code, result.json()["error"]) == (400, "INVALID_SEND_REQUEST")
        assert SendJob.objects.get(pk=job_id).state == "claimed"

    def test_sent_without_the_observed_counts_is_recorded_as_unknown(self, staff_client, room, sender):
        job_id = _request_send(staff_client, _body(room)).json()["job"]["id"]
        _, client = sender
        client.post(CLAIM, {}, format="json")

        response = client.post(_job_url(job_id, "result"), {"outcome": "sent"}, format="json")

        assert response.status_code == 200
        assert response.json()["state"] == "unknown"

    def test_device_authentication_and_role(self, room):
        """No token → 401 DEVICE_TOKEN_INVALID; an uploader token → 403 DEVICE_ROLE_FORBIDDEN."""
        anonymous = APIClient().post(CLAIM, {}, format="json")
        _, uploader = _device_client(role=Device.Role.UPLOADER)
        forbidden = uploader.post(CLAIM, {}, format="json")

        assert (anonymous.status_code, anonymous.json()) == (401, {"error": "DEVICE_TOKEN_INVALID"})
        assert (forbidden.status_code, forbidden.json()) == (403, {"error": "DEVICE_ROLE_FORBIDDEN"})

    def test_the_schema_documents_the_sender_endpoints(self, staff_client):
        response = APIClient().get("/api/schema/", {"format": "json"})

        assert response.status_code == 200
        paths = response.json()["paths"]
        for path in (
            "/api/v1/send-requests",
            "/api/v1/sender/claim",
            "/api/v1/sender/jobs/{job_id}/heartbeat",
            "/api/v1/sender/jobs/{job_id}/progress",
            "/api/v1/sender/jobs/{job_id}/result",
            "/api/v1/sender/jobs/{job_id}/items/{index}/content",
        ):
            assert path in paths
