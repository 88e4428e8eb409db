"""What the run fault tests share: a question that can be answered from a record, the model's script for it, a
stand-in for a killed worker and the "answered exactly once" check."""

from conversations.models import Question
from delivery.models import SendJob
from monitoring.models import LivenessMarker

PAYMENT_TERMS = "월말 마감 후 익월 10일에 현금으로 결제합니다."
SEARCH = {"tool_calls": [{"name": "search_records", "arguments": {"query": "결제 조건"}}]}
ANSWER = [SEARCH, {"content": PAYMENT_TERMS}]


class WorkerKilled(BaseException):
    """Stands for SIGKILL / OOM inside a model call: nothing in the run catches it, so no cleanup or status change
    happens — the question stays `running` with its run open, as a dead worker leaves it."""


def answered_once(question: Question) -> None:
    """The question is answered, with one send job and one result marker; the accepted marker is still there."""
    question.refresh_from_db()
    assert question.status == Question.Status.ANSWERED
    assert SendJob.objects.filter(question=question).count() == 1
    assert SendJob.objects.get(question=question).items.get().text == PAYMENT_TERMS
    assert list(question.markers.filter(kind=LivenessMarker.Kind.RESULT).values_list("outcome", flat=True)) == [
        "answered"
    ]
    assert question.markers.filter(kind=LivenessMarker.Kind.ACCEPTED).count() == 1
