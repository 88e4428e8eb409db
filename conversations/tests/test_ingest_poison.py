"""One bad message never stops a PC or loses its neighbours: the message, not the batch, is the unit of rejection.

Characters the database cannot hold are cleaned from text where the meaning survives; identifiers that cannot be
cleaned, times outside the sane window and malformed messages are refused one by one, kept in the quarantine for
staff, and the rest of the batch is stored.
"""

import json
from datetime import timedelta

import pytest
from django.test import Client

from conversations import models
from conversations.models import Message, Question, Room, UploadBatch
from conversations.tests.test_uploads import T0, URL, message, post
from monitoring.models import AuditEvent


def _rejections(response) -> dict[int, str]:
    return {item["index"]: item["reason"] for item in response.json()["rejections"]}


@pytest.mark.django_db
class TestUnstorableCharacters:
    def test_nul_in_text_is_removed_and_the_cleaning_recorded(self, uploader, vendor):
        """PostgreSQL text cannot hold NUL: the text is stored without it and the message says what was removed."""
        response = post(uploader, "b-1", [message("단가\x00 확인\x00 부탁드립니다")])
        assert response.status_code == 200
        body = response.json()
        assert (body["stored"], body["cleaned"], body["rejected"]) == (1, 1, 0)
        stored = Message.objects.get()
        assert stored.text == "단가 확인 부탁드립니다"
        assert stored.cleaning == {"text": {"nul": 2}}

    def test_nul_in_sender_and_room_name_is_removed(self, uploader, vendor):
        response = post(
            uploader, "b-1", [message("안녕하세요", sender_name="김\x00대리", room_name="(1234) 대한\x00물산")]
        )
        assert response.status_code == 200
        stored = Message.objects.get()
        assert stored.sender_name == "김대리"
        assert stored.room.name == "(1234) 대한물산"
        assert stored.room.vendor == vendor
        assert stored.cleaning == {"sender_name": {"nul": 1}, "room_name": {"nul": 1}}

    def test_a_lone_surrogate_in_text_is_replaced(self, uploader, vendor):
        """A lone UTF-16 surrogate (valid JSON, not encodable as UTF-8) becomes U+FFFD instead of a 500."""
        body = json.dumps({"batch_id": "b-1", "messages": [message("이모지 \ud83d 깨짐")]})
        response = uploader.post(URL, data=body, content_type="application/json")
        assert response.status_code == 200
        stored = Message.objects.get()
        assert stored.text == "이모지 \ufffd 깨짐"
        assert stored.cleaning == {"text": {"surrogate": 1}}

    @pytest.mark.parametrize(
        ("field", "value"),
        [("room_key", "chat-\x001"), ("client_message_id", "log-\x007"), ("room_key", "chat-\udc801")],
    )
    def test_an_unstorable_identifier_refuses_that_message_only(self, uploader, vendor, field, value):
        """An identifier cannot be cleaned safely (it would merge rooms or ids): that message is refused, the
        neighbours are stored and the refused one is kept in the quarantine with its raw fields."""
        messages = [message("첫째"), message("둘째", at=T0 + timedelta(minutes=1)), message("셋째")]
        messages[1][field] = value
        messages[2]["sent_at"] = (T0 + timedelta(minutes=2)).isoformat()
        response = uploader.post(
            URL, data=json.dumps({"batch_id": "b-1", "messages": messages}), content_type="application/json"
        )
        assert response.status_code == 200
        body = response.json()
        assert (body["received"], body["stored"], body["rejected"]) == (3, 2, 1)
        assert _rejections(response) == {1: "unstorable_identifier"}
        assert body["rejections"][0]["errors"][0]["field"] == field
        assert sorted(Message.objects.values_list("text", flat=True)) == ["셋째", "첫째"]
        quarantined = models.QuarantinedMessage.objects.get()
        assert (quarantined.index, quarantined.reason) == (1, "unstorable_identifier")
        assert quarantined.device == uploader.device
        assert quarantined.batch.batch_id == "b-1"
        assert json.loads(quarantined.raw)[field] == value  # the raw fields as received, exactly
        assert "\x00" not in quarantined.raw

    def test_nul_in_the_batch_id_refuses_the_batch_with_422(self, uploader, vendor):
        """The batch id is the envelope: a batch that cannot be named cannot be stored or replayed."""
        response = post(uploader, "b-\x001", [message("정상")])
        assert response.status_code == 422
        item = response.json()["items"][0]
        assert (item["index"], item["field"]) == (None, "batch_id")
        assert Message.objects.count() == 0
        assert UploadBatch.objects.count() == 0


