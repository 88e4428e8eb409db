"""API plumbing shared by every app: one JSON error body for everything under /api/.

Every 4xx/5xx under `/api/` is `{"error": "<CODE>", ...}`: DRF's own errors through `exception_handler`, and the
errors Django answers before or after a view (unknown paths, unhandled exceptions, bad requests) through the
`handler*` views below. Other paths (the admin) keep Django's normal pages. The OpenAPI schema documents the
body as every operation's `default` response.
"""

import base64
import binascii

from django.http import JsonResponse
from django.views import defaults
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers
from rest_framework.exceptions import ParseError, Throttled
from rest_framework.parsers import JSONParser
from rest_framework.views import exception_handler as drf_exception_handler

API_PREFIX = "/api/"
_HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}

# Every `error` code an endpoint answers: the API's own, then DRF's defaults upper-cased by `exception_handler`.
# A test checks that each code written in the apps' source is listed, so the schema's enum stays complete.
ERROR_CODES = (
    "BAD_REQUEST",
    "DEVICE_ROLE_FORBIDDEN",
    "DEVICE_TOKEN_INVALID",
    "HEALTH_TOKEN_INVALID",
    "IDEMPOTENCY_KEY_REQUIRED",
    "IDEMPOTENCY_KEY_REUSED",
    "INTERNAL_ERROR",
    "INVALID_BATCH",
    "INVALID_SEND_REQUEST",
    "ITEM_NOT_FOUND",
    "LEASE_NOT_HELD",
    "NOT_FOUND",
    "PAIRING_CODE_INVALID",
    "PAYLOAD_TOO_LARGE",
    "PERMISSION_DENIED",
    "RATE_LIMITED",
    "ROOM_NOT_FOUND",
    "SEND_JOB_ERROR",
    "SEND_JOB_NOT_FOUND",
    "SEND_JOB_STATE_CONFLICT",
    "SEND_STATE_UNKNOWN",
    # DRF's own exceptions
    "AUTHENTICATION_FAILED",
    "ERROR",
    "INVALID",
    "METHOD_NOT_ALLOWED",
    "NOT_ACCEPTABLE",
    "NOT_AUTHENTICATED",
    "PARSE_ERROR",
    "UNSUPPORTED_MEDIA_TYPE",
)

ERROR_BODY_SCHEMA = {
    "type": "object",
    "description": "Every error under /api/ carries a machine-readable `error` code; some add details.",
    "properties": {
        "error": {"type": "string", "enum": list(ERROR_CODES), "description": "The machine-readable error code."},
        "detail": {"description": "A human-readable explanation or the invalid fields, when there is one."},
    },
    "required": ["error"],
}


def exception_handler(exc, context):
    """DRF errors keep their status; the body always carries a machine-readable `error` code."""
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, Throttled):
        response.data = {"error": "RATE_LIMITED", "retry_after": exc.wait}
        return response
    detail = response.data
    if isinstance(detail, dict) and "error" in detail:
        return response
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        detail = detail["detail"]  # DRF's {"detail": "..."} for errors that are not field validation
    code = getattr(exc, "default_code", "error")
    response.data = {"error": str(code).upper(), "detail": detail}
    return response


class SafeJSONParser(JSONParser):
    """DRF's JSON parser, with nesting too deep for Python's decoder answered as a parse error instead of a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError("JSON parse error - nested too deeply") from exc


class JSONStringField(serializers.CharField):
    """A request string that must be a JSON string: DRF's CharField also takes numbers, which the schema (and the
    edge programs) never send, so a number is refused like any other wrong type."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class Base64Field(JSONStringField):
    """Bytes sent as standard base64 (padded); the validated value is the decoded bytes. The schema carries the
    pattern so a client knows before sending; the server decodes instead of matching it (the regex takes seconds
    on a 10 MB photo, the decoder milliseconds)."""

    pattern = "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise serializers.ValidationError("Not valid base64.") from exc


class JSONStringFieldSchema(OpenApiSerializerFieldExtension):
    """The schema of a JSON string field says what it refuses besides its length: NUL, and (when it trims and may
    not be blank) a value of whitespace only."""

    target_class = JSONStringField
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if direction == "request" and isinstance(self.target, Base64Field):
            schema.update(pattern=Base64Field.pattern, format="byte")
        elif direction == "request":
            allowed = "[^\\x00]"
            if self.target.trim_whitespace and not self.target.allow_blank:
                schema["pattern"] = f"^{allowed}*[^\\s\\x00]{allowed}*$"
            else:
                schema["pattern"] = f"^{allowed}*$"
        return schema


class JSONIntegerField(serializers.IntegerField):
    """A request integer that must be a JSON integer: DRF's IntegerField also takes "5" and true. A float with no
    fraction (1.0, 1e16) is an integer in JSON Schema and is taken as one."""

    def to_internal_value(self, data):
        if isinstance(data, float) and data.is_integer():
            data = int(data)
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


def _is_api(request) -> bool:
    return request.path.startswith(API_PREFIX)


def _error(code: str, status: int) -> JsonResponse:
    return JsonResponse({"error": code}, status=status)


def bad_request(request, exception, template_name=defaults.ERROR_400_TEMPLATE_NAME):
    if _is_api(request):
        return _error("BAD_REQUEST", 400)
    return defaults.bad_request(request, exception, template_name)


def permission_denied(request, exception, template_name=defaults.ERROR_403_TEMPLATE_NAME):
    if _is_api(request):
        return _error("PERMISSION_DENIED", 403)
    return defaults.permission_denied(request, exception, template_name)


def not_found(request, exception, template_name=defaults.ERROR_404_TEMPLATE_NAME):
    if _is_api(request):
        return _error("NOT_FOUND", 404)
    return defaults.page_not_found(request, exception, template_name)


def server_error(request, template_name=defaults.ERROR_500_TEMPLATE_NAME):
    # Django has logged the exception already; the body names no exception, path or host.
    if _is_api(request):
        return _error("INTERNAL_ERROR", 500)
    return defaults.server_error(request, template_name)


def schema_document_error_body(result, generator, request, public):
    """drf-spectacular postprocessing hook: every operation's `default` response is the error body."""
    result.setdefault("components", {}).setdefault("schemas", {})["ErrorBody"] = ERROR_BODY_SCHEMA
    reference = {"$ref": "#/components/schemas/ErrorBody"}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in _HTTP_METHODS:
                continue
            operation.setdefault("responses", {}).setdefault(
                "default",
                {
                    "description": "Any other error: the JSON error body.",
                    "content": {"application/json": {"schema": reference}},
                },
            )
    return result
