"""The liveness monitor: business hours, one alert per subject, auto-close, webhook retries."""

import json
import threading
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from conversations.tests.factories import QuestionFactory, UploadBatchFactory
from delivery.models import Device, SendJob
from delivery.tests.factories import active_device
from monitoring.business_hours import is_business_time
from monitoring.models import Alert, LivenessMarker
from monitoring.monitor import monitor_run
from monitoring.services import alert_raise, marker_accepted_write, marker_result_write
from monitoring.webhook import alerts_notify

KST = ZoneInfo("Asia/Seoul")
MONDAY_10 = datetime(2026, 11, 30, 10, 0, tzinfo=KST)
SATURDAY_10 = datetime(2026, 11, 28, 10, 0, tzinfo=KST)
CHRISTMAS_10 = datetime(2026, 12, 25, 10, 0, tzinfo=KST)  # a Friday and a public holiday


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (MONDAY_10, True),
        (datetime(2026, 11, 30, 8, 59, tzinfo=KST), False),
        (datetime(2026, 11, 30, 9, 0, tzinfo=KST), True),
        (datetime(2026, 11, 30, 17, 59, tzinfo=KST), True),
        (datetime(2026, 11, 30, 18, 0, tzinfo=KST), False),
        (SATURDAY_10, False),
        (datetime(2026, 11, 29, 10, 0, tzinfo=KST), False),  # Sunday
        (CHRISTMAS_10, False),
        (datetime(2026, 9, 25, 11, 0, tzinfo=KST), False),  # Chuseok
        (datetime(2026, 11, 30, 1, 0, tzinfo=ZoneInfo("UTC")), True),  # 10:00 in Seoul
    ],
)
def test_business_time(moment, expected):
    """Weekdays 09:00–18:00 in Asia/Seoul, except Korean public holidays."""
    assert is_business_time(moment) is expected


def accepted_question(*, minutes_ago: int, now: datetime):
    question = QuestionFactory()
    marker = marker_accepted_write(question=question)
    LivenessMarker.objects.filter(pk=marker.pk).update(created_at=now - timedelta(minutes=minutes_ago))
    return question


@pytest.mark.django_db
class TestStalledQuestions:
    def test_an_accepted_question_without_result_past_the_threshold_raises_one_alert(self):
        question = accepted_question(minutes_ago=11, now=MONDAY_10)
        first = monitor_run(now=MONDAY_10)
        second = monitor_run(now=MONDAY_10 + timedelta(minutes=1))
        assert first.raised == [f"question_stalled:question:{question.pk}"]
        assert second.raised == []
        alert = Alert.objects.get()
        assert (alert.kind, alert.status) == (Alert.Kind.QUESTION_STALLED, Alert.Status.OPEN)

    def test_a_question_within_the_threshold_raises_nothing(self):
        accepted_question(minutes_ago=5, now=MONDAY_10)
        assert monitor_run(now=MONDAY_10).raised == []
        assert Alert.objects.count() == 0

    def test_outside_business_hours_nothing_is_raised(self):
        accepted_question(minutes_ago=60, now=SATURDAY_10)
        accepted_question(minutes_ago=60, now=CHRISTMAS_10)
        assert monitor_run(now=SATURDAY_10).raised == []
        assert monitor_run(now=CHRISTMAS_10).raised == []
        assert Alert.objects.count() == 0

    def test_the_alert_closes_itself_when_the_result_arrives(self):
        question = accepted_question(minutes_ago=30, now=MONDAY_10)
        monitor_run(now=MONDAY_10)
        marker_result_write(question=question, outcome="answered")
        report = monitor_run(now=MONDAY_10 + timedelta(minutes=1))
        assert report.closed == 1
        assert Alert.objects.get().status == Alert.Status.CLOSED

    def test_a_question_with_a_result_never_alerts(self):
        question = accepted_question(minutes_ago=30, now=MONDAY_10)
        marker_result_write(question=question, outcome="held")
        assert monitor_run(now=MONDAY_10).raised == []

    def test_each_stalled_question_gets_its_own_alert(self):
        questions = [accepted_question(minutes_ago=20, now=MONDAY_10) for _ in range(3)]
        monitor_run(now=MONDAY_10)
        keys = set(Alert.objects.values_list("key", flat=True))
        assert keys == {f"question:{q.pk}" for q in questions}


