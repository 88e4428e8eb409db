from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations.api.serializers import (
    UploadErrorSerializer,
    UploadInputSerializer,
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
        request=UploadInputSerializer,
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
            data = request.data
        except ParseError as exc:
            return _invalid([{"index": None, "field": "body", "message": str(exc.detail)}])
        if not isinstance(data, dict):
            return _invalid([{"index": None, "field": "body", "message": "Expected a JSON object."}])
        if isinstance(data.get("messages"), list) and len(data["messages"]) > settings.UPLOAD_MAX_MESSAGES:
            return _too_large()

        serializer = UploadInputSerializer(data=data)
        if not serializer.is_valid():
            return _invalid(_flatten_errors(serializer.errors))
        payload = serializer.validated_data
        result = upload_batch_ingest(
            device=request.user,
            batch_id=payload["batch_id"],
            messages=[_incoming(item) for item in payload["messages"]],
        )
        return Response(UploadOutputSerializer(result.as_dict()).data, status=status.HTTP_200_OK)


def _incoming(item: dict) -> IncomingMessage:
    attachments = item.get("attachments") or {}
    return IncomingMessage(
        room_key=item["room_key"],
        room_name=item["room_name"],
        sender_name=item["sender_name"],
        sent_by_me=item["sent_by_me"],
        text=item["text"],
        sent_at=item["sent_at"],
        unread_count=item["unread_count"],
        client_message_id=item.get("client_message_id") or None,
        photo_count=attachments.get("photos", 0),
        file_count=attachments.get("files", 0),
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


def _flatten_errors(errors: dict) -> list[dict]:
    """DRF's nested error dict → one `{index, field, message}` per problem, `index` null for batch-level ones."""
    items = []
    for field, detail in errors.items():
        if field == "messages" and isinstance(detail, (list, dict)):
            per_item = detail.items() if isinstance(detail, dict) else enumerate(detail)
            for index, item_errors in per_item:
                if not isinstance(item_errors, dict):
                    items.extend({"index": None, "field": field, "message": str(m)} for m in _as_list(item_errors))
                    continue
                for item_field, messages in (item_errors or {}).items():
                    items.extend(
                        {"index": index, "field": item_field, "message": str(message)} for message in _as_list(messages)
                    )
        else:
            items.extend({"index": None, "field": field, "message": str(message)} for message in _as_list(detail))
    return items


def _as_list(detail) -> list:
    if isinstance(detail, dict):
        return [f"{key}: {value}" for key, values in detail.items() for value in _as_list(values)]
    return detail if isinstance(detail, list) else [detail]
