"""Pairing codes: issue, redeem by one compare-and-set, expiry, attempt limit, one error for every failure."""

import hashlib
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from delivery.models import Device
from delivery.services import (
    DeviceRevoked,
    PairingCodeInvalid,
    device_authenticate,
    device_pair,
    device_pairing_code_issue,
    device_register,
    device_revoke,
)
from delivery.services.devices import PAIRING_CODE_ALPHABET
from delivery.tests.factories import DeviceFactory, StaffUserFactory, active_device
from monitoring.models import AuditEvent

PAIR_URL = "/api/v1/devices/pair"


def _audit_actions(device) -> list[str]:
    return list(
        AuditEvent.objects.filter(target_type="delivery.device", target_id=str(device.pk))
        .order_by("id")
        .values_list("action", flat=True)
    )


def _issue(device=None, **device_fields):
    device = device or DeviceFactory(**device_fields)
    return device, device_pairing_code_issue(device=device, actor=StaffUserFactory())


@pytest.mark.django_db
class TestIssue:
    def test_code_is_six_characters_without_ambiguous_ones_and_stored_only_as_a_hash(self, settings):
        """The plain code is returned once; the row keeps a 64-hex hash, an expiry of TTL and zero attempts."""
        settings.PAIRING_CODE_TTL_MINUTES = 7
        before = timezone.now()
        device, code = _issue()

        assert len(code) == 6
        assert set(code) <= set(PAIRING_CODE_ALPHABET)
        assert not set(code) & set("0O1IL")
        device.refresh_from_db()
        assert len(device.pairing_code_hash) == 64
        assert code not in device.pairing_code_hash
        assert device.pairing_code_hash != hashlib.sha256(code.encode()).hexdigest()  # keyed, not a bare digest
        assert before + timedelta(minutes=7) <= device.pairing_expires_at <= timezone.now() + timedelta(minutes=7)
        assert device.pairing_attempts == 0
        assert device.status == Device.Status.PENDING

    def test_codes_use_the_whole_alphabet(self):
        """Codes are drawn at random from all 31 allowed characters."""
        device = DeviceFactory()
        staff = StaffUserFactory()
        seen = set()
        for _ in range(60):
            seen |= set(device_pairing_code_issue(device=device, actor=staff))
        assert seen <= set(PAIRING_CODE_ALPHABET)
        assert len(seen) > 20

    def test_reissue_replaces_the_code_on_the_same_row(self):
        """Re-issuing never adds a row; the earlier code stops working and the attempt count starts again."""
        device, first = _issue()
        Device.objects.filter(pk=device.pk).update(pairing_attempts=3)
        second = device_pairing_code_issue(device=device, actor=StaffUserFactory())

        assert Device.objects.count() == 1
        device.refresh_from_db()
        assert device.pairing_attempts == 0
        if first != second:
            with pytest.raises(PairingCodeInvalid):
                device_pair(code=first, client_name="pc")
        paired, _ = device_pair(code=second, client_name="pc")
        assert paired.pk == device.pk

    def test_issue_and_register_are_audited(self):
        """Registration and each code issue write an audit row naming the staff member, without the code."""
        staff = StaffUserFactory()
        device = device_register(name="1층 CS PC", role=Device.Role.UPLOADER, actor=staff)
        code = device_pairing_code_issue(device=device, actor=staff)

        events = AuditEvent.objects.filter(target_id=str(device.pk)).order_by("id")
        assert [e.action for e in events] == ["device.register", "device.pairing_code_issue"]
        assert all(e.actor_kind == "staff" and e.actor_id == str(staff.pk) for e in events)
        assert all(code not in str(e.data) for e in events)

    def test_revoked_device_gets_no_code(self):
        """A revoked device is final: issuing a code for it raises DeviceRevoked and stores nothing."""
        device = DeviceFactory()
        device_revoke(device=device, actor=StaffUserFactory())
        with pytest.raises(DeviceRevoked):
            device_pairing_code_issue(device=device, actor=StaffUserFactory())
        device.refresh_from_db()
        assert device.pairing_code_hash is None


