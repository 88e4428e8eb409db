"""Reads of the monitoring app other apps call: open alerts, and one question's liveness markers."""

import pytest

from conversations.tests.factories import QuestionFactory
from delivery.tests.factories import StaffUserFactory
from monitoring.models import Alert, LivenessMarker
from monitoring.selectors import alerts_open_count, liveness_markers_for_question
from monitoring.services import alert_acknowledge, alert_close, alert_raise, marker_accepted_write, marker_result_write

pytestmark = pytest.mark.django_db


def test_alerts_open_count_leaves_out_acknowledged_and_closed_alerts():
    for key in ("a", "b", "c", "d"):
        alert_raise(kind=Alert.Kind.SEND_STUCK, key=key, message=key)
    acknowledged = Alert.objects.get(key="b")
    alert_acknowledge(alert=acknowledged, actor=StaffUserFactory())
    alert_close(kind=Alert.Kind.SEND_STUCK, key="c")

    assert alerts_open_count() == 2


def test_liveness_markers_for_question_are_its_own_oldest_first():
    question, other = QuestionFactory(), QuestionFactory()
    accepted = marker_accepted_write(question=question)
    marker_accepted_write(question=other)
    result = marker_result_write(question=question, outcome="answered")

    markers = list(liveness_markers_for_question(question=question))

    assert markers == [accepted, result]
    assert [marker.kind for marker in markers] == [LivenessMarker.Kind.ACCEPTED, LivenessMarker.Kind.RESULT]
