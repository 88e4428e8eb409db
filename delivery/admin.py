from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_permission_codename

from delivery.models import Device
from delivery.services import DeviceRevoked, device_pairing_code_issue, device_register, device_revoke

# --- edge devices ---


@admin.register(Device)
class DeviceAdmin(admin.ModelAdmin):
    """Staff register devices, issue pairing codes and revoke. Rows change only through the services, so the
    detail page is read-only and hashes are never shown."""

    list_display = ("name", "role", "status", "client_name", "created_at", "paired_at", "last_seen_at")
    list_filter = ("role", "status")
    search_fields = ("name", "client_name")
    actions = ("issue_pairing_code", "revoke")
    add_fields = ("name", "role")
    detail_fields = (
        "name",
        "role",
        "status",
        "client_name",
        "created_by",
        "created_at",
        "pairing_expires_at",
        "pairing_attempts",
        "paired_at",
        "last_seen_at",
        "revoked_at",
    )

    def get_fields(self, request, obj=None):
        return self.add_fields if obj is None else self.detail_fields

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else self.detail_fields

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        # A device is referenced by audit rows and send jobs: revoke it instead.
        return False

    def has_manage_permission(self, request):
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.{get_permission_codename('change', opts)}")

    def save_model(self, request, obj, form, change):
        registered = device_register(name=form.cleaned_data["name"], role=form.cleaned_data["role"], actor=request.user)
        obj.pk = registered.pk
        obj.refresh_from_db()

    @admin.action(description="페어링 코드 발급", permissions=["manage"])
    def issue_pairing_code(self, request, queryset):
        ttl_minutes = settings.PAIRING_CODE_TTL_MINUTES
        for device in queryset.order_by("pk"):
            try:
                code = device_pairing_code_issue(device=device, actor=request.user)
            except DeviceRevoked:
                self.message_user(request, f"{device.name}: 해지된 기기에는 코드를 발급할 수 없습니다.", messages.ERROR)
                continue
            self.message_user(
                request,
                f"{device.name}: 페어링 코드 {code} — {ttl_minutes}분 안에 기기에 입력하세요. "
                "이 코드는 다시 표시되지 않습니다.",
                messages.WARNING,
            )

    @admin.action(description="해지", permissions=["manage"])
    def revoke(self, request, queryset):
        revoked = 0
        for device in queryset.order_by("pk"):
            try:
                device_revoke(device=device, actor=request.user)
            except DeviceRevoked:
                continue
            revoked += 1
        self.message_user(request, f"{revoked}대의 기기를 해지했습니다.", messages.SUCCESS)