@pytest.mark.django_db
class TestRedeem:
    def test_redeem_activates_the_device_and_returns_its_token_once(self):
        """The device turns active with the client's name; only the token's SHA-256 is stored; the code is gone."""
        device, code = _issue(role=Device.Role.SENDER)
        paired, token = device_pair(code=code, client_name="cs-mac-01")

        assert paired.pk == device.pk
        assert paired.status == Device.Status.ACTIVE
        assert paired.client_name == "cs-mac-01"
        assert paired.paired_at is not None
        assert paired.token_hash == hashlib.sha256(token.encode()).hexdigest()
        assert paired.pairing_code_hash is None
        assert len(token) >= 43
        assert device_authenticate(token) == paired
        assert _audit_actions(device)[-1] == "device.pair"

    def test_code_is_accepted_in_lower_case_and_with_spaces(self):
        """People type codes: case, spaces and dashes do not matter."""
        device, code = _issue()
        typed = f" {code[:3].lower()}-{code[3:].lower()} "
        paired, _ = device_pair(code=typed, client_name="pc")
        assert paired.pk == device.pk

    def test_a_used_code_fails(self):
        """A code pairs once; the second redeem is refused."""
        _, code = _issue()
        device_pair(code=code, client_name="pc")
        with pytest.raises(PairingCodeInvalid):
            device_pair(code=code, client_name="pc")

    def test_an_expired_code_fails(self, monkeypatch, settings):
        """Past its TTL the code is refused and the device stays pending."""
        settings.PAIRING_CODE_TTL_MINUTES = 10
        device, code = _issue()
        later = timezone.now() + timedelta(minutes=10, seconds=1)
        monkeypatch.setattr(timezone, "now", lambda: later)

        with pytest.raises(PairingCodeInvalid):
            device_pair(code=code, client_name="pc")
        device.refresh_from_db()
        assert device.status == Device.Status.PENDING
        assert device.token_hash is None

    def test_a_code_just_inside_its_ttl_works(self, monkeypatch, settings):
        """The TTL is the whole window: one second before expiry the code still pairs."""
        settings.PAIRING_CODE_TTL_MINUTES = 10
        _, code = _issue()
        later = timezone.now() + timedelta(minutes=10) - timedelta(seconds=1)
        monkeypatch.setattr(timezone, "now", lambda: later)
        device_pair(code=code, client_name="pc")

    def test_a_code_of_a_revoked_device_fails(self):
        """Revoking clears the outstanding code."""
        device, code = _issue()
        device_revoke(device=device, actor=StaffUserFactory())
        with pytest.raises(PairingCodeInvalid):
            device_pair(code=code, client_name="pc")


@pytest.mark.django_db
class TestAttemptLimit:
    def test_the_right_code_fails_after_max_failed_attempts(self, settings):
        """After PAIRING_CODE_MAX_ATTEMPTS wrong codes the right code is refused too."""
        settings.PAIRING_CODE_MAX_ATTEMPTS = 5
        device, code = _issue()
        for _ in range(5):
            with pytest.raises(PairingCodeInvalid):
                device_pair(code="ZZZZZZ" if code != "ZZZZZZ" else "YYYYYY", client_name="x")
        device.refresh_from_db()
        assert device.pairing_attempts == 5
        with pytest.raises(PairingCodeInvalid):
            device_pair(code=code, client_name="pc")

    def test_the_right_code_works_below_the_limit(self, settings):
        """Four wrong guesses leave a code with a limit of five usable."""
        settings.PAIRING_CODE_MAX_ATTEMPTS = 5
        _, code = _issue()
        for _ in range(4):
            with pytest.raises(PairingCodeInvalid):
                device_pair(code="ZZZZZZ" if code != "ZZZZZZ" else "YYYYYY", client_name="x")
        device_pair(code=code, client_name="pc")

    def test_a_failure_counts_against_every_live_code_only(self, settings):
        """A wrong code cannot be tied to one row: it counts one attempt on every live code, none on spent ones."""
        settings.PAIRING_CODE_MAX_ATTEMPTS = 5
        first, _ = _issue()
        second, _ = _issue()
        expired, _ = _issue()
        Device.objects.filter(pk=expired.pk).update(pairing_expires_at=timezone.now() - timedelta(seconds=1))
        exhausted, _ = _issue()
        Device.objects.filter(pk=exhausted.pk).update(pairing_attempts=5)
        never_issued = DeviceFactory()

        with pytest.raises(PairingCodeInvalid):
            device_pair(code="222222", client_name="x")

        attempts = dict(Device.objects.values_list("pk", "pairing_attempts"))
        assert attempts == {first.pk: 1, second.pk: 1, expired.pk: 0, exhausted.pk: 5, never_issued.pk: 0}

    def test_reissue_after_exhaustion_gives_a_working_code(self, settings):
        """Staff recover from a burned code by issuing a new one."""
        settings.PAIRING_CODE_MAX_ATTEMPTS = 1
        device, code = _issue()
        with pytest.raises(PairingCodeInvalid):
            device_pair(code="ZZZZZZ" if code != "ZZZZZZ" else "YYYYYY", client_name="x")
        fresh = device_pairing_code_issue(device=device, actor=StaffUserFactory())
        paired, _ = device_pair(code=fresh, client_name="pc")
        assert paired.pk == device.pk


