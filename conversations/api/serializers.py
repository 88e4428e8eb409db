from django.utils.dateparse import parse_datetime
from rest_framework import serializers


class AwareDateTimeField(serializers.DateTimeField):
    """A time without an offset is ambiguous across PCs in different settings: refuse it rather than guess."""

    def to_internal_value(self, value):
        if isinstance(value, str):
            try:
                parsed = parse_datetime(value)
            except ValueError:
                parsed = None
            if parsed is not None and parsed.tzinfo is None:
                raise serializers.ValidationError("sent_at needs a UTC offset, e.g. 2026-11-30T10:15:02+09:00.")
        return super().to_internal_value(value)


class AttachmentsSerializer(serializers.Serializer):
    photos = serializers.IntegerField(min_value=0, max_value=1000, default=0)
    files = serializers.IntegerField(min_value=0, max_value=1000, default=0)


class UploadMessageSerializer(serializers.Serializer):
    room_key = serializers.CharField(max_length=200, help_text="The room's stable key from the client DB.")
    room_name = serializers.CharField(max_length=300, help_text="The room name as shown, e.g. `(1234) 대한물산`.")
    sender_name = serializers.CharField(max_length=200, allow_blank=True)
    sent_by_me = serializers.BooleanField()
    text = serializers.CharField(max_length=20000, allow_blank=True, trim_whitespace=False)
    sent_at = AwareDateTimeField(help_text="ISO 8601 with an offset.")
    unread_count = serializers.IntegerField(min_value=0, max_value=100000)
    client_message_id = serializers.CharField(max_length=100, required=False, allow_null=True, default=None)
    attachments = AttachmentsSerializer(required=False)


class UploadInputSerializer(serializers.Serializer):
    batch_id = serializers.CharField(max_length=100)
    messages = UploadMessageSerializer(many=True, allow_empty=True)


class UploadOutputSerializer(serializers.Serializer):
    batch_id = serializers.CharField()
    received = serializers.IntegerField()
    stored = serializers.IntegerField()
    dropped_resends = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    questions = serializers.IntegerField()
    replayed = serializers.BooleanField()


class UploadErrorItemSerializer(serializers.Serializer):
    index = serializers.IntegerField(allow_null=True)
    field = serializers.CharField()
    message = serializers.CharField()


class UploadErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    items = UploadErrorItemSerializer(many=True, required=False)
