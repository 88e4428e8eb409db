"""The question and message reads other apps use: what each one filters, how it orders and where it stops."""

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db.models import Exists, OuterRef
from django.utils import timezone

from conversations.models import Message, Question, Room
from conversations.selectors import (
    question_counts_by_day,
    question_ids_untouched,
    question_ids_without,
    question_texts_counted,
    question_with_room_get,
    questions_all,
    questions_by_ids,
    questions_count_between,
    questions_created_between,
    questions_newest_without,
    room_messages_before,
    room_with_vendor_get,
)
from conversations.tests.factories import MessageFactory, QuestionFactory, RoomFactory

Status = Question.Status
pytestmark = pytest.mark.django_db


def _set(question: Question, **fields) -> Question:
    # `created_at` and `updated_at` are set by the database on save; tests move them with a plain update.
    Question.objects.filter(pk=question.pk).update(**fields)
    question.refresh_from_db()
    return question


def _replied_in_room():
    """A condition on a question: someone on our side wrote in its room."""
    return Exists(Message.objects.filter(room=OuterRef("room_id"), sent_by_me=True))


class TestRoomMessagesBefore:
    def test_the_rooms_messages_with_text_from_since_up_to_before_newest_first(self):
        room = RoomFactory()
        now = timezone.now()
        before = MessageFactory(room=room, text="질문", sent_at=now)
        MessageFactory(room=room, text="오래됨", sent_at=now - timedelta(hours=3))
        first = MessageFactory(room=room, text="첫째", sent_at=now - timedelta(minutes=30))
        second = MessageFactory(room=room, text="둘째", sent_at=now - timedelta(minutes=10))
        same_second = MessageFactory(room=room, text="같은 시각", sent_at=now)
        MessageFactory(room=room, text="", sent_at=now - timedelta(minutes=5))
        MessageFactory(room=room, text="나중", sent_at=now + timedelta(minutes=1))
        MessageFactory(text="다른 방", sent_at=now - timedelta(minutes=1))

        recent = room_messages_before(room=room, before=before, since=now - timedelta(hours=1), limit=10)

        assert recent == [same_second, second, first]

    def test_the_limit_keeps_the_newest(self):
        room = RoomFactory()
        now = timezone.now()
        before = MessageFactory(room=room, sent_at=now)
        older = [MessageFactory(room=room, sent_at=now - timedelta(minutes=minutes)) for minutes in (1, 2, 3)]

        assert room_messages_before(room=room, before=before, since=now - timedelta(hours=1), limit=2) == older[:2]


class TestQuestionIdsUntouched:
    def test_questions_in_the_status_not_changed_since_oldest_first_up_to_the_limit(self):
        now = timezone.now()
        stale = [_set(QuestionFactory(), updated_at=now - timedelta(hours=2)) for _ in range(3)]
        _set(QuestionFactory(), updated_at=now)
        _set(QuestionFactory(status=Status.RUNNING), updated_at=now - timedelta(hours=2))

        since = now - timedelta(hours=1)
        assert question_ids_untouched(status=Status.ACCEPTED, untouched_since=since, limit=10) == [
            question.pk for question in stale
        ]
        assert question_ids_untouched(status=Status.ACCEPTED, untouched_since=since, limit=2) == [
            question.pk for question in stale[:2]
        ]


class TestQuestionIdsWithout:
    def test_questions_in_the_status_the_condition_finds_nothing_for_oldest_first(self):
        lonely = [QuestionFactory(status=Status.RUNNING) for _ in range(3)]
        replied = QuestionFactory(status=Status.RUNNING)
        MessageFactory(room=replied.room, sent_by_me=True)
        QuestionFactory(status=Status.ACCEPTED)

        assert question_ids_without(status=Status.RUNNING, exists=_replied_in_room(), limit=10) == [
            question.pk for question in lonely
        ]
        assert question_ids_without(status=Status.RUNNING, exists=_replied_in_room(), limit=1) == [lonely[0].pk]


class TestQuestionsNewestWithout:
    def test_questions_in_the_statuses_the_condition_finds_nothing_for_newest_first(self):
        now = timezone.now()
        held = _set(QuestionFactory(status=Status.HELD), created_at=now - timedelta(hours=2))
        failed = _set(QuestionFactory(status=Status.FAILED), created_at=now - timedelta(hours=1))
        replied = QuestionFactory(status=Status.HELD)
        MessageFactory(room=replied.room, sent_by_me=True)
        QuestionFactory(status=Status.ANSWERED)

        found = questions_newest_without(statuses=(Status.HELD, Status.FAILED), exists=_replied_in_room(), limit=10)

        assert found == [failed, held]
        assert questions_newest_without(statuses=(Status.HELD, Status.FAILED), exists=_replied_in_room(), limit=1) == [
            failed
        ]

    def test_room_and_vendor_come_with_the_question(self, django_assert_num_queries):
        QuestionFactory(status=Status.HELD)
        with django_assert_num_queries(1):
            (question,) = questions_newest_without(statuses=(Status.HELD,), exists=_replied_in_room(), limit=10)
            assert question.room.name
            assert question.vendor.name


class TestQuestionsCreatedBetween:
    def test_start_is_included_end_excluded_and_the_vendor_narrows(self):
        now = timezone.now()
        start, end = now - timedelta(days=1), now
        at_start = _set(QuestionFactory(), created_at=start)
        inside = _set(QuestionFactory(), created_at=now - timedelta(hours=1))
        _set(QuestionFactory(), created_at=end)
        _set(QuestionFactory(), created_at=start - timedelta(seconds=1))

        assert set(questions_created_between(start=start, end=end)) == {at_start, inside}
        assert list(questions_created_between(start=start, end=end, vendor_id=inside.vendor_id)) == [inside]

    def test_questions_all_is_every_question(self):
        questions = {QuestionFactory(status=status) for status in (Status.ACCEPTED, Status.ANSWERED, Status.FAILED)}
        assert set(questions_all()) == questions


