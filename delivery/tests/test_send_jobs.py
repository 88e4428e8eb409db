"""Send jobs through the services on real PostgreSQL: idempotency, leases, transitions, alerts, staff resolution."""

import hashlib
import threading
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.utils import timezone

from conversations.tests.factories import QuestionFactory, RoomFactory
from delivery import selectors
from delivery.models import Device, SenderRoom, SendJob, SendJobItem
from delivery.services import (
    IdempotencyKeyReused,
    LeaseNotHeld,
    SendJobStateConflict,
    SendRequestInvalid,
    SendStateUnknown,
    SubmitOutcome,
    device_heartbeat,
    device_revoke,
    send_job_claim,
    send_job_heartbeat,
    send_job_progress,
    send_job_report,
    send_job_resolve_unknown,
    send_jobs_expire_leases,
    send_request_submit,
    sender_room_set,
    sender_rooms_report,
)
from delivery.services.send_jobs import ALLOWED_TRANSITIONS, _transition
from delivery.tasks import expire_send_leases
from delivery.tests.factories import StaffUserFactory, active_device
from monitoring.models import Alert, AuditEvent

State = SendJob.State
# Smallest valid PNG signature plus padding: enough for the image check.
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
FULL = {"texts": 1, "photos": 1, "files": 0}


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def room(db):
    return RoomFactory(vendor=None, name="(1234) 대한물산")


@pytest.fixture
def staff(db):
    return StaffUserFactory()


@pytest.fixture
def sender(room):
    device, _ = active_device(role=Device.Role.SENDER, name="발송 Mac 1")
    sender_rooms_report(device=device, rooms=[{"room_key": room.stable_key, "room_name": room.name}])
    return device


@pytest.fixture
def other_sender(room):
    device, _ = active_device(role=Device.Role.SENDER, name="발송 Mac 2")
    sender_rooms_report(device=device, rooms=[{"room_key": room.stable_key, "room_name": room.name}])
    return device


def _items(text="이번 달 단가는 30,000원입니다.", photo=PNG):
    return [{"kind": "text", "text": text}, {"kind": "photo", "name": "단가표.png", "content": photo}]


def _submit(room, actor, key="key-1", items=None, question=None):
    return send_request_submit(
        room=room, items=_items() if items is None else items, idempotency_key=key, question=question, actor=actor
    )


def _audit_actions(job) -> list[str]:
    return list(selectors.send_job_history(job=job).values_list("action", flat=True))


def _drive(job, device, state):
    """Bring a fresh queued job to `state` through the real services."""
    if state == State.QUEUED:
        return job
    claimed = send_job_claim(device=device)
    assert claimed.pk == job.pk
    if state in (State.SENDING, State.VERIFYING):
        send_job_progress(job=job, device=device, state=state)
    elif state in (State.SENT, State.FAILED, State.UNKNOWN):
        send_job_report(job=job, device=device, outcome=state, observed=FULL, resent={}, reason="테스트")
    job.refresh_from_db()
    assert job.state == state
    return job


def _live_alerts(kind):
    return Alert.objects.filter(kind=kind).exclude(status=Alert.Status.CLOSED)


