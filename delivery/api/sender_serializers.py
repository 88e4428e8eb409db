"""Shapes of send jobs: the sender device's view (docs/edge-api.md) and the staff view of /send-requests."""

from django.urls import reverse
from rest_framework import serializers

from config.api import JSONIntegerField
from delivery.models import SendJob, SendJobItem

PROGRESS_STATE_CHOICES = [(state.value, state.label) for state in (SendJob.State.SENDING, SendJob.State.VERIFYING)]
RESULT_OUTCOME_CHOICES = [
    (state.value, state.label) for state in (SendJob.State.SENT, SendJob.State.FAILED, SendJob.State.UNKNOWN)
]


class SendCountsSerializer(serializers.Serializer):
    """Texts, photos and files counted in the room (or resent) by a sender device."""

    texts = JSONIntegerField(min_value=0, default=0)
    photos = JSONIntegerField(min_value=0, default=0)
    files = JSONIntegerField(min_value=0, default=0)


class SenderJobItemSerializer(serializers.Serializer):
    """`{"index", "kind": "text", "text"}` or `{"index", "kind": "photo"|"file", "name", "sha256", "content_url"}`."""

    index = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=SendJobItem.Kind.choices)
    text = serializers.CharField(required=False, help_text="Text items only.")
    name = serializers.CharField(required=False, help_text="Photo and file items only.")
    sha256 = serializers.CharField(required=False, help_text="Photo and file items only: hash of the content.")
    content_url = serializers.CharField(required=False, help_text="Photo and file items only: GET for the bytes.")

    def to_representation(self, item: SendJobItem) -> dict:
        if item.kind == SendJobItem.Kind.TEXT:
            return {"index": item.index, "kind": item.kind, "text": item.text}
        return {
            "index": item.index,
            "kind": item.kind,
            "name": item.name,
            "sha256": item.sha256,
            "content_url": reverse("sender-job-item-content", kwargs={"job_id": item.job_id, "index": item.index}),
        }


class SenderJobSerializer(serializers.Serializer):
    """A send job as a sender device sees it."""

    id = serializers.IntegerField()
    room_key = serializers.CharField(source="room.stable_key")
    room_name = serializers.CharField(source="room.name")
    state = serializers.ChoiceField(choices=SendJob.State.choices)
    items = SenderJobItemSerializer(many=True)
    lease_expires_at = serializers.DateTimeField(allow_null=True)
    attempt = serializers.IntegerField()


class StaffJobItemSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=SendJobItem.Kind.choices)
    text = serializers.CharField()
    name = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()


class StaffJobSerializer(serializers.Serializer):
    """A send job as staff and the agent see it after a send request."""

    id = serializers.IntegerField()
    room_key = serializers.CharField(source="room.stable_key")
    room_name = serializers.CharField(source="room.name")
    question_id = serializers.IntegerField(allow_null=True)
    idempotency_key = serializers.CharField()
    state = serializers.ChoiceField(choices=SendJob.State.choices)
    reason = serializers.CharField()
    attempt = serializers.IntegerField()
    expected = SendCountsSerializer(source="expected_counts")
    observed = serializers.DictField(source="observed_counts", child=serializers.IntegerField())
    resent = serializers.DictField(source="resent_counts", child=serializers.IntegerField())
    items = StaffJobItemSerializer(many=True)
    lease_expires_at = serializers.DateTimeField(allow_null=True)
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    state_changed_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class SendErrorSerializer(serializers.Serializer):
    """Every error body has a machine-readable `error` code; some add details."""

    error = serializers.CharField()
    job_id = serializers.IntegerField(required=False)
    state = serializers.CharField(required=False)
    detail = serializers.JSONField(required=False)
