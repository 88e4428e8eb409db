"""The upload API: limits, validation, idempotent batches, resend dedup, tagged questions."""

import json
import threading
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from rest_framework.test import APIClient, APIRequestFactory

from conversations.api.views import UploadApi
from conversations.models import Message, Question, Room, UploadBatch
from delivery.tests.factories import active_device
from monitoring.models import LivenessMarker
from vendors.tests.factories import VendorFactory

KST = ZoneInfo("Asia/Seoul")
T0 = datetime(2026, 11, 30, 10, 0, 0, tzinfo=KST)
URL = "/api/v1/uploads"


def message(text="안녕하세요", *, room_key="chat-1", room_name="(1234) 대한물산", at=T0, unread=1, **extra):
    body = {
        "room_key": room_key,
        "room_name": room_name,
        "sender_name": extra.pop("sender_name", "김대리"),
        "sent_by_me": extra.pop("sent_by_me", False),
        "text": text,
        "sent_at": at.isoformat(),
        "unread_count": unread,
        "attachments": {"photos": extra.pop("photos", 0), "files": 0},
    }
    body.update(extra)
    return body


def post(client, batch_id, messages):
    return client.post(URL, {"batch_id": batch_id, "messages": messages}, format="json")


@pytest.mark.django_db
class TestLimits:
    def test_too_many_messages_is_413_and_stores_nothing(self, uploader, settings):
        """A batch over UPLOAD_MAX_MESSAGES is refused whole with 413."""
        settings.UPLOAD_MAX_MESSAGES = 3
        response = post(uploader, "b-1", [message(f"m{i}", at=T0 + timedelta(minutes=i)) for i in range(4)])
        assert response.status_code == 413
        assert response.json()["error"] == "PAYLOAD_TOO_LARGE"
        assert Message.objects.count() == 0
        assert UploadBatch.objects.count() == 0

    def test_too_many_bytes_is_413(self, uploader, settings):
        """A body over UPLOAD_MAX_BYTES is refused before it is parsed."""
        settings.UPLOAD_MAX_BYTES = 500
        response = post(uploader, "b-1", [message("가" * 400)])
        assert response.status_code == 413
        assert Message.objects.count() == 0

    def test_over_the_device_rate_is_429_with_retry_after(self, uploader, settings):
        """The per-device rate is counted in Redis; the refusal says when to come back."""
        settings.UPLOAD_RATE_PER_MINUTE = 2
        codes = [post(uploader, f"b-{i}", []).status_code for i in range(3)]
        assert codes == [200, 200, 429]
        refused = post(uploader, "b-9", [message()])
        assert refused.json()["error"] == "RATE_LIMITED"
        assert 1 <= int(refused["Retry-After"]) <= 60
        assert Message.objects.count() == 0


@pytest.mark.django_db
class TestValidation:
    def test_malformed_json_is_422(self, uploader):
        """A body that is not JSON is a 422 with a batch-level item, not a 500 or a 400."""
        response = uploader.post(URL, data="{not json", content_type="application/json")
        assert response.status_code == 422
        item = response.json()["items"][0]
        assert (item["index"], item["field"]) == (None, "body")
        assert item["message"]

    def test_missing_batch_id_is_422(self, uploader):
        response = uploader.post(URL, {"messages": []}, format="json")
        assert response.status_code == 422
        assert response.json()["items"][0]["field"] == "batch_id"


