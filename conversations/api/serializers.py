"""Upload API shapes. The request is a pydantic model: it validates a 500-message batch straight from the JSON
about ten times faster than DRF serializers do, and drf-spectacular documents it from the same class."""

from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints
from rest_framework import serializers

from conversations.models import QuarantinedMessage

RoomKey = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
RoomName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]


class UploadAttachments(BaseModel):
    photos: int = Field(0, ge=0, le=1000)
    files: int = Field(0, ge=0, le=1000)


class UploadMessage(BaseModel):
    room_key: RoomKey = Field(description="The room's stable key from the client DB.")
    room_name: RoomName = Field(description="The room name as shown, e.g. `(1234) 대한물산`.")
    sender_name: str = Field(max_length=200)
    sent_by_me: bool
    text: str = Field(max_length=20000)
    # A time without an offset is ambiguous across PCs in different settings: refused rather than guessed.
    sent_at: AwareDatetime = Field(
        description="ISO 8601 with an offset, e.g. 2026-11-30T10:15:02+09:00; a UTC year within 2000–2100 and an "
        "offset within ±14:00 (configurable), else the message is refused."
    )
    unread_count: int = Field(ge=0, le=100000)
    client_message_id: str | None = Field(None, max_length=100)
    attachments: UploadAttachments = Field(default_factory=UploadAttachments)


class UploadBatchEnvelope(BaseModel):
    """What the batch as a whole must be: an id and a list. Each message is then validated on its own, so one
    malformed message is refused alone instead of taking its batch with it."""

    # A NUL refuses the batch (its id is stored): the schema says so; the check itself is the storable-text one.
    batch_id: str = Field(min_length=1, max_length=100, json_schema_extra={"pattern": "^[^\\x00]*$"})
    messages: list[Any]


class UploadBatchInput(UploadBatchEnvelope):
    """The documented request body: the envelope with messages of the contract's shape."""

    model_config = ConfigDict(title="UploadBatchInput")

    messages: list[UploadMessage]


class UploadFieldErrorSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="The message's field, dotted for nested ones; '' for the message.")
    message = serializers.CharField()


class UploadRejectionSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position of the refused message in the batch's `messages`.")
    reason = serializers.ChoiceField(choices=QuarantinedMessage.Reason.choices)
    errors = UploadFieldErrorSerializer(many=True)


class UploadOutputSerializer(serializers.Serializer):
    batch_id = serializers.CharField()
    received = serializers.IntegerField(help_text="stored + dropped_resends + duplicates + rejected")
    stored = serializers.IntegerField()
    dropped_resends = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    rejected = serializers.IntegerField(help_text="Messages refused on their own and kept in the quarantine.")
    cleaned = serializers.IntegerField(help_text="Stored messages whose text lost characters the database refuses.")
    questions = serializers.IntegerField()
    replayed = serializers.BooleanField()
    rejections = UploadRejectionSerializer(many=True)


class UploadErrorItemSerializer(serializers.Serializer):
    index = serializers.IntegerField(allow_null=True)
    field = serializers.CharField()
    message = serializers.CharField()


class UploadInvalidSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="INVALID_BATCH")
    items = UploadErrorItemSerializer(many=True)


class UploadTooLargeSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="PAYLOAD_TOO_LARGE")
    limit_messages = serializers.IntegerField()
    limit_bytes = serializers.IntegerField()


class UploadRateLimitedSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="RATE_LIMITED")
    retry_after = serializers.FloatField(allow_null=True, help_text="Seconds; also in the Retry-After header.")


class UploadDeviceErrorSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="DEVICE_TOKEN_INVALID or DEVICE_ROLE_FORBIDDEN")