@pytest.mark.django_db
class TestRepair:
    def test_an_active_device_keeps_its_token_until_the_new_code_is_redeemed(self):
        """Re-pairing: issuing a code does not cut the device off; redeeming it replaces the token."""
        device, old_token = active_device(role=Device.Role.SENDER)
        code = device_pairing_code_issue(device=device, actor=StaffUserFactory())
        assert device_authenticate(old_token) == device

        paired, new_token = device_pair(code=code, client_name="new mac")
        assert paired.pk == device.pk
        assert paired.status == Device.Status.ACTIVE
        assert device_authenticate(old_token) is None
        assert device_authenticate(new_token) == device


def _run_in_thread(target, results, key):
    def run():
        try:
            results[key] = target()
        except Exception as exc:  # the test inspects what each racer got
            results[key] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
class TestConcurrentRedeem:
    def test_two_simultaneous_redeems_of_one_code_give_exactly_one_success(self):
        """Two threads on separate connections redeem the same code at once: one token, one refusal; repeated."""
        for round_number in range(10):
            device, code = _issue()
            barrier = threading.Barrier(2)
            results = {}

            def redeem(name, barrier=barrier, code=code):
                barrier.wait(timeout=10)
                return device_pair(code=code, client_name=name)

            threads = [_run_in_thread(lambda n=n: redeem(n), results, n) for n in ("a", "b")]
            for thread in threads:
                thread.join(timeout=30)

            successes = [r for r in results.values() if isinstance(r, tuple)]
            failures = [r for r in results.values() if isinstance(r, PairingCodeInvalid)]
            assert (len(successes), len(failures)) == (1, 1), f"round {round_number}: {results!r}"
            (winner, token) = successes[0]
            device.refresh_from_db()
            assert device.token_hash == hashlib.sha256(token.encode()).hexdigest()
            assert device.client_name == winner.client_name
            assert _audit_actions(device).count("device.pair") == 1

    def test_a_redeem_waiting_on_an_uncommitted_redeem_fails_once_it_commits(self):
        """The second UPDATE blocks on the row the first one changed, then re-checks it and matches nothing."""
        device, code = _issue()
        first_updated = threading.Event()
        release_first = threading.Event()
        results = {}

        def first():
            with transaction.atomic():
                paired = device_pair(code=code, client_name="first")
                first_updated.set()
                release_first.wait(timeout=30)
            return paired

        first_thread = _run_in_thread(first, results, "first")
        assert first_updated.wait(timeout=30)
        second_thread = _run_in_thread(lambda: device_pair(code=code, client_name="second"), results, "second")
        _wait_until_a_backend_waits_on_a_lock()
        release_first.set()
        first_thread.join(timeout=30)
        second_thread.join(timeout=30)

        assert isinstance(results["first"], tuple)
        assert isinstance(results["second"], PairingCodeInvalid)
        device.refresh_from_db()
        assert device.client_name == "first"


def _wait_until_a_backend_waits_on_a_lock():
    with connection.cursor() as cursor:
        for _ in range(300):
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.05)
    raise AssertionError("The second redeem never waited on the first one's row lock.")