@pytest.mark.django_db
class TestSubmit:
    def test_new_key_creates_a_queued_job_with_items_hashes_and_an_audit_row(self, room, staff, sender):
        """A first request stores the job queued, its items in order, photo bytes by hash, and `send_job.queued`."""
        job, outcome = _submit(room, staff)

        assert outcome == SubmitOutcome.CREATED
        assert job.state == State.QUEUED
        assert job.attempt == 1
        assert job.created_by == staff.username
        assert job.expected_counts == {"texts": 1, "photos": 1, "files": 0}
        text, photo = job.items.order_by("index")
        assert (text.index, text.kind, text.text) == (0, "text", "이번 달 단가는 30,000원입니다.")
        assert (photo.index, photo.kind, photo.name) == (1, "photo", "단가표.png")
        assert photo.sha256 == hashlib.sha256(PNG).hexdigest()
        assert photo.size == len(PNG)
        with default_storage.open(photo.file.name, "rb") as stored:
            assert stored.read() == PNG
        event = AuditEvent.objects.get(target_type="delivery.sendjob", target_id=str(job.pk))
        assert event.action == "send_job.queued"
        assert event.actor_kind == AuditEvent.ActorKind.STAFF
        assert event.data["to"] == "queued"

    @pytest.mark.parametrize("state", [State.QUEUED, State.CLAIMED, State.SENDING, State.VERIFYING, State.SENT])
    def test_same_key_in_progress_or_sent_is_returned_as_it_is_and_never_queued_twice(self, room, staff, sender, state):
        """queued / claimed / sending / verifying / sent: the retry gets the same job, unchanged, no new row."""
        job, _ = _submit(room, staff)
        job = _drive(job, sender, state)
        history_before = _audit_actions(job)

        again, outcome = _submit(room, staff)

        assert outcome == SubmitOutcome.REPLAYED
        assert again.pk == job.pk
        assert again.state == state
        assert again.attempt == 1
        assert SendJob.objects.count() == 1
        assert SendJobItem.objects.count() == 2
        assert _audit_actions(job) == history_before

    def test_same_key_of_a_failed_job_queues_it_again_with_the_next_attempt(self, room, staff, sender):
        """Only `failed` is retried: back to queued, attempt + 1, old counts cleared, audited, claimable again."""
        job, _ = _submit(room, staff)
        _drive(job, sender, State.FAILED)

        again, outcome = _submit(room, staff)

        assert outcome == SubmitOutcome.REQUEUED
        assert again.pk == job.pk
        job.refresh_from_db()
        assert (job.state, job.attempt, job.reason, job.observed_counts) == (State.QUEUED, 2, "", {})
        requeue = selectors.send_job_history(job=job).last()
        assert requeue.action == "send_job.queued"
        assert requeue.data["from"] == "failed"
        assert requeue.data["previous_reason"] == "테스트"
        assert send_job_claim(device=sender).pk == job.pk
        assert SendJob.objects.count() == 1

    def test_same_key_of_an_unknown_job_is_an_error_never_success(self, room, staff, sender):
        """`unknown` may or may not have arrived: the retry raises `SendStateUnknown` and changes nothing."""
        job, _ = _submit(room, staff)
        _drive(job, sender, State.UNKNOWN)

        with pytest.raises(SendStateUnknown) as raised:
            _submit(room, staff)

        assert raised.value.job.pk == job.pk
        job.refresh_from_db()
        assert job.state == State.UNKNOWN
        assert job.attempt == 1

    @pytest.mark.parametrize(
        "change",
        [
            {"items": _items(text="이번 달 단가는 35,000원입니다.")},
            {"items": _items(photo=PNG + b"\x01")},
            {"items": _items()[:1]},
            {"other_room": True},
        ],
        ids=["text", "photo-bytes", "fewer-items", "room"],
    )
    def test_a_different_body_under_the_same_key_is_refused(self, room, staff, change):
        """Same key, different text, photo, item list or room → `IdempotencyKeyReused`; the job is untouched."""
        job, _ = _submit(room, staff)
        target_room = RoomFactory(vendor=None, name="(5678) 가온상사") if change.get("other_room") else room

        with pytest.raises(IdempotencyKeyReused) as raised:
            _submit(target_room, staff, items=change.get("items"))

        assert raised.value.job.pk == job.pk
        assert SendJob.objects.count() == 1
        assert SendJobItem.objects.count() == 2

    def test_same_body_for_another_question_is_a_different_body(self, room, staff):
        """The question the answer belongs to is part of the body."""
        first, second = QuestionFactory(message__room=room), QuestionFactory(message__room=room)
        _submit(room, staff, question=first)

        with pytest.raises(IdempotencyKeyReused):
            _submit(room, staff, question=second)

    @pytest.mark.parametrize(
        ("items", "field"),
        [
            ([], "items"),
            ([{"kind": "text", "text": "   "}], "text"),
            ([{"kind": "video", "text": "x"}], "kind"),
            ([{"kind": "photo", "name": "../etc/passwd", "content": PNG}], "name"),
            ([{"kind": "photo", "name": ".hidden.png", "content": PNG}], "name"),
            ([{"kind": "photo", "name": "a.png", "content": b""}], "content"),
            ([{"kind": "photo", "name": "a.png", "content": b"not an image at all"}], "content"),
        ],
        ids=["empty", "blank-text", "kind", "path-name", "dot-name", "no-content", "not-image"],
    )
    def test_invalid_items_are_refused_and_nothing_is_stored(self, room, staff, items, field):
        """Items are validated before anything is written."""
        with pytest.raises(SendRequestInvalid) as raised:
            _submit(room, staff, items=items)

        assert raised.value.field == field
        assert SendJob.objects.count() == 0

    def test_limits_on_item_count_and_size_come_from_settings(self, room, staff, settings):
        """SEND_REQUEST_MAX_ITEMS and SEND_ITEM_MAX_BYTES are read at call time."""
        settings.SEND_REQUEST_MAX_ITEMS = 2
        with pytest.raises(SendRequestInvalid):
            _submit(room, staff, items=[{"kind": "text", "text": "하나"}] * 3)
        settings.SEND_ITEM_MAX_BYTES = len(PNG) - 1
        with pytest.raises(SendRequestInvalid) as raised:
            _submit(room, staff, key="key-2")
        assert raised.value.index == 1
        assert SendJob.objects.count() == 0

    def test_a_question_of_another_room_is_refused(self, room, staff):
        """The answer goes into the room the question came from, nowhere else."""
        question = QuestionFactory(message__room=RoomFactory(vendor=None, name="(5678) 가온상사"))

        with pytest.raises(SendRequestInvalid):
            _submit(room, staff, question=question)

    def test_a_system_actor_is_recorded_by_name(self, room, sender):
        """The agent's send tool passes its name; the audit row says it was the system."""
        job, _ = _submit(room, "agent")

        assert job.created_by == "agent"
        event = selectors.send_job_history(job=job).get()
        assert (event.actor_kind, event.actor_id) == (AuditEvent.ActorKind.SYSTEM, "agent")


