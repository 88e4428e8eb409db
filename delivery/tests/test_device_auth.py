"""Device token authentication, role separation, revocation and last-seen throttling."""

from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.response import Response
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.views import APIView

from delivery.api.authentication import DeviceTokenAuthentication
from delivery.api.permissions import IsDevice, IsSenderDevice, IsUploaderDevice
from delivery.models import Device
from delivery.services import device_pairing_code_issue, device_revoke
from delivery.services.devices import LAST_SEEN_RESOLUTION
from delivery.tests.factories import DeviceFactory, StaffUserFactory, active_device

HEARTBEAT_URL = "/api/v1/devices/heartbeat"
TOKEN_INVALID = {"error": "DEVICE_TOKEN_INVALID"}
ROLE_FORBIDDEN = {"error": "DEVICE_ROLE_FORBIDDEN"}


def _bearer(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def _view_for(permission):
    class RoleProtectedApi(APIView):
        authentication_classes = [DeviceTokenAuthentication]
        permission_classes = [permission]

        def post(self, request):
            return Response({"device_id": request.user.pk})

    return RoleProtectedApi.as_view()


def _call(permission, headers):
    request = APIRequestFactory().post("/role-protected", {}, format="json", **headers)
    response = _view_for(permission)(request)
    response.render()
    return response


@pytest.mark.django_db
class TestTokenAuthentication:
    def test_heartbeat_with_a_valid_token_answers_ok_and_records_last_seen(self):
        """Any active device may heartbeat; the answer carries the server time; last_seen_at is set."""
        device, token = active_device(role=Device.Role.UPLOADER)
        response = APIClient().post(
            HEARTBEAT_URL,
            {"rooms": [{"room_key": "chat-1", "room_name": "(1234) 대한물산"}]},
            format="json",
            **_bearer(token),
        )
        assert response.status_code == 200
        body = response.json()
        assert body["ok"] is True
        assert abs(datetime.fromisoformat(body["server_time"]) - timezone.now()) < timedelta(minutes=1)
        device.refresh_from_db()
        assert device.last_seen_at is not None

    @pytest.mark.parametrize(
        "header",
        [
            None,
            "Bearer",
            "Bearer not-a-token",
            "Bearer two parts",
            "Token abc",
        ],
    )
    def test_missing_or_bad_token_is_401_token_invalid(self, header):
        """No token, an unknown one, or a malformed header: 401 `DEVICE_TOKEN_INVALID` with a Bearer challenge."""
        headers = {} if header is None else {"HTTP_AUTHORIZATION": header}
        response = APIClient().post(HEARTBEAT_URL, {}, format="json", **headers)
        assert response.status_code == 401
        assert response.json() == TOKEN_INVALID
        assert response["WWW-Authenticate"] == "Bearer"

    def test_a_revoked_token_is_refused_on_the_very_next_request(self):
        """Revocation takes effect at once: the same client, authenticated a moment ago, now gets 401."""
        device, token = active_device()
        client = APIClient()
        assert client.post(HEARTBEAT_URL, {}, format="json", **_bearer(token)).status_code == 200

        device_revoke(device=device, actor=StaffUserFactory())

        response = client.post(HEARTBEAT_URL, {}, format="json", **_bearer(token))
        assert response.status_code == 401
        assert response.json() == TOKEN_INVALID

    def test_revocation_clears_the_stored_hashes(self):
        """A revoked row keeps no token or code hash and records when it was revoked."""
        device, _ = active_device()
        device_pairing_code_issue(device=device, actor=StaffUserFactory())
        device_revoke(device=device, actor=StaffUserFactory())
        device.refresh_from_db()
        assert device.status == Device.Status.REVOKED
        assert device.token_hash is None
        assert device.pairing_code_hash is None
        assert device.revoked_at is not None

    def test_heartbeat_rejects_a_malformed_room_list(self):
        """`rooms` must be a list of {room_key, room_name}."""
        _, token = active_device(role=Device.Role.SENDER)
        response = APIClient().post(HEARTBEAT_URL, {"rooms": [{"room_key": "x"}]}, format="json", **_bearer(token))
        assert response.status_code == 400
        assert response.json()["error"] == "INVALID"


@pytest.mark.django_db
class TestRoleSeparation:
    @pytest.mark.parametrize(
        ("role", "permission", "allowed"),
        [
            (Device.Role.UPLOADER, IsUploaderDevice, True),
            (Device.Role.SENDER, IsUploaderDevice, False),
            (Device.Role.SENDER, IsSenderDevice, True),
            (Device.Role.UPLOADER, IsSenderDevice, False),
            (Device.Role.UPLOADER, IsDevice, True),
            (Device.Role.SENDER, IsDevice, True),
        ],
    )
    def test_a_token_reaches_only_its_roles_endpoints(self, role, permission, allowed):
        """An uploader token cannot use sender endpoints and the reverse: 403 `DEVICE_ROLE_FORBIDDEN`."""
        device, token = active_device(role=role)
        response = _call(permission, _bearer(token))
        if allowed:
            assert response.status_code == 200
            assert response.data == {"device_id": device.pk}
        else:
            assert response.status_code == 403
            assert response.data == ROLE_FORBIDDEN

    @pytest.mark.parametrize("permission", [IsUploaderDevice, IsSenderDevice, IsDevice])
    def test_role_permissions_answer_401_without_a_token(self, permission):
        """Without a device, every device permission answers 401 `DEVICE_TOKEN_INVALID`, never 403."""
        response = _call(permission, {})
        assert response.status_code == 401
        assert response.data == TOKEN_INVALID

    def test_heartbeat_serves_both_roles(self):
        """The heartbeat endpoint is for any role."""
        client = APIClient()
        for role in Device.Role.values:
            _, token = active_device(role=role)
            assert client.post(HEARTBEAT_URL, {}, format="json", **_bearer(token)).status_code == 200

    def test_a_pending_device_has_no_token_that_works(self):
        """A registered but never paired device cannot authenticate, even with an empty Bearer value."""
        DeviceFactory()
        response = APIClient().post(HEARTBEAT_URL, {}, format="json", HTTP_AUTHORIZATION="Bearer ")
        assert response.status_code == 401


@pytest.mark.django_db
class TestLastSeenThrottle:
    def test_requests_within_the_resolution_do_not_write(self, monkeypatch):
        """last_seen_at is written at most once per LAST_SEEN_RESOLUTION, not on every request."""
        device, token = active_device()
        client = APIClient()
        client.post(HEARTBEAT_URL, {}, format="json", **_bearer(token))
        device.refresh_from_db()
        first_seen = device.last_seen_at

        with CaptureQueriesContext(connection) as queries:
            client.post(HEARTBEAT_URL, {}, format="json", **_bearer(token))
        assert not [q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
        device.refresh_from_db()
        assert device.last_seen_at == first_seen

        later = timezone.now() + LAST_SEEN_RESOLUTION + timedelta(seconds=1)
        monkeypatch.setattr(timezone, "now", lambda: later)
        client.post(HEARTBEAT_URL, {}, format="json", **_bearer(token))
        device.refresh_from_db()
        assert device.last_seen_at == later
