"""API plumbing shared by every app: one error body shape for the edge clients."""

from rest_framework.views import exception_handler as drf_exception_handler


class ApiError(Exception):
    """A domain refusal an API view turns into `{"error": code, ...}` with an HTTP status."""

    def __init__(self, code: str, status: int, **details):
        super().__init__(code)
        self.code = code
        self.status = status
        self.details = details


def exception_handler(exc, context):
    """DRF errors keep their status; the body always carries a machine-readable `error` code."""
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data
    code = getattr(exc, "default_code", "error")
    if isinstance(detail, dict) and "error" in detail:
        return response
    response.data = {"error": str(code).upper(), "detail": detail}
    return response