@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_requests_make_one_job(settings, tmp_path):
    """Eight threads send the same request with the same key at once: one job, one creation, seven replays."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    room = RoomFactory(vendor=None, name="(1234) 대한물산")
    staff = StaffUserFactory()
    barrier = threading.Barrier(8)
    outcomes, errors = [], []

    def submit():
        try:
            barrier.wait()
            job, outcome = _submit(room, staff)
            outcomes.append((job.pk, outcome))
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert SendJob.objects.count() == 1
    assert SendJobItem.objects.count() == 2
    assert {job_id for job_id, _ in outcomes} == {SendJob.objects.get().pk}
    assert sorted(outcome for _, outcome in outcomes) == [SubmitOutcome.CREATED] + [SubmitOutcome.REPLAYED] * 7
    assert AuditEvent.objects.filter(action="send_job.queued").count() == 1


@pytest.mark.django_db
class TestNoSenderAlert:
    def test_a_job_for_a_room_without_a_sender_stays_queued_and_raises_one_alert(
        self, room, staff, django_capture_on_commit_callbacks
    ):
        """Two jobs in a room nobody serves: both queued, one live SEND_NO_SENDER alert for the room."""
        with django_capture_on_commit_callbacks(execute=True):
            first, _ = _submit(room, staff, key="a")
        with django_capture_on_commit_callbacks(execute=True):
            second, _ = _submit(room, staff, key="b")

        assert {first.state, second.state} == {State.QUEUED}
        alert = _live_alerts(Alert.Kind.SEND_NO_SENDER).get()
        assert alert.key == f"room:{room.pk}"
        assert Alert.objects.filter(kind=Alert.Kind.SEND_NO_SENDER).count() == 1

    def test_the_alert_closes_when_a_sender_reports_the_room(self, room, staff, django_capture_on_commit_callbacks):
        """A sender's heartbeat naming the room closes the alert; its next claim takes the waiting job."""
        with django_capture_on_commit_callbacks(execute=True):
            job, _ = _submit(room, staff)
        device, _ = active_device(role=Device.Role.SENDER)

        with django_capture_on_commit_callbacks(execute=True):
            device_heartbeat(device=device, rooms=[{"room_key": room.stable_key, "room_name": room.name}])

        assert not _live_alerts(Alert.Kind.SEND_NO_SENDER).exists()
        assert send_job_claim(device=device).pk == job.pk

    def test_no_alert_when_a_sender_serves_the_room(self, room, staff, sender, django_capture_on_commit_callbacks):
        with django_capture_on_commit_callbacks(execute=True):
            _submit(room, staff)

        assert not Alert.objects.filter(kind=Alert.Kind.SEND_NO_SENDER).exists()

    def test_a_revoked_sender_does_not_count(self, room, staff, sender, django_capture_on_commit_callbacks):
        """Only active sender devices serve rooms."""
        device_revoke(device=sender, actor=staff)

        with django_capture_on_commit_callbacks(execute=True):
            _submit(room, staff)

        assert _live_alerts(Alert.Kind.SEND_NO_SENDER).count() == 1
        assert list(selectors.sender_devices_for_room(room=room)) == []

    def test_staff_turning_off_the_last_sender_raises_the_alert(
        self, room, staff, sender, django_capture_on_commit_callbacks
    ):
        """A queued job whose room loses its only sender in the admin is not left waiting silently."""
        _submit(room, staff)

        with django_capture_on_commit_callbacks(execute=True):
            sender_room_set(device=sender, room=room, is_active=False, actor=staff)

        assert _live_alerts(Alert.Kind.SEND_NO_SENDER).count() == 1
        assert send_job_claim(device=sender) is None


