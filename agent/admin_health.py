"""The admin health page: the same checks as `GET /api/v1/health`, with every detail, for staff only."""

from django.contrib import admin
from django.template.response import TemplateResponse
from django.utils import timezone

from agent.api.health import health_labelled, health_report


def health_view(request):
    report = health_report()
    context = {
        **admin.site.each_context(request),
        "title": "서버 상태",
        "overall_ok": report["status"] == "ok",
        "rows": health_labelled(report),
        "checked_at": timezone.localtime(),
    }
    return TemplateResponse(request, "admin/health.html", context)
