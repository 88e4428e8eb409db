"""API plumbing shared by every app: one error body shape for the edge clients."""

from rest_framework.exceptions import Throttled
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    """DRF errors keep their status; the body always carries a machine-readable `error` code."""
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, Throttled):
        response.data = {"error": "RATE_LIMITED", "retry_after": exc.wait}
        return response
    detail = response.data
    code = getattr(exc, "default_code", "error")
    if isinstance(detail, dict) and "error" in detail:
        return response
    response.data = {"error": str(code).upper(), "detail": detail}
    return response