@pytest.mark.django_db
class TestClaim:
    def test_claim_leases_the_oldest_queued_job_of_a_served_room(self, room, staff, sender, settings):
        """Oldest first; the lease is SEND_LEASE_SECONDS long; `claimed` is audited with the device."""
        settings.SEND_LEASE_SECONDS = 90
        unserved = RoomFactory(vendor=None, name="(5678) 가온상사")
        _submit(unserved, staff, key="elsewhere")
        first, _ = _submit(room, staff, key="first")
        _submit(room, staff, key="second")
        before = timezone.now()

        job = send_job_claim(device=sender)

        assert job.pk == first.pk
        job.refresh_from_db()
        assert job.state == State.CLAIMED
        assert job.lease_holder == sender
        assert job.claimed_by == sender
        assert before + timedelta(seconds=90) <= job.lease_expires_at <= timezone.now() + timedelta(seconds=90)
        claimed = selectors.send_job_history(job=job).last()
        assert claimed.action == "send_job.claimed"
        assert (claimed.actor_kind, claimed.actor_id) == (AuditEvent.ActorKind.DEVICE, str(sender.pk))
        assert claimed.data == {"from": "queued", "to": "claimed", "device": sender.pk, "attempt": 1}
        assert list(selectors.device_leases(sender)) == [job]

    def test_nothing_to_claim_returns_none(self, sender):
        assert send_job_claim(device=sender) is None

    def test_an_uploader_or_an_inactive_room_link_claims_nothing(self, room, staff, sender):
        """Only active sender devices with an active link to the room get its jobs."""
        _submit(room, staff)
        uploader, _ = active_device(role=Device.Role.UPLOADER)
        SenderRoom.objects.create(device=uploader, room=room)
        sender_room_set(device=sender, room=room, is_active=False, actor=StaffUserFactory())

        assert send_job_claim(device=uploader) is None
        assert send_job_claim(device=sender) is None


@pytest.mark.django_db(transaction=True)
class TestConcurrentClaims:
    def test_a_claim_in_flight_is_skipped_not_shared(self, settings, tmp_path):
        """While one sender's claim transaction holds the job, another sender gets nothing (skip locked)."""
        settings.MEDIA_ROOT = str(tmp_path / "media")
        room = RoomFactory(vendor=None)
        staff = StaffUserFactory()
        first, second = (active_device(role=Device.Role.SENDER)[0] for _ in range(2))
        for device in (first, second):
            sender_rooms_report(device=device, rooms=[{"room_key": room.stable_key}])
        job, _ = _submit(room, staff)
        holding, release = threading.Event(), threading.Event()
        claimed_by_first = []

        def claim_and_hold():
            try:
                with transaction.atomic():
                    claimed_by_first.append(send_job_claim(device=first))
                    holding.set()
                    release.wait(timeout=30)
            finally:
                connection.close()

        thread = threading.Thread(target=claim_and_hold)
        thread.start()
        assert holding.wait(timeout=30)
        try:
            assert send_job_claim(device=second) is None
        finally:
            release.set()
            thread.join()

        assert claimed_by_first[0].pk == job.pk
        assert send_job_claim(device=second) is None
        job.refresh_from_db()
        assert job.lease_holder == first

    def test_senders_claiming_at_once_never_share_a_job(self, settings, tmp_path):
        """Four senders race for three jobs, twice each: every job is claimed exactly once, by one device."""
        settings.MEDIA_ROOT = str(tmp_path / "media")
        room = RoomFactory(vendor=None)
        staff = StaffUserFactory()
        devices = [active_device(role=Device.Role.SENDER)[0] for _ in range(4)]
        for device in devices:
            sender_rooms_report(device=device, rooms=[{"room_key": room.stable_key}])
        jobs = [_submit(room, staff, key=f"k{n}", items=[{"kind": "text", "text": f"답변 {n}"}])[0] for n in range(3)]
        barrier = threading.Barrier(len(devices))
        claims, errors = [], []

        def claimer(device):
            try:
                barrier.wait()
                for _ in range(2):
                    job = send_job_claim(device=device)
                    if job is not None:
                        claims.append((job.pk, device.pk))
            except Exception as exc:
                errors.append(exc)
            finally:
                connection.close()

        threads = [threading.Thread(target=claimer, args=(device,)) for device in devices]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert errors == []
        assert sorted(job_id for job_id, _ in claims) == sorted(job.pk for job in jobs)
        assert AuditEvent.objects.filter(action="send_job.claimed").count() == 3
        for job_id, device_id in claims:
            assert SendJob.objects.get(pk=job_id).lease_holder_id == device_id