@pytest.mark.django_db
class TestTimesOutsideTheWindow:
    @pytest.mark.parametrize(
        "sent_at",
        [
            "2026-11-30T10:00:00+16:00",  # pydantic and Python accept it, PostgreSQL refuses it
            "2026-11-30T10:00:00-23:59",
            "2026-11-30T10:00:00-14:30",
            "2026-11-30T10:00:00+14:01",
            "9999-12-31T23:00:00-05:00",  # year 10000 in UTC: stored, then unreadable by Python
            "0001-01-01T00:00:00+09:00",  # year 0 in UTC
            "1999-12-31T23:59:59+00:00",
            "2101-01-01T00:00:00+00:00",
            "2100-12-31T23:00:00-05:00",  # 2101 in UTC
        ],
    )
    def test_a_time_outside_the_window_refuses_that_message(self, uploader, vendor, sent_at):
        bad = message("이상한 시각", at=T0 + timedelta(minutes=1))
        bad["sent_at"] = sent_at
        response = post(uploader, "b-1", [message("정상"), bad])
        assert response.status_code == 200
        assert _rejections(response) == {1: "time_out_of_range"}
        assert list(Message.objects.values_list("text", flat=True)) == ["정상"]
        assert models.QuarantinedMessage.objects.get().reason == "time_out_of_range"

    @pytest.mark.parametrize(
        "sent_at", ["2026-11-30T10:00:00+14:00", "2026-11-30T10:00:00-12:00", "2000-01-01T09:00:00+09:00"]
    )
    def test_times_at_the_edges_of_the_window_are_stored(self, uploader, vendor, sent_at):
        inside = message("경계 시각")
        inside["sent_at"] = sent_at
        response = post(uploader, "b-1", [inside])
        assert (response.json()["stored"], response.json()["rejected"]) == (1, 0)

    def test_the_window_is_a_setting(self, uploader, vendor, settings):
        settings.UPLOAD_SENT_AT_EARLIEST_YEAR = 2026
        settings.UPLOAD_SENT_AT_LATEST_YEAR = 2026
        settings.UPLOAD_SENT_AT_MAX_OFFSET_MINUTES = 9 * 60
        too_early = message("작년", at=T0 - timedelta(days=365))
        too_far_east = message("동쪽")
        too_far_east["sent_at"] = "2026-11-30T10:00:00+10:00"
        response = post(uploader, "b-1", [message("올해"), too_early, too_far_east])
        assert _rejections(response) == {1: "time_out_of_range", 2: "time_out_of_range"}
        messages = [item["errors"][0]["message"] for item in response.json()["rejections"]]
        assert messages == ["time is outside the years 2026–2026 (UTC)", "UTC offset +10:00 is outside ±09:00"]

    def test_admin_lists_and_the_question_page_still_open(self, uploader, vendor, admin_client):
        """The absurd times never reach the tables, so the staff pages that read them keep working."""
        bad = message("@봇 단가 알려주세요")
        bad["sent_at"] = "9999-12-31T23:00:00-05:00"
        post(uploader, "b-1", [message("@봇 정상 질문"), bad])
        question = Question.objects.get()
        for url in (
            "/admin/conversations/message/",
            "/admin/monitoring/livenessmarker/",
            "/admin/conversations/quarantinedmessage/",
            f"/admin/conversations/quarantinedmessage/{models.QuarantinedMessage.objects.get().pk}/change/",
            f"/admin/conversations/question/{question.pk}/change/",
        ):
            assert admin_client.get(url).status_code == 200, url

    def test_a_tagged_message_with_an_absurd_time_makes_no_question(self, uploader, vendor):
        """Refused before it becomes a question, so no run is started that could never finish."""
        bad = message("@봇 반품 절차 알려주세요")
        bad["sent_at"] = "0001-01-01T00:00:00+09:00"
        response = post(uploader, "b-1", [bad])
        assert (response.json()["questions"], response.json()["rejected"]) == (0, 1)
        assert Question.objects.count() == 0


