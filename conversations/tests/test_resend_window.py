"""The shared resend window across a Redis restart and across devices (real Redis, FLUSHDB as the restart)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from config.redis import redis_client
from conversations.models import Message, ResendWindowEntry, Room
from conversations.tests.conftest import uploader_client
from conversations.tests.test_uploads import T0, message, post


def _storm(count: int, *, start=T0, text="네 확인했습니다"):
    return [message(text, at=start + timedelta(seconds=2 * i), unread=3) for i in range(count)]


def _redis_remembering_since_long_ago():
    """What a Redis that has run for longer than the key TTL looks like: its window is trusted on its own."""
    redis_client().set("vcs:resend:since", 0)


@pytest.mark.django_db
class TestRedisRestart:
    @pytest.mark.parametrize("redis_age", ["fresh", "long_running"])
    def test_a_restart_mid_storm_stores_no_extra_copy(self, uploader, vendor, redis_age):
        """The window Redis lost is found again in the database: the storm still leaves one copy."""
        if redis_age == "long_running":
            _redis_remembering_since_long_ago()
        storm = _storm(51)
        for number, start in enumerate(range(0, 51, 10)):
            if number == 3:
                redis_client().flushdb()
            post(uploader, f"b-{number}", storm[start : start + 10])
        assert Message.objects.count() == 1
        assert Room.objects.get().resend_dropped_count == 50

    def test_after_a_restart_a_repeat_outside_the_window_is_still_stored(self, uploader, vendor):
        """The database fallback slides like the Redis window: "네" 16 s after the last copy is a new message."""
        storm = _storm(10)
        post(uploader, "b-1", storm)
        redis_client().flushdb()
        response = post(uploader, "b-2", [message("네 확인했습니다", at=T0 + timedelta(seconds=18 + 16), unread=3)])
        assert response.json()["stored"] == 1
        assert Message.objects.count() == 2

    def test_after_a_restart_the_window_lives_in_redis_again(self, uploader, vendor):
        """The first batch after the restart refills Redis from the database, so later batches agree with it."""
        storm = _storm(30)
        post(uploader, "b-1", storm[:10])
        redis_client().flushdb()
        post(uploader, "b-2", storm[10:20])
        post(uploader, "b-3", storm[20:])
        assert Message.objects.count() == 1

    def test_a_batch_retried_after_a_restart_and_a_failed_transaction_keeps_its_messages(
        self, uploader, vendor, monkeypatch
    ):
        """Marks written by a transaction that then failed must not make its own retry drop its messages."""
        import conversations.services as services

        post(uploader, "b-1", [message("이전 메시지")])
        redis_client().flushdb()
        original = services._messages_insert
        calls = {"n": 0}

        def failing_once(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == 1:
                raise RuntimeError("database went away")
            return original(*args, **kwargs)

        monkeypatch.setattr(services, "_messages_insert", failing_once)
        with pytest.raises(RuntimeError):
            post(uploader, "b-2", [message("단가표 부탁드립니다", at=T0 + timedelta(minutes=1))])
        response = post(uploader, "b-2", [message("단가표 부탁드립니다", at=T0 + timedelta(minutes=1))])
        assert response.json()["stored"] == 1

    def test_a_long_running_redis_is_not_second_guessed_by_the_database(self, uploader, vendor):
        """Reading the database window costs a query per batch: only while Redis may have forgotten keys."""
        _redis_remembering_since_long_ago()
        table = ResendWindowEntry._meta.db_table
        with CaptureQueriesContext(connection) as queries:
            post(uploader, "b-1", _storm(10))
        reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT") and table in q["sql"]]
        assert reads == []
        assert ResendWindowEntry.objects.count() == 1  # but the window is still written for a restart

    def test_a_fresh_redis_reads_the_database_window(self, uploader, vendor):
        table = ResendWindowEntry._meta.db_table
        with CaptureQueriesContext(connection) as queries:
            post(uploader, "b-1", _storm(10))
        assert [q for q in queries if q["sql"].startswith("SELECT") and table in q["sql"]]

    def test_only_windows_that_slid_past_their_stored_copy_are_written(self, uploader, vendor):
        """The stored copy of a key is a message row already: an ordinary batch writes no window rows."""
        post(uploader, "b-1", [message(f"메시지 {n}", at=T0 + timedelta(minutes=n)) for n in range(5)])
        assert ResendWindowEntry.objects.count() == 0
        post(uploader, "b-2", _storm(3, start=T0 + timedelta(hours=1)))
        assert ResendWindowEntry.objects.count() == 1

    def test_after_a_restart_a_stored_copy_alone_still_catches_the_next_copy(self, uploader, vendor):
        post(uploader, "b-1", [message("네 확인했습니다", unread=3)])
        redis_client().flushdb()
        response = post(uploader, "b-2", [message("네 확인했습니다", at=T0 + timedelta(seconds=2), unread=3)])
        assert response.json()["dropped_resends"] == 1
        assert Message.objects.count() == 1

    def test_window_entries_past_the_key_ttl_are_pruned(self, uploader, vendor, settings):
        post(uploader, "b-1", _storm(3, text="오래된 메시지"))
        aged = timezone.now() - timedelta(seconds=settings.RESEND_KEY_TTL_SECONDS + 60)
        ResendWindowEntry.objects.update(updated_at=aged)
        post(uploader, "b-2", _storm(3, start=T0 + timedelta(minutes=1), text="새 메시지"))
        assert list(ResendWindowEntry.objects.values_list("owner", flat=True)) == [f"{uploader.device.pk}:b-2"]


@pytest.mark.django_db
class TestDevicesShareTheWindow:
    def test_the_same_batch_id_from_another_device_is_judged_by_the_window(self, vendor):
        """Two PCs in one room may name batches alike: one device's batch id never excuses another's copies."""
        storm = _storm(3)
        for n, copy in enumerate(storm):
            response = post(uploader_client(f"PC {n}"), "cs-pc:000000001-000000001", [copy])
            assert response.status_code == 200
        assert Message.objects.count() == 1

    def test_without_redis_the_same_batch_id_from_another_device_is_judged_too(self, vendor, settings):
        settings.REDIS_URL = ""
        storm = _storm(3)
        for n, copy in enumerate(storm):
            post(uploader_client(f"PC {n}"), "cs-pc:000000001-000000001", [copy])
        assert Message.objects.count() == 1