@pytest.mark.django_db
class TestIdempotentBatch:
    def test_same_batch_id_returns_the_first_result_and_stores_nothing_twice(self, uploader, vendor):
        messages = [message("첫 메시지"), message("두 번째", at=T0 + timedelta(minutes=1))]
        first = post(uploader, "b-1", messages)
        second = post(uploader, "b-1", messages)
        assert first.status_code == second.status_code == 200
        assert first.json()["stored"] == 2 and first.json()["replayed"] is False
        assert second.json() == {**first.json(), "replayed": True}
        assert Message.objects.count() == 2
        assert UploadBatch.objects.count() == 1

    def test_client_message_id_is_never_stored_twice(self, uploader, vendor):
        """Whenever it comes — in another batch long after the resend window — a known client id is a duplicate."""
        post(uploader, "b-1", [message("발주 확인 부탁드립니다", client_message_id="log-1")])
        later = message("발주 확인 부탁드립니다", client_message_id="log-1", at=T0 + timedelta(hours=3))
        response = post(uploader, "b-2", [later, {**later, "client_message_id": "log-2", "text": "다른 메시지"}])
        assert response.json()["duplicates"] == 1
        assert response.json()["stored"] == 1
        assert Message.objects.filter(client_message_id="log-1").count() == 1

    @pytest.mark.django_db(transaction=True)
    def test_concurrent_posts_of_one_batch_store_it_once(self, vendor):
        """Two requests racing with the same batch_id: one stores, the other replays."""
        _, token = active_device(role="uploader", name="PC")
        messages = [message(f"메시지 {i}", at=T0 + timedelta(minutes=i)) for i in range(20)]
        results = []

        def send():
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
            results.append(post(client, "race", messages).json())
            connection.close()

        threads = [threading.Thread(target=send) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(r["replayed"] for r in results) == [False, True]
        assert Message.objects.count() == 20


@pytest.mark.django_db
class TestResendDedup:
    def test_a_51_times_resend_storm_at_2s_spacing_stores_one_message(self, uploader, vendor):
        """The client re-sends the latest message every 2 s; the sliding window keeps exactly one copy."""
        storm = [message("네 확인했습니다", at=T0 + timedelta(seconds=2 * i), unread=3) for i in range(51)]
        response = post(uploader, "b-1", storm)
        assert response.json()["stored"] == 1
        assert response.json()["dropped_resends"] == 50
        assert Message.objects.count() == 1
        assert Room.objects.get().resend_dropped_count == 50

    def test_a_storm_split_across_batches_still_stores_one(self, uploader, vendor):
        """The window is shared across batches (Redis), not only within one."""
        for batch in range(5):
            chunk = [
                message("네 확인했습니다", at=T0 + timedelta(seconds=2 * (batch * 10 + i)), unread=3) for i in range(10)
            ]
            post(uploader, f"b-{batch}", chunk)
        assert Message.objects.count() == 1
        assert Room.objects.get().resend_dropped_count == 49

    def test_a_changed_unread_count_passes(self, uploader, vendor):
        """Closing and reopening a room changes the unread count: that signal must get through."""
        response = post(
            uploader, "b-1", [message("네", unread=3), message("네", at=T0 + timedelta(seconds=2), unread=0)]
        )
        assert response.json()["stored"] == 2

    def test_a_repeat_after_the_window_passes(self, uploader, vendor):
        """A vendor saying "네" again a minute later is a new message."""
        post(uploader, "b-1", [message("네", unread=1)])
        response = post(uploader, "b-2", [message("네", at=T0 + timedelta(seconds=16), unread=1)])
        assert response.json()["stored"] == 1
        assert Message.objects.count() == 2

    def test_sent_by_me_is_part_of_the_key(self, uploader, vendor):
        response = post(uploader, "b-1", [message("네"), message("네", at=T0 + timedelta(seconds=1), sent_by_me=True)])
        assert response.json()["stored"] == 2

    def test_the_same_text_in_another_room_is_not_a_resend(self, uploader, vendor):
        other = message("네", room_key="chat-2", room_name="(1234) 대한물산 발주방", at=T0 + timedelta(seconds=1))
        response = post(uploader, "b-1", [message("네"), other])
        assert response.json()["stored"] == 2

    def test_a_batch_retried_after_a_failed_transaction_is_not_dropped_by_its_own_marks(
        self, uploader, vendor, monkeypatch
    ):
        """Redis marks survive a rolled-back transaction; the retry of the same batch must still store."""
        import conversations.services as services

        original = services._messages_insert
        calls = {"n": 0}

        def failing_once(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == 1:
                raise RuntimeError("database went away")
            return original(*args, **kwargs)

        monkeypatch.setattr(services, "_messages_insert", failing_once)
        with pytest.raises(RuntimeError):
            post(uploader, "b-1", [message("단가표 부탁드립니다")])
        assert Message.objects.count() == 0
        response = post(uploader, "b-1", [message("단가표 부탁드립니다")])
        assert response.json()["stored"] == 1

    def test_database_fallback_window_drops_the_storm_too(self, uploader, vendor, settings):
        """Without Redis the window lives in the database and gives the same result."""
        settings.REDIS_URL = ""
        storm = [message("네 확인했습니다", at=T0 + timedelta(seconds=2 * i)) for i in range(51)]
        post(uploader, "b-1", storm[:25])
        post(uploader, "b-2", storm[25:])
        assert Message.objects.count() == 1
        later = post(uploader, "b-3", [message("네 확인했습니다", at=T0 + timedelta(seconds=200))])
        assert later.json()["stored"] == 1


@pytest.mark.django_db
class TestTaggedQuestions:
    def test_tagged_message_in_a_matched_room_becomes_an_accepted_question(self, uploader, vendor):
        response = post(uploader, "b-1", [message("@봇 이번 달 납품 단가 얼마예요?")])
        assert response.json()["questions"] == 1
        question = Question.objects.get()
        assert question.text == "이번 달 납품 단가 얼마예요?"
        assert question.status == Question.Status.ACCEPTED
        assert question.vendor == vendor
        assert list(question.markers.values_list("kind", flat=True)) == [LivenessMarker.Kind.ACCEPTED]

    def test_untagged_message_is_not_a_question(self, uploader, vendor):
        post(uploader, "b-1", [message("이번 달 납품 단가 얼마예요?")])
        assert Question.objects.count() == 0

    def test_a_resent_tagged_message_makes_one_question(self, uploader, vendor):
        storm = [message("@봇 반품 절차 알려주세요", at=T0 + timedelta(seconds=2 * i)) for i in range(10)]
        post(uploader, "b-1", storm)
        assert Question.objects.count() == 1

    def test_tagged_message_in_a_blocked_room_is_closed_with_a_result_marker(self, uploader, vendor):
        """An ID typo blocks the room: the question is recorded as blocked and never answered."""
        VendorFactory(code="5678", name="가온상사", aliases=[])
        post(uploader, "b-1", [message("@봇 단가 알려주세요", room_name="(5678) 대한물산")])
        room = Room.objects.get()
        assert room.resolution_status == Room.ResolutionStatus.BLOCKED
        question = Question.objects.get()
        assert question.status == Question.Status.BLOCKED
        assert question.outcome_reason == "room_blocked:id_typo"
        markers = {m.kind: m.outcome for m in question.markers.all()}
        assert markers == {LivenessMarker.Kind.RESULT: Question.Status.BLOCKED}

    def test_tagged_message_in_an_unresolved_room_is_closed_with_a_result_marker(self, uploader, vendor):
        VendorFactory(code="2001", name="가온상사", aliases=[])
        VendorFactory(code="2002", name="가온상회", aliases=[])
        post(uploader, "b-1", [message("@봇 정산일 언제예요?", room_name="가온")])
        question = Question.objects.get()
        assert question.status == Question.Status.BLOCKED
        assert question.outcome_reason == "room_unresolved:ambiguous"
        assert question.vendor is None
        assert question.markers.get().kind == LivenessMarker.Kind.RESULT

    def test_a_renamed_room_is_resolved_again(self, uploader, vendor):
        post(uploader, "b-1", [message("안녕하세요", room_name="이름 없는 방")])
        assert Room.objects.get().resolution_status == Room.ResolutionStatus.UNRESOLVED
        post(uploader, "b-2", [message("@봇 단가?", room_name="(1234) 대한물산", at=T0 + timedelta(minutes=5))])
        room = Room.objects.get()
        assert room.resolution_status == Room.ResolutionStatus.MATCHED
        assert room.vendor == vendor
        assert Question.objects.get().status == Question.Status.ACCEPTED


@pytest.mark.django_db
def test_response_counts_add_up(uploader, vendor):
    """stored + dropped_resends + duplicates == received, and questions counts tagged stored messages."""
    messages = [
        message("@봇 배송 언제 와요?", client_message_id="c-1"),
        message("@봇 배송 언제 와요?", client_message_id="c-1"),
        message("네", at=T0 + timedelta(seconds=1)),
        message("네", at=T0 + timedelta(seconds=3)),
    ]
    body = post(uploader, "b-1", messages).json()
    assert body["received"] == 4
    assert body["stored"] + body["dropped_resends"] + body["duplicates"] == 4
    assert (body["stored"], body["dropped_resends"], body["duplicates"], body["questions"]) == (2, 1, 1, 1)
    assert json.loads(json.dumps(body)) == body


@pytest.mark.django_db
def test_the_view_mounted_without_the_device_checks_refuses_every_upload(vendor):
    """`config/urls.py` mounts the view with delivery's device token and uploader role; on its own the view stores
    nothing, even for an uploader's valid token."""
    _, token = active_device(role="uploader")
    request = APIRequestFactory().post(
        URL, {"batch_id": "b-1", "messages": [message()]}, format="json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert UploadApi.as_view()(request).status_code == 403
    assert not UploadBatch.objects.exists()


def test_the_openapi_schema_documents_the_upload_body(client, db):
    """The edge client is written against /api/schema/: the upload body is there with its required fields."""
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    body = schema["components"]["schemas"]["UploadMessage"]
    assert {"room_key", "room_name", "sent_by_me", "text", "sent_at", "unread_count"} <= set(body["required"])
    assert "/api/v1/uploads" in schema["paths"]