@pytest.mark.django_db
class TestOneBadMessageKeepsItsNeighbours:
    def test_one_over_long_message_among_49_valid_ones(self, uploader, vendor):
        """The 422-for-the-whole-batch case: 49 valid neighbours are stored, the long one is quarantined."""
        messages = [message(f"메시지 {i}", at=T0 + timedelta(minutes=i)) for i in range(50)]
        messages[17]["text"] = "가" * 20001
        response = post(uploader, "b-1", messages)
        assert response.status_code == 200
        body = response.json()
        assert (body["received"], body["stored"], body["rejected"]) == (50, 49, 1)
        (rejection,) = body["rejections"]
        assert (rejection["index"], rejection["reason"]) == (17, "invalid")
        (error,) = rejection["errors"]
        assert error["field"] == "text"
        assert "20000" in error["message"]
        assert Message.objects.count() == 49
        quarantined = models.QuarantinedMessage.objects.get()
        assert json.loads(quarantined.raw)["text"] == "가" * 20001
        assert quarantined.room == Room.objects.get()

    def test_every_kind_of_malformed_message_is_refused_alone(self, uploader, vendor):
        no_offset = message("오프셋 없음")
        no_offset["sent_at"] = "2026-11-30T10:00:00"
        missing_room = message("방 없음")
        del missing_room["room_key"]
        messages = [message("정상"), no_offset, missing_room, message("음수", unread=-1), "문자열", None, [1, 2]]
        response = post(uploader, "b-1", messages)
        assert response.status_code == 200
        assert _rejections(response) == {i: "invalid" for i in range(1, 7)}
        fields = {item["index"]: item["errors"][0]["field"] for item in response.json()["rejections"]}
        assert (fields[1], fields[2], fields[3]) == ("sent_at", "room_key", "unread_count")
        assert Message.objects.count() == 1
        assert models.QuarantinedMessage.objects.count() == 6
        assert models.QuarantinedMessage.objects.get(index=2).room is None

    def test_counts_add_up_with_rejections(self, uploader, vendor):
        """received == stored + dropped_resends + duplicates + rejected."""
        messages = [
            message("네", client_message_id="c-1"),
            message("네", client_message_id="c-1"),
            message("네", at=T0 + timedelta(seconds=2), client_message_id="c-2"),
            message("x" * 20001),
        ]
        body = post(uploader, "b-1", messages).json()
        assert (body["stored"], body["duplicates"], body["dropped_resends"], body["rejected"]) == (1, 1, 1, 1)
        assert body["received"] == 4

    def test_the_quarantine_is_audited_and_replayed_with_the_batch(self, uploader, vendor):
        """The same batch again answers the same rejections and quarantines nothing twice."""
        messages = [message("정상"), message("y" * 20001), message("z", room_key="\x00")]
        first = post(uploader, "b-1", messages).json()
        again = post(uploader, "b-1", messages).json()
        assert again == {**first, "replayed": True}
        assert models.QuarantinedMessage.objects.count() == 2
        event = AuditEvent.objects.get(action="upload.messages_quarantined")
        assert event.target_id == str(UploadBatch.objects.get().pk)
        assert event.actor_kind == "device"
        assert event.data["reasons"] == {"invalid": 1, "unstorable_identifier": 1}

    def test_a_batch_of_only_bad_messages_is_still_accepted(self, uploader, vendor):
        """The envelope is valid, so the batch is stored (with nothing in it) and the uploader moves on."""
        response = post(uploader, "b-1", [message("x" * 20001), message("y", room_key="\x00")])
        assert response.status_code == 200
        assert (response.json()["stored"], response.json()["rejected"]) == (0, 2)
        assert UploadBatch.objects.get().rejected_count == 2


@pytest.mark.django_db
class TestHostileBodies:
    def test_100000_nested_brackets_are_a_422_not_a_500(self, uploader):
        client = Client(raise_request_exception=False, HTTP_AUTHORIZATION=uploader._credentials["HTTP_AUTHORIZATION"])
        response = client.post(URL, data="[" * 100_000, content_type="application/json")
        assert response.status_code == 422
        assert response.json()["error"] == "INVALID_BATCH"

    def test_deep_nesting_inside_one_message_refuses_that_message(self, uploader, vendor):
        """Deep but parseable: the message is refused, and its raw fields are still stored in the quarantine."""
        deep = message("깊음")
        deep["text"] = json.loads("[" * 200 + "]" * 200)
        response = post(uploader, "b-1", [message("정상"), deep])
        assert _rejections(response) == {1: "invalid"}
        assert json.loads(models.QuarantinedMessage.objects.get().raw)["text"] == deep["text"]

    def test_a_batch_whose_messages_is_not_a_list_is_a_422(self, uploader):
        response = uploader.post(URL, {"batch_id": "b-1", "messages": {"0": message()}}, format="json")
        assert response.status_code == 422
        assert response.json()["items"][0]["field"] == "messages"


@pytest.mark.django_db
def test_staff_see_the_quarantine_in_the_admin_with_the_raw_fields(uploader, vendor, admin_client):
    """Room, device, the raw fields (NUL visible as an escape, Korean readable) and the reason, in Korean labels."""
    post(uploader, "b-1", [message("정상"), message("방 키에 NUL", client_message_id="log-\x009")])
    quarantined = models.QuarantinedMessage.objects.get()
    listing = admin_client.get("/admin/conversations/quarantinedmessage/").content.decode()
    assert "격리된 메시지" in listing
    assert "저장할 수 없는 식별자" in listing
    page = admin_client.get(f"/admin/conversations/quarantinedmessage/{quarantined.pk}/change/").content.decode()
    assert "log-\\u00009" in page
    assert "방 키에 NUL" in page
    assert "(1234) 대한물산" in page  # the room it named
    assert "1층 CS PC" in page  # the device
