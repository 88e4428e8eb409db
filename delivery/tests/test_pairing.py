"""Pairing codes: issue, redeem by one compare-and-set, expiry, attempt limit, one error for every failure."""

import hashlib
import threading
import time
from datetime import UTC, datetime, timedelta

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
        """Re-issuing never adds a row; the earlier code stops working."""
        device, first = _issue()
        second = device_pairing_code_issue(device=device, actor=StaffUserFactory())

        assert Device.objects.count() == 1
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


def _wrong_code(right: str) -> str:
    return "ZZZZZZ" if right != "ZZZZZZ" else "YYYYYY"


@pytest.mark.django_db
class TestFailedRedeems:
    def test_a_wrong_code_never_touches_the_codes_it_did_not_match(self):
        """A failed redeem changes no row: the outstanding codes of other devices keep working however many
        wrong codes were tried."""
        first, first_code = _issue()
        second, second_code = _issue()
        before = list(Device.objects.order_by("pk").values())
        for _ in range(20):
            with pytest.raises(PairingCodeInvalid):
                device_pair(code="222222", client_name="x")

        assert list(Device.objects.order_by("pk").values()) == before
        assert device_pair(code=first_code, client_name="pc")[0].pk == first.pk
        assert device_pair(code=second_code, client_name="pc")[0].pk == second.pk

    def test_reissue_after_a_failed_redeem_gives_a_working_code(self):
        """Staff recover from a lost or mistyped code by issuing a new one."""
        device, code = _issue()
        with pytest.raises(PairingCodeInvalid):
            device_pair(code=_wrong_code(code), client_name="x")
        fresh = device_pairing_code_issue(device=device, actor=StaffUserFactory())
        paired, _ = device_pair(code=fresh, client_name="pc")
        assert paired.pk == device.pk


def _post_pair(code, *, address="203.0.113.7", name="pc", **headers):
    return APIClient().post(PAIR_URL, {"code": code, "name": name}, format="json", REMOTE_ADDR=address, **headers)


