from django.contrib import admin, messages

import monitoring.admin_schedules  # noqa: F401  (django-celery-beat's pages with Korean labels)
from config.admin import ReadOnlyAdmin
from monitoring.models import Alert, AuditEvent, LivenessMarker
from monitoring.services import alert_acknowledge


@admin.register(Alert)
class AlertAdmin(ReadOnlyAdmin):
    list_display = ("raised_at", "kind", "status", "message", "notified_at", "notify_attempts", "closed_at")
    list_filter = ("status", "kind")
    search_fields = ("message", "key")
    actions = ["acknowledge"]

    @admin.action(description="확인 처리")
    def acknowledge(self, request, queryset):
        done = sum(alert_acknowledge(alert=alert, actor=request.user) for alert in queryset)
        self.message_user(request, f"{done}건을 확인 처리했습니다.", messages.SUCCESS)

    def has_change_permission(self, request, obj=None):
        # The acknowledge action needs it; every field stays read-only.
        return request.user.is_staff

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "actor_kind", "actor_id", "action", "target_type", "target_id")
    list_filter = ("actor_kind", "action", "target_type")
    search_fields = ("target_id", "actor_id", "action")


@admin.register(LivenessMarker)
class LivenessMarkerAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "question", "kind", "outcome")
    list_filter = ("kind", "outcome")
