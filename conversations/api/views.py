import json

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from pydantic import ValidationError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations.api.serializers import (
    UploadBatchInput,
    UploadErrorSerializer,
    UploadMessage,
    UploadOutputSerializer,
)
from conversations.api.throttles import DeviceUploadRateThrottle
from conversations.services import IncomingMessage, upload_batch_ingest
from delivery.api.authentication import DeviceTokenAuthentication
from delivery.api.permissions import IsUploaderDevice


class UploadApi(APIView):
    authentication_classes = [DeviceTokenAuthentication]
    permission_classes = [IsUploaderDevice]
    throttle_classes = [DeviceUploadRateThrottle]

    @extend_schema(
        operation_id="uploads_create",
        summary="Upload a batch of chat messages",
        request=UploadBatchInput,
        responses={
            200: UploadOutputSerializer,
            413: OpenApiResponse(UploadErrorSerializer, description="Too many messages or bytes."),
            422: OpenApiResponse(UploadErrorSerializer, description="Malformed body or invalid items; nothing stored."),
            429: OpenApiResponse(UploadErrorSerializer, description="Over the device's rate; see Retry-After."),
        },
    )
    def post(self, request):
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
        if declared > settings.UPLOAD_MAX_BYTES or len(request.body) > settings.UPLOAD_MAX_BYTES:
            return _too_large()
        try:
            data = json.loads(request.body)
        except (ValueError, UnicodeDecodeError) as exc:
            return _invalid([{"index": None, "field": "body", "message": f"Not valid JSON: {exc}"}])
        messages = data.get("messages") if isinstance(data, dict) else None
        if isinstance(messages, list) and len(messages) > settings.UPLOAD_MAX_MESSAGES:
            return _too_large()
        try:
            batch = UploadBatchInput.model_validate(data)
        except ValidationError as exc:
            return _invalid(_error_items(exc))
        result = upload_batch_ingest(
            device=request.user,
            batch_id=batch.batch_id,
            messages=[_incoming(message) for message in batch.messages],
        )
        return Response(UploadOutputSerializer(result.as_dict()).data, status=status.HTTP_200_OK)


def _incoming(message: UploadMessage) -> IncomingMessage:
    return IncomingMessage(
        room_key=message.room_key,
        room_name=message.room_name,
        sender_name=message.sender_name,
        sent_by_me=message.sent_by_me,
        text=message.text,
        sent_at=message.sent_at,
        unread_count=message.unread_count,
        client_message_id=message.client_message_id or None,
        photo_count=message.attachments.photos,
        file_count=message.attachments.files,
    )


def _too_large() -> Response:
    return Response(
        {
            "error": "PAYLOAD_TOO_LARGE",
            "limit_messages": settings.UPLOAD_MAX_MESSAGES,
            "limit_bytes": settings.UPLOAD_MAX_BYTES,
        },
        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    )


def _invalid(items: list[dict]) -> Response:
    return Response({"error": "INVALID_BATCH", "items": items}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)


def _error_items(exc: ValidationError) -> list[dict]:
    """pydantic's errors → one `{index, field, message}` per problem, `index` null for batch-level ones."""
    items = []
    for error in exc.errors(include_url=False, include_input=False):
        location = error["loc"]
        if len(location) >= 3 and location[0] == "messages" and isinstance(location[1], int):
            items.append({"index": location[1], "field": ".".join(map(str, location[2:])), "message": error["msg"]})
        else:
            items.append({"index": None, "field": ".".join(map(str, location)) or "body", "message": error["msg"]})
    return items