@pytest.mark.django_db
class TestPairApi:
    def test_success_returns_201_with_the_token_once_and_no_store(self):
        """201 `{device_id, token, role, name}` with `Cache-Control: no-store`; the token authenticates."""
        device, code = _issue(role=Device.Role.SENDER, name="2층 발송 Mac")
        response = APIClient().post(PAIR_URL, {"code": code, "name": "cs-mac-02"}, format="json")

        assert response.status_code == 201
        assert response["Cache-Control"] == "no-store"
        body = response.json()
        assert set(body) == {"device_id", "token", "role", "name"}
        assert body["device_id"] == device.pk
        assert body["role"] == "sender"
        assert body["name"] == "2층 발송 Mac"
        assert device_authenticate(body["token"]) == device

    def test_every_failure_is_the_same_400_body_with_no_store(self, settings):
        """Unknown, expired, used, exhausted and malformed requests are indistinguishable from outside."""
        settings.PAIRING_CODE_MAX_ATTEMPTS = 100
        client = APIClient()

        expired_device, expired = _issue()
        Device.objects.filter(pk=expired_device.pk).update(pairing_expires_at=timezone.now() - timedelta(seconds=1))
        _, used = _issue()
        client.post(PAIR_URL, {"code": used, "name": "pc"}, format="json")
        exhausted_device, exhausted = _issue()
        Device.objects.filter(pk=exhausted_device.pk).update(pairing_attempts=100)
        replaced_device, unknown = _issue()
        device_pairing_code_issue(device=replaced_device, actor=StaffUserFactory())  # nobody holds `unknown` now

        failures = {
            "unknown": client.post(PAIR_URL, {"code": unknown, "name": "pc"}, format="json"),
            "expired": client.post(PAIR_URL, {"code": expired, "name": "pc"}, format="json"),
            "used": client.post(PAIR_URL, {"code": used, "name": "pc"}, format="json"),
            "too_many_attempts": client.post(PAIR_URL, {"code": exhausted, "name": "pc"}, format="json"),
            "missing_name": client.post(PAIR_URL, {"code": unknown}, format="json"),
            "not_json": client.post(PAIR_URL, "{code:", content_type="application/json"),
            "wrong_media_type": client.post(PAIR_URL, "code=AAAAAA", content_type="text/plain"),
            "list_body": client.post(PAIR_URL, [1, 2], format="json"),
        }
        for reason, response in failures.items():
            assert response.status_code == 400, reason
            assert response.content == b'{"error":"PAIRING_CODE_INVALID"}', reason
            assert response["Cache-Control"] == "no-store", reason


@pytest.mark.django_db
class TestDeviceAdmin:
    @pytest.fixture
    def admin_client(self, client):
        staff = StaffUserFactory(is_superuser=True)
        client.force_login(staff)
        return client

    def test_add_registers_a_pending_device_with_an_audit_row(self, admin_client):
        """The add form takes a name and a role; the device is created through the service."""
        response = admin_client.post(reverse("admin:delivery_device_add"), {"name": "1층 CS PC", "role": "uploader"})
        assert response.status_code == 302
        device = Device.objects.get()
        assert (device.name, device.role, device.status) == ("1층 CS PC", "uploader", "pending")
        assert _audit_actions(device) == ["device.register"]

    def test_issue_action_shows_the_code_once_with_its_ttl(self, admin_client, settings):
        """The action puts the plain code and TTL in a message; the next page no longer shows it; it pairs."""
        settings.PAIRING_CODE_TTL_MINUTES = 10
        device = DeviceFactory(name="1층 CS PC")
        changelist = reverse("admin:delivery_device_changelist")
        response = admin_client.post(
            changelist, {"action": "issue_pairing_code", "_selected_action": [device.pk]}, follow=True
        )
        texts = [str(m) for m in response.context["messages"]]
        assert len(texts) == 1
        assert "10분" in texts[0]
        code = texts[0].split("페어링 코드 ")[1][:6]

        again = admin_client.get(changelist)
        assert code not in again.content.decode()
        paired, _ = device_pair(code=code, client_name="pc")
        assert paired.pk == device.pk

    def test_detail_page_is_read_only_and_shows_no_hash(self, admin_client):
        """Hashes never reach the page, and the page offers no save."""
        device, _ = active_device()
        device_pairing_code_issue(device=device, actor=StaffUserFactory())
        device.refresh_from_db()
        page = admin_client.get(reverse("admin:delivery_device_change", args=[device.pk])).content.decode()
        assert device.token_hash not in page
        assert device.pairing_code_hash not in page
        assert 'name="_save"' not in page

    def test_revoke_action_cuts_the_device_off(self, admin_client):
        """The revoke action revokes every selected device and writes an audit row for each."""
        device, token = active_device()
        admin_client.post(
            reverse("admin:delivery_device_changelist"), {"action": "revoke", "_selected_action": [device.pk]}
        )
        device.refresh_from_db()
        assert device.status == Device.Status.REVOKED
        assert device_authenticate(token) is None
        assert _audit_actions(device)[-1] == "device.revoke"

    def test_devices_cannot_be_deleted(self, admin_client):
        """A device is evidence for audit rows and send jobs: deletion is not offered."""
        device = DeviceFactory()
        response = admin_client.get(reverse("admin:delivery_device_delete", args=[device.pk]))
        assert response.status_code == 403
