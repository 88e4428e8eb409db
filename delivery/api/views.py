"""Device endpoints: pairing (the only unauthenticated one), heartbeat and the device's own token."""

from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from config.api import JSONStringField
from delivery.api.authentication import DeviceTokenAuthentication
from delivery.api.permissions import IsDevice
from delivery.api.serializers import DeviceErrorSerializer, DeviceRoomSerializer, RateLimitedErrorSerializer
from delivery.models import Device
from delivery.selectors import device_token_rotation_due
from delivery.services import (
    PairingCodeInvalid,
    PairingRateLimited,
    device_heartbeat,
    device_pair_attempt,
    device_token_rotate,
)

PAIRING_CODE_INVALID = "PAIRING_CODE_INVALID"


class DevicePairApi(APIView):
    """Redeem a one-time pairing code for a device token.

    Every failure, a malformed body included, is the same 400 so the code space cannot be probed; past the failure
    limits every request is a 429 that looks at no code. No response of this endpoint may be cached: the success
    body holds the token.
    """

    authentication_classes = []
    permission_classes = [AllowAny]

    class InputSerializer(serializers.Serializer):
        code = JSONStringField(max_length=32)
        name = JSONStringField(max_length=100)

        class Meta:
            ref_name = "DevicePairInput"

    class OutputSerializer(serializers.Serializer):
        device_id = serializers.IntegerField(source="device.pk")
        token = serializers.CharField()
        role = serializers.ChoiceField(source="device.role", choices=Device.Role.choices)
        name = serializers.CharField(source="device.name")

        class Meta:
            ref_name = "DevicePairOutput"

    @extend_schema(
        operation_id="devices_pair",
        summary="Pair a device with a one-time code",
        description=(
            "Redeems the 6-character code issued in the admin. The token is returned only here, once. "
            "Any failure (unknown, expired, used, malformed) is the same 400. Past "
            "`PAIRING_FAILURES_PER_ADDRESS` failures from one client address (an IPv6 /64), or "
            "`PAIRING_FAILURES_GLOBAL` in total, within `PAIRING_FAILURE_WINDOW_MINUTES`, every request is a 429 "
            "with `Retry-After` and its code is not looked at. Responses carry `Cache-Control: no-store`."
        ),
        auth=[],
        request=InputSerializer,
        responses={
            201: OutputSerializer,
            400: OpenApiResponse(DeviceErrorSerializer, description='`{"error": "PAIRING_CODE_INVALID"}`'),
            429: OpenApiResponse(
                RateLimitedErrorSerializer, description='`{"error": "RATE_LIMITED", "retry_after"}` + `Retry-After`'
            ),
        },
    )
    def post(self, request):
        code = client_name = None
        try:
            serializer = self.InputSerializer(data=request.data)
        except (exceptions.ParseError, exceptions.UnsupportedMediaType):
            serializer = None
        if serializer is not None and serializer.is_valid():
            code, client_name = serializer.validated_data["code"], serializer.validated_data["name"]
        try:
            device, token = device_pair_attempt(
                code=code, client_name=client_name, client_address=_PEER_ADDRESS.get_ident(request)
            )
        except PairingRateLimited as exc:
            raise exceptions.Throttled(wait=exc.retry_after) from exc
        except PairingCodeInvalid:
            return _pairing_refused()
        return Response(self.OutputSerializer({"device": device, "token": token}).data, status=status.HTTP_201_CREATED)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Cache-Control"] = "no-store"
        return response


# The client address as DRF's throttles see it: the connection's peer, or the configured proxies' forwarded
# address (`API_NUM_PROXIES`).
_PEER_ADDRESS = BaseThrottle()


def _pairing_refused() -> Response:
    return Response({"error": PAIRING_CODE_INVALID}, status=status.HTTP_400_BAD_REQUEST)


class DeviceHeartbeatApi(APIView):
    """Any active device says it is alive; a sender may list the rooms its local client holds."""

    authentication_classes = [DeviceTokenAuthentication]
    permission_classes = [IsDevice]

    class InputSerializer(serializers.Serializer):
        rooms = DeviceRoomSerializer(many=True, required=False)

        class Meta:
            ref_name = "DeviceHeartbeatInput"

    class OutputSerializer(serializers.Serializer):
        ok = serializers.BooleanField()
        server_time = serializers.DateTimeField()

        class Meta:
            ref_name = "DeviceHeartbeatOutput"

    @extend_schema(
        operation_id="devices_heartbeat",
        summary="Device heartbeat",
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(DeviceErrorSerializer, description="Malformed body."),
            401: OpenApiResponse(DeviceErrorSerializer, description='`{"error": "DEVICE_TOKEN_INVALID"}`'),
        },
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        device_heartbeat(device=request.user, rooms=serializer.validated_data.get("rooms", []))
        return Response(self.OutputSerializer({"ok": True, "server_time": timezone.now()}).data)


_TOKEN_ERRORS = {401: OpenApiResponse(DeviceErrorSerializer, description='`{"error": "DEVICE_TOKEN_INVALID"}`')}


class DeviceTokenApi(APIView):
    """The calling device's token: when it expires and whether the device should rotate it now."""

    authentication_classes = [DeviceTokenAuthentication]
    permission_classes = [IsDevice]

    class OutputSerializer(serializers.Serializer):
        device_id = serializers.IntegerField(source="pk")
        role = serializers.ChoiceField(choices=Device.Role.choices)
        expires_at = serializers.DateTimeField(source="token_expires_at", allow_null=True)
        rotation_due = serializers.BooleanField()

        class Meta:
            ref_name = "DeviceTokenOutput"

    @extend_schema(
        operation_id="devices_token",
        summary="The calling device's token status",
        description=(
            "`rotation_due` is true in the last third of the token's life (`DEVICE_TOKEN_TTL_DAYS`) or when staff "
            "asked for a rotation; the device then calls `/devices/token/rotate`."
        ),
        responses={200: OutputSerializer, **_TOKEN_ERRORS},
    )
    def get(self, request):
        device = request.user
        device.rotation_due = device_token_rotation_due(device=device)
        return Response(self.OutputSerializer(device).data)


class DeviceTokenRotateApi(APIView):
    """Issue the calling device a new token; it replaces the current one at its first use."""

    authentication_classes = [DeviceTokenAuthentication]
    permission_classes = [IsDevice]

    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField()

        class Meta:
            ref_name = "DeviceTokenRotateOutput"

    @extend_schema(
        operation_id="devices_token_rotate",
        summary="Rotate the calling device's token",
        description=(
            "Returns a new token, once. The current token keeps working until the new one is first used; from "
            "then on only the new one works, with a fresh expiry. Rotating again before that replaces the new "
            "one. Responses carry `Cache-Control: no-store`."
        ),
        request=None,
        responses={200: OutputSerializer, **_TOKEN_ERRORS},
    )
    def post(self, request):
        token = device_token_rotate(device=request.user)
        return Response(self.OutputSerializer({"token": token}).data)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Cache-Control"] = "no-store"
        return response
