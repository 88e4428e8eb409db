"""`GET /api/v1/health`: status words for anyone, the checks' details with the health token (`HEALTH_TOKEN`).

Staff see the same report, with details, on the admin health page (`agent.admin_health`).
"""

import hmac

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import authentication, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from agent.api.health import HEALTH_STATUSES, health_report, health_summary

HEALTH_TOKEN_INVALID = "HEALTH_TOKEN_INVALID"


class HealthApi(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=HEALTH_STATUSES)
        checks = serializers.DictField(child=serializers.ChoiceField(choices=HEALTH_STATUSES))
        details = serializers.DictField(
            child=serializers.DictField(), required=False, help_text="With the health token only."
        )
        reasons = serializers.ListField(
            child=serializers.CharField(), required=False, help_text="With the health token only."
        )

        class Meta:
            ref_name = "HealthOutput"

    class ErrorSerializer(serializers.Serializer):
        error = serializers.CharField()

        class Meta:
            ref_name = "HealthError"

    @extend_schema(
        operation_id="health",
        summary="Health of the database, Redis, the FAQ index and the knowledge hub",
        description=(
            "`ok` or `degraded` per component and overall (503 when degraded). With `Authorization: Bearer "
            "<HEALTH_TOKEN>` the answer adds each check's details and the reasons; a token that does not match "
            "is 401 `HEALTH_TOKEN_INVALID`."
        ),
        auth=[],
        responses={
            200: OutputSerializer,
            503: OutputSerializer,
            401: OpenApiResponse(ErrorSerializer, description='`{"error": "HEALTH_TOKEN_INVALID"}`'),
        },
    )
    def get(self, request):
        presented = _presented_token(request)
        if presented is not None and not _health_token_matches(presented):
            return Response({"error": HEALTH_TOKEN_INVALID}, status=status.HTTP_401_UNAUTHORIZED)
        report = health_report()
        body = health_summary(report)
        if presented is not None:
            body.update(details=report["checks"], reasons=report["reasons"])
        code = status.HTTP_200_OK if report["status"] == "ok" else status.HTTP_503_SERVICE_UNAVAILABLE
        return Response(self.OutputSerializer(body).data, status=code)


def _presented_token(request) -> str | None:
    """The bearer token the caller sent; "" for any other Authorization value; None without the header."""
    header = authentication.get_authorization_header(request)
    if not header:
        return None
    parts = header.split()
    if len(parts) != 2 or parts[0].lower() != b"bearer":
        return ""
    return parts[1].decode("latin-1")


def _health_token_matches(presented: str) -> bool:
    expected = settings.HEALTH_TOKEN
    # Constant-time: the comparison must not tell how much of a guess was right.
    return bool(expected) and hmac.compare_digest(presented.encode("latin-1"), expected.encode())