@pytest.mark.django_db
class TestLease:
    def test_heartbeat_extends_the_lease(self, room, staff, sender, settings):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)
        job.refresh_from_db()
        first_expiry = job.lease_expires_at
        settings.SEND_LEASE_SECONDS = 600

        extended = send_job_heartbeat(job=job, device=sender)

        job.refresh_from_db()
        assert job.lease_expires_at == extended.lease_expires_at
        assert job.lease_expires_at > first_expiry + timedelta(seconds=400)

    def test_only_the_lease_holder_may_heartbeat_progress_or_report(self, room, staff, sender, other_sender):
        """Another sender gets `LeaseNotHeld` on every job call; the job does not change."""
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)
        job.refresh_from_db()
        calls = [
            lambda: send_job_heartbeat(job=job, device=other_sender),
            lambda: send_job_progress(job=job, device=other_sender, state=State.SENDING),
            lambda: send_job_report(job=job, device=other_sender, outcome=State.SENT, observed=FULL, resent={}),
        ]
        for call in calls:
            with pytest.raises(LeaseNotHeld):
                call()

        after = SendJob.objects.get(pk=job.pk)
        assert (after.state, after.lease_holder, after.lease_expires_at) == (
            State.CLAIMED,
            sender,
            job.lease_expires_at,
        )

    @pytest.mark.parametrize("state", [State.CLAIMED, State.SENDING, State.VERIFYING])
    def test_a_lapsed_lease_moves_the_job_to_unknown_and_nothing_resends_it(
        self, room, staff, sender, other_sender, state, django_capture_on_commit_callbacks
    ):
        """Lease expiry → `unknown` with an alert; no device can claim it again and the old holder cannot report."""
        job, _ = _submit(room, staff)
        job = _drive(job, sender, state)

        with django_capture_on_commit_callbacks(execute=True):
            expired = send_jobs_expire_leases(now=job.lease_expires_at + timedelta(seconds=1))

        assert expired == 1
        job.refresh_from_db()
        assert job.state == State.UNKNOWN
        assert (job.lease_holder, job.lease_expires_at) == (None, None)
        event = selectors.send_job_history(job=job).last()
        assert event.action == "send_job.unknown"
        assert event.actor_kind == AuditEvent.ActorKind.SYSTEM
        assert event.data["from"] == state
        assert event.data["device"] == sender.pk
        assert _live_alerts(Alert.Kind.SEND_UNKNOWN).get().key == f"send_job:{job.pk}"
        assert send_job_claim(device=sender) is None
        assert send_job_claim(device=other_sender) is None
        with pytest.raises(LeaseNotHeld):
            send_job_report(job=job, device=sender, outcome=State.SENT, observed=FULL, resent={})
        assert send_jobs_expire_leases(now=timezone.now() + timedelta(hours=1)) == 0

    def test_a_live_lease_is_not_expired(self, room, staff, sender):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)

        assert send_jobs_expire_leases(now=timezone.now()) == 0
        job.refresh_from_db()
        assert job.state == State.CLAIMED

    def test_expiry_works_in_batches(self, room, staff, sender):
        """More lapsed leases than one batch: all of them are moved, each once."""
        for n in range(5):
            _submit(room, staff, key=f"k{n}", items=[{"kind": "text", "text": f"답변 {n}"}])
            send_job_claim(device=sender)

        expired = send_jobs_expire_leases(now=timezone.now() + timedelta(hours=1), batch_size=2)

        assert expired == 5
        assert set(SendJob.objects.values_list("state", flat=True)) == {State.UNKNOWN}
        assert AuditEvent.objects.filter(action="send_job.unknown").count() == 5

    def test_the_periodic_task_runs_the_sweep(self, room, staff, sender, settings):
        """`delivery.expire_send_leases` moves lapsed jobs and returns how many."""
        settings.SEND_LEASE_SECONDS = 0
        _submit(room, staff)
        send_job_claim(device=sender)

        assert expire_send_leases.delay().get() == 1
        assert SendJob.objects.get().state == State.UNKNOWN


