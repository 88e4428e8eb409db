"""Reads of the delivery app other apps call: whether a job was sent, how many are not, the jobs under keys."""

import pytest

from conversations.tests.factories import RoomFactory
from delivery.models import SendJob
from delivery.selectors import send_job_sent, send_jobs_by_key, send_jobs_unsent_count
from delivery.services import send_request_submit
from delivery.tests.factories import StaffUserFactory

pytestmark = pytest.mark.django_db

State = SendJob.State


@pytest.fixture
def submit():
    room, staff = RoomFactory(vendor=None, name="(1234) 대한물산"), StaffUserFactory()

    def submit_job(key: str, state: str) -> SendJob:
        job, _ = send_request_submit(
            room=room, items=[{"kind": "text", "text": key}], idempotency_key=key, question=None, actor=staff
        )
        SendJob.objects.filter(pk=job.pk).update(state=state)
        return job

    return submit_job


def test_send_job_sent_only_for_the_sent_job_under_the_key(submit):
    """A job waiting, failed or of unknown state is not sent, and neither is a key no job has."""
    submit("sent", State.SENT)
    for state in (State.QUEUED, State.FAILED, State.UNKNOWN):
        submit(state, state)

    assert send_job_sent(idempotency_key="sent") is True
    assert [send_job_sent(idempotency_key=key) for key in (State.QUEUED, State.FAILED, State.UNKNOWN)] == [False] * 3
    assert send_job_sent(idempotency_key="no-such-key") is False


def test_send_jobs_unsent_count_counts_every_job_not_sent(submit):
    submit("sent", State.SENT)
    submit("sent too", State.SENT)
    for state in (State.QUEUED, State.FAILED, State.UNKNOWN):
        submit(state, state)

    assert send_jobs_unsent_count() == 3


def test_send_jobs_by_key_finds_the_jobs_under_the_keys_given(submit):
    queued, failed = submit("a", State.QUEUED), submit("b", State.FAILED)
    submit("other", State.SENT)

    assert set(send_jobs_by_key(idempotency_keys={"a": "첫째", "b": "둘째", "no-such-key": "셋째"})) == {queued, failed}
    assert list(send_jobs_by_key(idempotency_keys=[])) == []