@pytest.mark.django_db
class TestPairRateLimit:
    def test_five_anonymous_failures_disable_no_outstanding_code(self):
        """Five wrong POSTs from anywhere leave every issued code redeemable (from another address)."""
        devices_and_codes = [_issue() for _ in range(3)]
        for _ in range(5):
            assert _post_pair("222222").status_code == 400

        for number, (device, code) in enumerate(devices_and_codes):
            response = _post_pair(code, address=f"198.51.100.{number + 1}")
            assert response.status_code == 201
            assert response.json()["device_id"] == device.pk

    def test_the_sixth_failure_of_an_address_in_ten_minutes_is_429_with_retry_after(self, settings):
        """Five failed redeems per address per 10 minutes (the defaults); then 429 RATE_LIMITED with Retry-After,
        even for the right code, which is then not looked at (and stays redeemable from elsewhere)."""
        assert (settings.PAIRING_FAILURES_PER_ADDRESS, settings.PAIRING_FAILURE_WINDOW_MINUTES) == (5, 10)
        device, code = _issue()
        for _ in range(5):
            assert _post_pair(_wrong_code(code)).status_code == 400

        limited = _post_pair(code)

        assert limited.status_code == 429
        assert limited.json()["error"] == "RATE_LIMITED"
        assert 0 < int(limited["Retry-After"]) <= 11 * 60
        assert limited["Cache-Control"] == "no-store"
        device.refresh_from_db()
        assert device.status == Device.Status.PENDING
        assert _post_pair(code, address="198.51.100.9").status_code == 201

    def test_an_address_may_try_again_once_its_failures_leave_the_window(self, monkeypatch, settings):
        """The window slides: once Retry-After has passed the address is allowed again."""
        settings.PAIRING_CODE_TTL_MINUTES = 60
        _, code = _issue()
        for _ in range(5):
            assert _post_pair(_wrong_code(code)).status_code == 400
        limited = _post_pair(code)
        assert limited.status_code == 429

        retry_after = timedelta(seconds=int(limited["Retry-After"]))
        now = timezone.now()
        monkeypatch.setattr(timezone, "now", lambda: now + retry_after - timedelta(seconds=2))
        assert _post_pair(code).status_code == 429
        monkeypatch.setattr(timezone, "now", lambda: now + retry_after)
        assert _post_pair(code).status_code == 201

    def test_failures_at_a_minutes_turn_never_exceed_the_limit(self, monkeypatch):
        """Requests whose clocks read either side of a minute's turn count against one limit: three failures
        already in the new minute leave two for a request still in the old one."""
        turn = (timezone.now().timestamp() // 60 + 1) * 60
        new_minute = datetime.fromtimestamp(turn + 0.2, tz=UTC)
        old_minute = datetime.fromtimestamp(turn - 0.2, tz=UTC)
        monkeypatch.setattr(timezone, "now", lambda: new_minute)
        assert [_post_pair("222222").status_code for _ in range(3)] == [400] * 3
        monkeypatch.setattr(timezone, "now", lambda: old_minute)

        assert [_post_pair("222222").status_code for _ in range(5)] == [400, 400, 429, 429, 429]

    def test_successes_are_not_counted_as_failures(self):
        """Only failures count: an address that paired four devices can still make five mistakes."""
        for _ in range(4):
            _, code = _issue()
            assert _post_pair(code).status_code == 201
        for _ in range(5):
            assert _post_pair("222222").status_code == 400
        assert _post_pair("222222").status_code == 429

    def test_malformed_requests_count_as_failures(self):
        """A body that names no usable code is a failed redeem like any other (same 400, same count)."""
        client = APIClient()
        for _ in range(5):
            response = client.post(PAIR_URL, "{code:", content_type="application/json", REMOTE_ADDR="203.0.113.7")
            assert response.content == b'{"error":"PAIRING_CODE_INVALID"}'
        assert _post_pair("222222").status_code == 429

    def test_a_forwarded_for_header_does_not_make_a_new_address(self):
        """Without a configured proxy (`API_NUM_PROXIES` 0) the peer address counts, not X-Forwarded-For."""
        for number in range(5):
            assert _post_pair("222222", HTTP_X_FORWARDED_FOR=f"192.0.2.{number}").status_code == 400
        assert _post_pair("222222", HTTP_X_FORWARDED_FOR="192.0.2.200").status_code == 429

    def test_an_ipv6_client_is_limited_by_its_64_prefix(self):
        """Addresses of one IPv6 /64 (one customer line) share their failures."""
        for number in range(5):
            assert _post_pair("222222", address=f"2001:db8:1:2::{number + 1}").status_code == 400
        assert _post_pair("222222", address="2001:db8:1:2:ffff::9").status_code == 429
        assert _post_pair("222222", address="2001:db8:1:3::1").status_code == 400

    def test_the_global_ceiling_limits_guesses_from_many_addresses(self, settings):
        """Past `PAIRING_FAILURES_GLOBAL` failures in the window every address gets 429, a right code too."""
        settings.PAIRING_FAILURES_GLOBAL = 12
        _, code = _issue()
        for number in range(12):
            assert _post_pair("222222", address=f"198.51.100.{number + 1}").status_code == 400

        limited = _post_pair(code, address="203.0.113.99")

        assert limited.status_code == 429
        assert limited.json()["error"] == "RATE_LIMITED"
        assert int(limited["Retry-After"]) > 0


@pytest.mark.django_db(transaction=True)
class TestConcurrentFailures:
    def test_concurrent_failures_of_one_address_never_exceed_the_limit(self):
        """Twelve simultaneous wrong redeems from one address: exactly five are looked at (400), seven get 429."""
        barrier = threading.Barrier(12)
        results = {}

        def guess():
            barrier.wait(timeout=10)
            return _post_pair("222222").status_code

        threads = [_run_in_thread(guess, results, n) for n in range(12)]
        for thread in threads:
            thread.join(timeout=60)

        assert sorted(results.values()) == [400] * 5 + [429] * 7


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
        """Unknown, expired, used and malformed requests are indistinguishable from outside."""
        settings.PAIRING_FAILURES_PER_ADDRESS = 100
        client = APIClient()

        expired_device, expired = _issue()
        Device.objects.filter(pk=expired_device.pk).update(pairing_expires_at=timezone.now() - timedelta(seconds=1))
        _, used = _issue()
        client.post(PAIR_URL, {"code": used, "name": "pc"}, format="json")
        replaced_device, unknown = _issue()
        device_pairing_code_issue(device=replaced_device, actor=StaffUserFactory())  # nobody holds `unknown` now

        failures = {
            "unknown": client.post(PAIR_URL, {"code": unknown, "name": "pc"}, format="json"),
            "expired": client.post(PAIR_URL, {"code": expired, "name": "pc"}, format="json"),
            "used": client.post(PAIR_URL, {"code": used, "name": "pc"}, format="json"),
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