@pytest.mark.django_db
class TestReport:
    def test_sent_after_the_check_ends_the_lease_and_keeps_the_counts(self, room, staff, sender):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)
        send_job_progress(job=job, device=sender, state=State.SENDING)
        send_job_progress(job=job, device=sender, state=State.VERIFYING)

        send_job_report(
            job=job, device=sender, outcome=State.SENT, observed=FULL, resent={"texts": 1}, reason="글 1개 재발송"
        )

        job.refresh_from_db()
        assert job.state == State.SENT
        assert (job.lease_holder, job.lease_expires_at) == (None, None)
        assert job.observed_counts == FULL
        assert job.resent_counts == {"texts": 1, "photos": 0, "files": 0}
        assert job.finished_at is not None
        assert _audit_actions(job) == [
            "send_job.queued",
            "send_job.claimed",
            "send_job.sending",
            "send_job.verifying",
            "send_job.sent",
        ]
        assert list(selectors.device_leases(sender)) == []

    def test_sent_with_fewer_observed_items_than_the_job_has_is_recorded_as_unknown(
        self, room, staff, sender, django_capture_on_commit_callbacks
    ):
        """ "Sent" is written only when true: a report that contradicts its own counts becomes `unknown`."""
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)

        with django_capture_on_commit_callbacks(execute=True):
            send_job_report(job=job, device=sender, outcome=State.SENT, observed={"texts": 1}, resent={})

        job.refresh_from_db()
        assert job.state == State.UNKNOWN
        assert "사진 1개" in job.reason
        assert selectors.send_job_history(job=job).last().data["reported_outcome"] == "sent"
        assert _live_alerts(Alert.Kind.SEND_UNKNOWN).count() == 1

    def test_a_repeated_report_from_the_same_device_returns_the_job_unchanged(self, room, staff, sender):
        """A device that lost the answer and reports again gets the job, not a conflict, and no new audit row."""
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)
        send_job_report(job=job, device=sender, outcome=State.SENT, observed=FULL, resent={})
        history = _audit_actions(job)

        again = send_job_report(job=job, device=sender, outcome=State.SENT, observed=FULL, resent={})

        assert again.state == State.SENT
        assert _audit_actions(job) == history

    def test_progress_to_the_current_state_is_a_no_op(self, room, staff, sender):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)
        send_job_progress(job=job, device=sender, state=State.SENDING)

        send_job_progress(job=job, device=sender, state=State.SENDING)

        assert _audit_actions(job).count("send_job.sending") == 1

    def test_verifying_may_go_back_to_sending_for_the_missing_items(self, room, staff, sender):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)
        send_job_progress(job=job, device=sender, state=State.VERIFYING)

        send_job_progress(job=job, device=sender, state=State.SENDING, note="사진 1개 재발송")

        job.refresh_from_db()
        assert job.state == State.SENDING
        assert selectors.send_job_history(job=job).last().data["note"] == "사진 1개 재발송"

    def test_counts_must_be_non_negative_integers(self, room, staff, sender):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)

        with pytest.raises(ValueError):
            send_job_report(job=job, device=sender, outcome=State.SENT, observed={"texts": -1}, resent={})


@pytest.mark.django_db
def test_every_transition_outside_the_table_is_refused(room, staff, sender):
    """`_transition` is a compare-and-set that allows exactly the pairs in ALLOWED_TRANSITIONS."""
    job, _ = _submit(room, staff)
    lease = {"lease_holder": sender, "lease_expires_at": timezone.now() + timedelta(minutes=1)}
    no_lease = {"lease_holder": None, "lease_expires_at": None}
    for from_state in State.values:
        for to_state in State.values:
            SendJob.objects.filter(pk=job.pk).update(
                state=from_state, **(lease if from_state in SendJob.LEASED_STATES else no_lease)
            )
            job.refresh_from_db()
            changes = lease if to_state in SendJob.LEASED_STATES else no_lease
            allowed = to_state in ALLOWED_TRANSITIONS[from_state]
            with transaction.atomic():
                if allowed:
                    _transition(job, to=to_state, actor="test", changes=changes)
                else:
                    with pytest.raises(SendJobStateConflict):
                        _transition(job, to=to_state, actor="test", changes=changes)
            assert SendJob.objects.get(pk=job.pk).state == (to_state if allowed else from_state), (from_state, to_state)