@pytest.mark.django_db
class TestSendJobsAndDevices:
    def make_job(self, state, minutes_ago, now=MONDAY_10):
        question = QuestionFactory()
        job = SendJob.objects.create(
            room=question.room,
            question=question,
            idempotency_key=f"q-{question.pk}",
            request_fingerprint="x" * 64,
            created_by="test",
            state=state,
        )
        SendJob.objects.filter(pk=job.pk).update(state_changed_at=now - timedelta(minutes=minutes_ago))
        return job

    def test_a_job_stuck_in_a_state_raises_once_and_closes_when_it_moves(self):
        job = self.make_job(SendJob.State.QUEUED, minutes_ago=20)
        monitor_run(now=MONDAY_10)
        monitor_run(now=MONDAY_10)
        assert Alert.objects.filter(kind=Alert.Kind.SEND_STUCK).count() == 1
        SendJob.objects.filter(pk=job.pk).update(state=SendJob.State.SENT, state_changed_at=timezone.now())
        monitor_run(now=MONDAY_10)
        assert Alert.objects.get(kind=Alert.Kind.SEND_STUCK).status == Alert.Status.CLOSED

    def test_unknown_jobs_alert_at_any_hour(self):
        job = self.make_job(SendJob.State.UNKNOWN, minutes_ago=1, now=SATURDAY_10)
        monitor_run(now=SATURDAY_10)
        assert Alert.objects.get(kind=Alert.Kind.SEND_UNKNOWN).key == f"send_job:{job.pk}"

    def test_a_silent_device_alerts_in_business_hours_and_closes_when_seen(self):
        device, _ = active_device(role="sender", name="CS Mac")
        Device.objects.filter(pk=device.pk).update(last_seen_at=MONDAY_10 - timedelta(minutes=45))
        monitor_run(now=SATURDAY_10)
        assert Alert.objects.count() == 0
        monitor_run(now=MONDAY_10)
        assert Alert.objects.get().kind == Alert.Kind.DEVICE_SILENT
        Device.objects.filter(pk=device.pk).update(last_seen_at=MONDAY_10)
        monitor_run(now=MONDAY_10)
        assert Alert.objects.get().status == Alert.Status.CLOSED

    def test_an_upload_gap_alerts_once(self):
        device, _ = active_device(role="uploader", name="1층 PC")
        Device.objects.filter(pk=device.pk).update(last_seen_at=MONDAY_10)
        batch = UploadBatchFactory(device=device)
        batch.__class__.objects.filter(pk=batch.pk).update(received_at=MONDAY_10 - timedelta(minutes=90))
        monitor_run(now=MONDAY_10)
        monitor_run(now=MONDAY_10)
        assert list(Alert.objects.values_list("kind", flat=True)) == [Alert.Kind.UPLOAD_GAP]


class _Webhook(BaseHTTPRequestHandler):
    statuses: list[int] = []
    received: list[dict] = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        status = self.statuses.pop(0) if self.statuses else 200
        if status == 200:
            self.received.append(json.loads(body))
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook(settings):
    _Webhook.statuses = []
    _Webhook.received = []
    server = HTTPServer(("127.0.0.1", 0), _Webhook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.ALERT_WEBHOOK_URL = f"http://127.0.0.1:{server.server_port}/hook"
    yield _Webhook
    server.shutdown()


@pytest.mark.django_db
def test_webhook_down_keeps_the_alert_and_retries(webhook):
    """A failed post leaves the alert pending; the next run delivers it once the webhook is back."""
    accepted_question(minutes_ago=30, now=MONDAY_10)
    webhook.statuses = [500, 502]
    monitor_run(now=MONDAY_10)
    alert = Alert.objects.get()
    assert alert.notified_at is None
    assert alerts_notify()["failed"] == 1
    assert alerts_notify()["failed"] == 1
    delivered = alerts_notify()
    alert.refresh_from_db()
    assert delivered == {"delivered": 1, "failed": 0}
    assert alert.notified_at is not None
    assert alert.notify_attempts == 3
    assert webhook.received[0]["alert"]["kind"] == "question_stalled"
    assert "결과가 없습니다" in webhook.received[0]["text"]
    assert alerts_notify() == {"delivered": 0, "failed": 0}


@pytest.mark.django_db
def test_a_raised_alert_is_posted_after_the_commit(webhook, django_capture_on_commit_callbacks):
    """Raising an alert dispatches the webhook task (by its name: the services sit below the task module) once the
    transaction commits; in-process here, as without a broker."""
    with django_capture_on_commit_callbacks(execute=True):
        alert, created = alert_raise(kind=Alert.Kind.DEVICE_SILENT, key="device:1", message="기기 응답 없음")
    alert.refresh_from_db()
    assert created and alert.notified_at is not None
    assert [posted["alert"]["id"] for posted in webhook.received] == [alert.pk]


@pytest.mark.django_db
def test_webhook_unreachable_is_not_lost(settings):
    """Nothing listens on the port: the post fails with a timeout-bounded error and the alert stays pending."""
    settings.ALERT_WEBHOOK_URL = "http://127.0.0.1:9/hook"
    accepted_question(minutes_ago=30, now=MONDAY_10)
    monitor_run(now=MONDAY_10)
    assert alerts_notify()["failed"] == 1
    assert Alert.objects.get().notified_at is None
