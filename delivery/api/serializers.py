"""Serializers shared by the device endpoints (request and response shapes in docs/edge-api.md)."""

from rest_framework import serializers

from config.api import JSONStringField


class DeviceErrorSerializer(serializers.Serializer):
    """Every error body carries a machine-readable code."""

    error = serializers.CharField()


class RateLimitedErrorSerializer(serializers.Serializer):
    """429: `{"error": "RATE_LIMITED", "retry_after": seconds}`, with the same seconds in `Retry-After`."""

    error = serializers.CharField()
    retry_after = serializers.IntegerField()


class DeviceRoomSerializer(serializers.Serializer):
    """A room as a device's local client holds it."""

    room_key = JSONStringField(max_length=200)
    room_name = JSONStringField(max_length=300)