@pytest.mark.django_db
def test_a_stale_compare_and_set_is_refused(room, staff, sender):
    """A caller holding an old copy of the job cannot overwrite a newer state."""
    job, _ = _submit(room, staff)
    stale = SendJob.objects.get(pk=job.pk)
    send_job_claim(device=sender)

    with pytest.raises(SendJobStateConflict):
        _transition(stale, to=State.CLAIMED, actor="test", changes={"lease_holder": sender})


@pytest.mark.django_db
class TestResolveUnknown:
    def _unknown_job(self, room, staff, sender, capture):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)
        with capture(execute=True):
            send_jobs_expire_leases(now=timezone.now() + timedelta(hours=1))
        job.refresh_from_db()
        return job

    def test_mark_sent_after_checking_the_room(self, room, staff, sender, django_capture_on_commit_callbacks):
        """Staff confirm it arrived: `sent`, audited with the resolution and note, the alert closes."""
        job = self._unknown_job(room, staff, sender, django_capture_on_commit_callbacks)

        with django_capture_on_commit_callbacks(execute=True):
            send_job_resolve_unknown(job=job, resolution="mark_sent", actor=staff, note="방에서 도착 확인")

        job.refresh_from_db()
        assert job.state == State.SENT
        event = selectors.send_job_history(job=job).last()
        assert event.action == "send_job.sent"
        assert (event.actor_kind, event.actor_id) == (AuditEvent.ActorKind.STAFF, str(staff.pk))
        assert event.data["resolution"] == "mark_sent"
        assert event.data["note"] == "방에서 도착 확인"
        assert not _live_alerts(Alert.Kind.SEND_UNKNOWN).exists()

    def test_requeue_after_checking_the_room(self, room, staff, sender, django_capture_on_commit_callbacks):
        """Staff saw it did not arrive: queued again with attempt 2, and a sender can claim it."""
        job = self._unknown_job(room, staff, sender, django_capture_on_commit_callbacks)

        with django_capture_on_commit_callbacks(execute=True):
            send_job_resolve_unknown(job=job, resolution="requeue", actor=staff)

        job.refresh_from_db()
        assert (job.state, job.attempt) == (State.QUEUED, 2)
        assert not _live_alerts(Alert.Kind.SEND_UNKNOWN).exists()
        assert send_job_claim(device=sender).pk == job.pk

    @pytest.mark.parametrize("resolution", ["mark_sent", "requeue"])
    def test_only_unknown_jobs_can_be_resolved(self, room, staff, sender, resolution):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)

        with pytest.raises(SendJobStateConflict):
            send_job_resolve_unknown(job=job, resolution=resolution, actor=staff)
        job.refresh_from_db()
        assert job.state == State.CLAIMED


@pytest.mark.django_db
class TestSenderRooms:
    def test_a_report_links_known_rooms_and_ignores_unknown_keys(self, room):
        device, _ = active_device(role=Device.Role.SENDER)

        device_heartbeat(
            device=device,
            rooms=[{"room_key": room.stable_key, "room_name": room.name}, {"room_key": "chat-none", "room_name": "?"}],
        )

        link = SenderRoom.objects.get(device=device)
        assert (link.room, link.source, link.is_active) == (room, SenderRoom.Source.REPORTED, True)
        assert link.last_reported_at is not None
        assert list(selectors.sender_devices_for_room(room=room)) == [device]

    def test_rooms_missing_from_the_next_report_stop_being_served(self, room):
        other = RoomFactory(vendor=None)
        device, _ = active_device(role=Device.Role.SENDER)
        sender_rooms_report(device=device, rooms=[{"room_key": room.stable_key}, {"room_key": other.stable_key}])

        sender_rooms_report(device=device, rooms=[{"room_key": other.stable_key}])

        assert not SenderRoom.objects.get(device=device, room=room).is_active
        assert SenderRoom.objects.get(device=device, room=other).is_active
        sender_rooms_report(device=device, rooms=[{"room_key": room.stable_key}])
        assert SenderRoom.objects.get(device=device, room=room).is_active

    def test_the_report_time_is_refreshed_at_most_once_a_minute(self, room, sender):
        """Heartbeats come often; the link's `last_reported_at` is a liveness mark written once per minute."""
        link = SenderRoom.objects.get(device=sender, room=room)
        first = link.last_reported_at

        sender_rooms_report(device=sender, rooms=[{"room_key": room.stable_key}])
        link.refresh_from_db()
        assert link.last_reported_at == first

        SenderRoom.objects.filter(pk=link.pk).update(last_reported_at=first - timedelta(minutes=2))
        sender_rooms_report(device=sender, rooms=[{"room_key": room.stable_key}])
        link.refresh_from_db()
        assert link.last_reported_at > first

    def test_an_empty_report_changes_nothing(self, room, sender):
        sender_rooms_report(device=sender, rooms=[])

        assert SenderRoom.objects.get(device=sender, room=room).is_active

    def test_staff_settings_win_over_reports(self, room, staff):
        """A room staff switched off stays off when reported; one staff switched on stays on when not reported."""
        other = RoomFactory(vendor=None)
        device, _ = active_device(role=Device.Role.SENDER)
        sender_room_set(device=device, room=room, is_active=False, actor=staff)
        sender_room_set(device=device, room=other, is_active=True, actor=staff)

        sender_rooms_report(device=device, rooms=[{"room_key": room.stable_key}])

        assert not SenderRoom.objects.get(device=device, room=room).is_active
        assert SenderRoom.objects.get(device=device, room=other).is_active
        assert AuditEvent.objects.filter(action="sender_room.set").count() == 2

    def test_uploaders_do_not_become_senders(self, room):
        device, _ = active_device(role=Device.Role.UPLOADER)

        device_heartbeat(device=device, rooms=[{"room_key": room.stable_key, "room_name": room.name}])

        assert not SenderRoom.objects.exists()


