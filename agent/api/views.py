"""`GET /api/v1/health` (no authentication; reveals counts and reasons, no data)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from agent.api.health import health_report


class HealthApi(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=["ok", "degraded"])
        checks = serializers.DictField(child=serializers.DictField())
        reasons = serializers.ListField(child=serializers.CharField())

    @extend_schema(
        operation_id="health",
        summary="Health of the database, Redis, the FAQ index and the knowledge hub",
        responses={200: OutputSerializer, 503: OutputSerializer},
    )
    def get(self, request):
        report = health_report()
        code = status.HTTP_200_OK if report["status"] == "ok" else status.HTTP_503_SERVICE_UNAVAILABLE
        return Response(self.OutputSerializer(report).data, status=code)
