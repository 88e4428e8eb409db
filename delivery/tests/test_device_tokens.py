"""Device tokens: optional expiry, rotation by the device (the new token takes over at its first use), staff
requests for a rotation, audit rows."""

from datetime import datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from delivery.models import Device
from delivery.services import (
    DeviceNotPaired,
    device_authenticate,
    device_revoke,
    device_token_rotate,
    device_token_rotation_request,
)
from delivery.tests.factories import DeviceFactory, StaffUserFactory, active_device
from monitoring.models import AuditEvent

HEARTBEAT_URL = "/api/v1/devices/heartbeat"
TOKEN_URL = "/api/v1/devices/token"
ROTATE_URL = "/api/v1/devices/token/rotate"
TOKEN_INVALID = {"error": "DEVICE_TOKEN_INVALID"}


def _client(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def _heartbeat(token: str):
    return _client(token).post(HEARTBEAT_URL, {}, format="json")


def _audit_actions(device) -> list[str]:
    return list(
        AuditEvent.objects.filter(target_type="delivery.device", target_id=str(device.pk))
        .order_by("id")
        .values_list("action", flat=True)
    )


def _at(monkeypatch, moment):
    monkeypatch.setattr(timezone, "now", lambda: moment)


@pytest.mark.django_db
class TestExpiry:
    def test_without_a_ttl_a_token_never_expires(self, settings, monkeypatch):
        settings.DEVICE_TOKEN_TTL_DAYS = 0
        device, token = active_device()
        assert device.token_expires_at is None

        _at(monkeypatch, timezone.now() + timedelta(days=3650))
        assert _heartbeat(token).status_code == 200

    def test_a_token_past_its_expiry_is_refused_with_token_invalid(self, settings, monkeypatch):
        """With DEVICE_TOKEN_TTL_DAYS the token works until its expiry, then every call is 401
        DEVICE_TOKEN_INVALID (the documented error of a token that no longer works)."""
        settings.DEVICE_TOKEN_TTL_DAYS = 30
        before = timezone.now()
        device, token = active_device()
        assert before + timedelta(days=30) <= device.token_expires_at <= timezone.now() + timedelta(days=30)

        _at(monkeypatch, device.token_expires_at - timedelta(seconds=1))
        assert _heartbeat(token).status_code == 200
        _at(monkeypatch, device.token_expires_at)
        refused = _heartbeat(token)

        assert (refused.status_code, refused.json()) == (401, TOKEN_INVALID)
        assert device_authenticate(token) is None

    def test_the_token_status_tells_the_expiry_and_whether_to_rotate(self, settings, monkeypatch):
        """Rotation is due in the last third of a token's life, or when staff asked for it."""
        settings.DEVICE_TOKEN_TTL_DAYS = 30
        device, token = active_device()

        fresh = _client(token).get(TOKEN_URL).json()
        _at(monkeypatch, device.token_expires_at - timedelta(days=10, seconds=1))
        not_yet = _client(token).get(TOKEN_URL).json()
        _at(monkeypatch, device.token_expires_at - timedelta(days=10))
        due = _client(token).get(TOKEN_URL).json()

        assert fresh["device_id"] == device.pk
        assert datetime.fromisoformat(fresh["expires_at"]) == device.token_expires_at
        assert (fresh["rotation_due"], not_yet["rotation_due"], due["rotation_due"]) == (False, False, True)

    def test_rotation_is_due_when_staff_asked_for_it(self, settings):
        settings.DEVICE_TOKEN_TTL_DAYS = 0
        device, token = active_device()
        assert _client(token).get(TOKEN_URL).json() == {
            "device_id": device.pk,
            "role": device.role,
            "expires_at": None,
            "rotation_due": False,
        }

        device_token_rotation_request(device=device, actor=StaffUserFactory())

        assert _client(token).get(TOKEN_URL).json()["rotation_due"] is True
        assert _audit_actions(device)[-1] == "device.token_rotation_request"


@pytest.mark.django_db
class TestRotation:
    def test_a_rotated_token_takes_over_at_its_first_use(self, settings, monkeypatch):
        """The device gets a new token; the old one keeps working until the new one is first used (so a lost
        answer never locks the device out); from then on only the new one works, with a fresh expiry."""
        settings.DEVICE_TOKEN_TTL_DAYS = 30
        device, old_token = active_device()
        device_token_rotation_request(device=device, actor=StaffUserFactory())
        later = timezone.now() + timedelta(days=25)
        _at(monkeypatch, later)

        response = _client(old_token).post(ROTATE_URL, {}, format="json")

        assert response.status_code == 200
        assert response["Cache-Control"] == "no-store"
        new_token = response.json()["token"]
        assert len(new_token) >= 43 and new_token != old_token
        assert _heartbeat(old_token).status_code == 200

        assert _heartbeat(new_token).status_code == 200
        assert (_heartbeat(old_token).status_code, _heartbeat(old_token).json()) == (401, TOKEN_INVALID)
        device.refresh_from_db()
        assert device.pending_token_hash is None
        assert device.token_rotation_requested_at is None
        assert later + timedelta(days=30) == device.token_expires_at
        assert _client(new_token).get(TOKEN_URL).json()["rotation_due"] is False
        assert _audit_actions(device)[-2:] == ["device.token_rotation_begin", "device.token_rotate"]
        assert all(new_token not in str(event.data) for event in AuditEvent.objects.all())

    def test_rotating_again_replaces_a_new_token_that_was_never_used(self):
        """The answer with the first new token was lost: the device rotates again; only the latest works."""
        device, old_token = active_device()
        lost = device_token_rotate(device=device)
        latest = device_token_rotate(device=device)

        assert device_authenticate(lost) is None
        assert device_authenticate(latest) == device
        assert device_authenticate(old_token) is None

    def test_a_new_token_dies_with_the_old_ones_expiry_until_it_is_used(self, settings, monkeypatch):
        """An unused new token is no way around the expiry: it works only while the token it replaces would."""
        settings.DEVICE_TOKEN_TTL_DAYS = 30
        device, _ = active_device()
        new_token = device_token_rotate(device=device)

        _at(monkeypatch, device.token_expires_at + timedelta(seconds=1))

        assert device_authenticate(new_token) is None

    def test_revoking_also_cuts_off_a_new_token(self):
        device, _ = active_device()
        new_token = device_token_rotate(device=device)
        device_revoke(device=device, actor=StaffUserFactory())

        assert device_authenticate(new_token) is None
        device.refresh_from_db()
        assert device.pending_token_hash is None

    def test_a_device_without_a_token_cannot_rotate_or_be_asked_to(self):
        pending = DeviceFactory()
        with pytest.raises(DeviceNotPaired):
            device_token_rotate(device=pending)
        with pytest.raises(DeviceNotPaired):
            device_token_rotation_request(device=pending, actor=StaffUserFactory())

    def test_rotation_needs_a_valid_token(self):
        response = APIClient().post(ROTATE_URL, {}, format="json", HTTP_AUTHORIZATION="Bearer nope")
        assert (response.status_code, response.json()) == (401, TOKEN_INVALID)

    def test_both_roles_may_rotate(self):
        for role in Device.Role.values:
            _, token = active_device(role=role)
            assert _client(token).post(ROTATE_URL, {}, format="json").status_code == 200


@pytest.mark.django_db
class TestAuthenticationCost:
    def test_a_valid_token_costs_one_query(self, django_assert_num_queries):
        """Uploads authenticate on every request: one indexed lookup, whatever the rotation state."""
        device, token = active_device()
        with django_assert_num_queries(1):
            assert device_authenticate(token) == device
        device_token_rotate(device=device)
        with django_assert_num_queries(1):
            assert device_authenticate(token) == device


@pytest.mark.django_db
class TestAdminRotationRequest:
    def test_the_admin_action_asks_the_device_to_rotate(self, client):
        staff = StaffUserFactory(is_superuser=True)
        client.force_login(staff)
        device, token = active_device()

        response = client.post(
            reverse("admin:delivery_device_changelist"),
            {"action": "request_token_rotation", "_selected_action": [device.pk]},
            follow=True,
        )

        texts = [str(message) for message in response.context["messages"]]
        assert any("토큰 교체" in text for text in texts)
        device.refresh_from_db()
        assert device.token_rotation_requested_at is not None
        assert _client(token).get(TOKEN_URL).json()["rotation_due"] is True

    def test_the_detail_page_shows_the_token_dates(self, client):
        client.force_login(StaffUserFactory(is_superuser=True))
        device, _ = active_device()
        page = client.get(reverse("admin:delivery_device_change", args=[device.pk])).content.decode()
        assert "토큰 만료" in page and "토큰 교체 요청" in page