@pytest.mark.django_db
def test_jobs_for_a_question_are_listed_in_order(room, staff):
    question = QuestionFactory(message__room=room)
    first, _ = _submit(room, staff, key="a", question=question)
    second, _ = _submit(room, staff, key="b", question=question, items=[{"kind": "text", "text": "추가 안내"}])
    _submit(room, staff, key="c", items=[{"kind": "text", "text": "다른 답"}])

    assert list(selectors.send_jobs_for_question(question=question)) == [first, second]


@pytest.mark.django_db
class TestAdmin:
    def test_job_pages_show_items_counts_and_state_history(self, admin_client, room, staff, sender):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)
        send_job_report(job=job, device=sender, outcome=State.SENT, observed=FULL, resent={"photos": 1})

        listing = admin_client.get("/admin/delivery/sendjob/", {"state__exact": "sent"})
        detail = admin_client.get(f"/admin/delivery/sendjob/{job.pk}/change/")

        assert listing.status_code == 200
        assert str(room) in listing.content.decode()
        page = detail.content.decode()
        assert detail.status_code == 200
        assert "queued → claimed" in page
        assert "claimed → sent" in page
        assert "단가표.png" in page
        assert "재발송 수" in page

    def test_resolution_actions_apply_to_unknown_jobs_only(self, admin_client, room, staff, sender):
        """The action settles the unknown job and skips the others, with a message."""
        unknown, _ = _submit(room, staff, key="u")
        send_job_claim(device=sender)
        send_jobs_expire_leases(now=timezone.now() + timedelta(hours=1))
        queued, _ = _submit(room, staff, key="q", items=[{"kind": "text", "text": "대기 중"}])

        response = admin_client.post(
            "/admin/delivery/sendjob/",
            {"action": "resolve_mark_sent", "_selected_action": [unknown.pk, queued.pk]},
            follow=True,
        )

        assert response.status_code == 200
        unknown.refresh_from_db()
        queued.refresh_from_db()
        assert (unknown.state, queued.state) == (State.SENT, State.QUEUED)
        assert f"#{queued.pk}" in response.content.decode()

    def test_requeue_action(self, admin_client, room, staff, sender):
        job, _ = _submit(room, staff)
        send_job_claim(device=sender)
        send_jobs_expire_leases(now=timezone.now() + timedelta(hours=1))

        admin_client.post("/admin/delivery/sendjob/", {"action": "resolve_requeue", "_selected_action": [job.pk]})

        job.refresh_from_db()
        assert (job.state, job.attempt) == (State.QUEUED, 2)

    def test_staff_add_a_room_link_through_the_service(self, admin_client, room):
        device, _ = active_device(role=Device.Role.SENDER)

        response = admin_client.post(
            "/admin/delivery/senderroom/add/", {"device": device.pk, "room": room.pk, "is_active": "on"}
        )

        assert response.status_code == 302
        link = SenderRoom.objects.get(device=device, room=room)
        assert (link.source, link.is_active) == (SenderRoom.Source.ADMIN, True)
        assert AuditEvent.objects.filter(action="sender_room.set", target_id=str(link.pk)).exists()