SEOUL = ZoneInfo("Asia/Seoul")


class TestQuestionCountsBetween:
    """The statistics' counts over `questions_created_between`: the same bounds, the vendor narrowing, plain data."""

    @pytest.fixture
    def asked(self):
        """Questions of one vendor either side of Seoul's midnight and on the window's edges, and another vendor's."""
        first = QuestionFactory(status=Status.ANSWERED, text="결제 조건?")
        vendor = first.vendor
        _set(first, created_at=datetime(2025, 3, 13, 0, 0, tzinfo=SEOUL))  # the start: included
        for when, status, text in [
            (datetime(2025, 3, 13, 23, 59, tzinfo=SEOUL), Status.HELD, "결제 조건?"),
            (datetime(2025, 3, 14, 0, 1, tzinfo=SEOUL), Status.ANSWERED, "반품은요"),
            (datetime(2025, 3, 15, 0, 0, tzinfo=SEOUL), Status.ANSWERED, "결제 조건?"),  # the end: excluded
            (datetime(2025, 3, 12, 23, 59, tzinfo=SEOUL), Status.FAILED, "반품은요"),  # before the start
        ]:
            _set(QuestionFactory(vendor=vendor, message__room=first.room, status=status, text=text), created_at=when)
        other = _set(
            QuestionFactory(status=Status.FAILED, text="반품은요"), created_at=datetime(2025, 3, 14, 9, tzinfo=SEOUL)
        )
        bounds = {"start": datetime(2025, 3, 13, tzinfo=SEOUL), "end": datetime(2025, 3, 15, tzinfo=SEOUL)}
        return {"bounds": bounds, "vendor_id": vendor.pk, "other_vendor_id": other.vendor_id}

    def test_questions_count_between_counts_all_or_one_status(self, asked):
        bounds = asked["bounds"]
        assert questions_count_between(**bounds) == 4
        assert questions_count_between(**bounds, status=Status.ANSWERED) == 2
        assert questions_count_between(**bounds, vendor_id=asked["vendor_id"]) == 3
        assert questions_count_between(**bounds, vendor_id=asked["other_vendor_id"], status=Status.ANSWERED) == 0

    def test_counts_by_day_are_per_day_of_the_zone_given_only_days_with_questions(
        self, asked, django_assert_num_queries
    ):
        statuses = (Status.ANSWERED, Status.HELD, Status.FAILED)
        with django_assert_num_queries(1):
            counts = question_counts_by_day(**asked["bounds"], statuses=statuses, tz=SEOUL)
        assert counts == {
            date(2025, 3, 13): {"total": 2, "answered": 1, "held": 1, "failed": 0},
            date(2025, 3, 14): {"total": 2, "answered": 1, "held": 0, "failed": 1},
        }
        # UTC is nine hours behind Seoul: 00:00 on the 13th falls on the 12th, 00:01 on the 14th on the 13th.
        utc = question_counts_by_day(
            **asked["bounds"], vendor_id=asked["vendor_id"], statuses=statuses, tz=ZoneInfo("UTC")
        )
        assert utc == {
            date(2025, 3, 12): {"total": 1, "answered": 1, "held": 0, "failed": 0},
            date(2025, 3, 13): {"total": 2, "answered": 1, "held": 1, "failed": 0},
        }

    def test_texts_counted_are_each_distinct_wording_with_its_count_and_last_time(
        self, asked, django_assert_num_queries
    ):
        with django_assert_num_queries(1):
            texts = sorted(question_texts_counted(**asked["bounds"]))
        assert texts == [
            ("결제 조건?", 2, datetime(2025, 3, 13, 23, 59, tzinfo=SEOUL)),
            ("반품은요", 2, datetime(2025, 3, 14, 9, 0, tzinfo=SEOUL)),
        ]
        assert list(question_texts_counted(**asked["bounds"], vendor_id=asked["other_vendor_id"])) == [
            ("반품은요", 1, datetime(2025, 3, 14, 9, 0, tzinfo=SEOUL))
        ]


class TestSingleReads:
    def test_room_with_vendor_get_loads_the_vendor_and_refuses_a_missing_room(self, django_assert_num_queries):
        room = RoomFactory()
        with django_assert_num_queries(1):
            assert room_with_vendor_get(room_id=room.pk).vendor.name == room.vendor.name
        with pytest.raises(Room.DoesNotExist):
            room_with_vendor_get(room_id=room.pk + 1000)

    def test_question_with_room_get_loads_room_and_vendor_and_refuses_a_missing_one(self, django_assert_num_queries):
        question = QuestionFactory()
        with django_assert_num_queries(1):
            loaded = question_with_room_get(question_id=question.pk)
            assert (loaded.room.name, loaded.vendor.name) == (question.room.name, question.vendor.name)
        with pytest.raises(Question.DoesNotExist):
            question_with_room_get(question_id=question.pk + 1000)

    def test_questions_by_ids_are_the_existing_ones_by_id(self):
        first, second, _ = QuestionFactory(), QuestionFactory(), QuestionFactory()
        assert questions_by_ids({second.pk, first.pk, second.pk + 1000}) == [first, second]
        assert questions_by_ids([]) == []
