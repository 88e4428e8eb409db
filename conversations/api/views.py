import json

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from pydantic import TypeAdapter, ValidationError
from rest_framework import permissions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations.api.serializers import (
    UploadBatchEnvelope,
    UploadBatchInput,
    UploadDeviceErrorSerializer,
    UploadInvalidSerializer,
    UploadMessage,
    UploadOutputSerializer,
    UploadRateLimitedSerializer,
    UploadTooLargeSerializer,
)
from conversations.api.throttles import DeviceUploadRateThrottle
from conversations.models import QuarantinedMessage
from conversations.services import (
    IncomingMessage,
    RefusedMessage,
    UploadBatchInvalid,
    upload_batch_ingest,
    uploaded_message_prepare,
)

Reason = QuarantinedMessage.Reason
_MESSAGE_LIST = TypeAdapter(list[UploadMessage])


class UploadRefused(permissions.BasePermission):
    """Refuses every request: who may upload is delivery's to say (device tokens, the uploader role)."""

    def has_permission(self, request, view):
        return False


class UploadApi(APIView):
    """The upload of an uploader device (`request.user` is the device).

    Devices and their tokens belong to delivery, above conversations, so the URL configuration mounts this view
    with delivery's authentication and uploader permission (`config/urls.py`). Mounted without them it accepts
    nothing.
    """

    authentication_classes = []
    permission_classes = [UploadRefused]
    throttle_classes = [DeviceUploadRateThrottle]

    @extend_schema(
        operation_id="uploads_create",
        summary="Upload a batch of chat messages",
        description=(
            "A batch whose envelope (`batch_id`, a `messages` list) is valid is accepted: each message that "
            "cannot be stored is refused on its own and listed in `rejections` with its index and reason; the "
            "others are stored."
        ),
        request=UploadBatchInput,
        responses={
            200: OpenApiResponse(UploadOutputSerializer, description="Stored; refused messages in `rejections`."),
            401: OpenApiResponse(UploadDeviceErrorSerializer, description="Missing, unknown or revoked token."),
            403: OpenApiResponse(UploadDeviceErrorSerializer, description="A token of another role."),
            413: OpenApiResponse(UploadTooLargeSerializer, description="Too many messages or bytes."),
            422: OpenApiResponse(UploadInvalidSerializer, description="The envelope is invalid; nothing stored."),
            429: OpenApiResponse(UploadRateLimitedSerializer, description="Over the device's rate; see Retry-After."),
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
        except RecursionError:
            return _invalid([{"index": None, "field": "body", "message": "Not valid JSON: nested too deeply"}])
        messages = data.get("messages") if isinstance(data, dict) else None
        if isinstance(messages, list) and len(messages) > settings.UPLOAD_MAX_MESSAGES:
            return _too_large()
        try:
            envelope = UploadBatchEnvelope.model_validate(data)
        except ValidationError as exc:
            return _invalid(_envelope_error_items(exc))
        incoming, refused = _messages_validate(envelope.messages)
        try:
            result = upload_batch_ingest(
                device=request.user, batch_id=envelope.batch_id, messages=incoming, refused=refused
            )
        except UploadBatchInvalid as exc:
            return _invalid([{"index": None, "field": exc.field, "message": exc.message}])
        return Response(UploadOutputSerializer(result.as_dict()).data, status=status.HTTP_200_OK)


def _messages_validate(items: list) -> tuple[list[IncomingMessage], list[RefusedMessage]]:
    """Each message on its own: one that does not have the contract's shape is refused, the others go on.

    Nearly every batch is valid as a whole, and one validator call for the whole list costs a third of one call per
    message; only a batch with a problem is taken apart message by message.
    """
    try:
        messages = _MESSAGE_LIST.validate_python(items)
    except ValidationError:
        return _messages_validate_one_by_one(items)
    incoming = [
        _incoming(index, message, raw=item, cleaning={})
        for index, (message, item) in enumerate(zip(messages, items, strict=True))
    ]
    return incoming, []


def _messages_validate_one_by_one(items: list) -> tuple[list[IncomingMessage], list[RefusedMessage]]:
    incoming, refused = [], []
    for index, item in enumerate(items):
        fields, cleaning, identifier_errors = uploaded_message_prepare(item)
        if identifier_errors:
            refused.append(RefusedMessage(index, Reason.UNSTORABLE_IDENTIFIER, identifier_errors, item))
            continue
        try:
            message = UploadMessage.model_validate(fields)
        except ValidationError as exc:
            refused.append(RefusedMessage(index, Reason.INVALID, _field_errors(exc), item))
            continue
        incoming.append(_incoming(index, message, raw=item, cleaning=cleaning))
    return incoming, refused


def _incoming(index: int, message: UploadMessage, *, raw, cleaning: dict) -> IncomingMessage:
    return IncomingMessage(
        index=index,
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
        raw=raw,
        cleaning=cleaning,
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


def _field_errors(exc: ValidationError) -> list[dict]:
    """pydantic's errors of one message → `{field, message}`, the field dotted ('' for the message itself)."""
    return [
        {"field": ".".join(map(str, error["loc"])), "message": error["msg"]}
        for error in exc.errors(include_url=False, include_input=False, include_context=False)
    ]


def _envelope_error_items(exc: ValidationError) -> list[dict]:
    return [{"index": None, **item, "field": item["field"] or "body"} for item in _field_errors(exc)]
