from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_permission_codename
from django.utils.html import format_html, format_html_join
from django.utils.timezone import localtime

from config.admin import ReadOnlyAdmin
from delivery.models import Device, SenderRoom, SendJob, SendJobItem
from delivery.selectors import send_job_history
from delivery.services import (
    DeviceNotPaired,
    DeviceRevoked,
    SendJobStateConflict,
    UnknownResolution,
    device_pairing_code_issue,
    device_register,
    device_revoke,
    device_token_rotation_request,
    send_job_resolve_unknown,
    sender_room_set,
)

# --- edge devices ---


@admin.register(Device)
class DeviceAdmin(admin.ModelAdmin):
    """Staff register devices, issue pairing codes and revoke. Rows change only through the services, so the
    detail page is read-only and hashes are never shown."""

    list_display = (
        "name",
        "role",
        "status",
        "client_name",
        "created_at",
        "paired_at",
        "last_seen_at",
        "token_expires_at",
    )
    list_filter = ("role", "status")
    search_fields = ("name", "client_name")
    actions = ("issue_pairing_code", "request_token_rotation", "revoke")
    add_fields = ("name", "role")
    detail_fields = (
        "name",
        "role",
        "status",
        "client_name",
        "created_by",
        "created_at",
        "pairing_expires_at",
        "paired_at",
        "token_issued_at",
        "token_expires_at",
        "token_rotation_requested_at",
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

    @admin.action(description="토큰 교체 요청", permissions=["manage"])
    def request_token_rotation(self, request, queryset):
        requested, skipped = 0, []
        for device in queryset.order_by("pk"):
            try:
                device_token_rotation_request(device=device, actor=request.user)
            except DeviceNotPaired:
                skipped.append(device.name)
                continue
            requested += 1
        if requested:
            self.message_user(
                request,
                f"{requested}대의 기기에 토큰 교체를 요청했습니다. 기기가 다음 실행 때 새 토큰으로 바꾸고, "
                "바꾼 뒤에는 이전 토큰이 더 이상 쓰이지 않습니다.",
                messages.SUCCESS,
            )
        if skipped:
            self.message_user(
                request, f"토큰이 없는 기기(페어링 전·해지)는 건너뛰었습니다: {', '.join(skipped)}", messages.WARNING
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


# --- send jobs ---
# Jobs change only through `delivery.services.send_jobs`: the pages are read-only and the two actions call
# `send_job_resolve_unknown`. Room links are saved through `sender_room_set`, so staff choices win over reports.


class SendJobItemInline(admin.TabularInline):
    model = SendJobItem
    fields = ("index", "kind", "text", "name", "size", "sha256")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(SendJob)
class SendJobAdmin(ReadOnlyAdmin):
    """Jobs are the record of what was sent: read-only, never deleted; staff act through the actions."""

    list_display = (
        "id",
        "room",
        "state",
        "attempt",
        "created_at",
        "state_changed_at",
        "lease_holder",
        "created_by",
    )
    list_filter = ("state", ("created_at", admin.DateFieldListFilter), "attempt")
    list_select_related = ("room", "lease_holder")
    search_fields = ("=id", "room__name", "room__stable_key", "idempotency_key")
    date_hierarchy = "created_at"
    inlines = (SendJobItemInline,)
    actions = ("resolve_mark_sent", "resolve_requeue")
    fieldsets = (
        (None, {"fields": ("room", "question", "state", "reason", "attempt", "created_by", "idempotency_key")}),
        ("기기", {"fields": ("lease_holder", "lease_expires_at", "claimed_by")}),
        ("도착 확인", {"fields": ("counts_table",)}),
        ("시각", {"fields": ("created_at", "claimed_at", "state_changed_at", "finished_at")}),
        ("상태 이력", {"fields": ("state_history",)}),
    )
    readonly_fields = (
        "room",
        "question",
        "state",
        "reason",
        "attempt",
        "created_by",
        "idempotency_key",
        "lease_holder",
        "lease_expires_at",
        "claimed_by",
        "counts_table",
        "created_at",
        "claimed_at",
        "state_changed_at",
        "finished_at",
        "state_history",
    )

    def has_resolve_permission(self, request):
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.{get_permission_codename('change', opts)}")

    @admin.display(description="보낼 수 / 확인된 수 / 재발송 수")
    def counts_table(self, job):
        labels = (("texts", "글"), ("photos", "사진"), ("files", "파일"))
        rows = format_html_join(
            "",
            "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    label,
                    job.expected_counts[key],
                    job.observed_counts.get(key, "-"),
                    job.resent_counts.get(key, "-"),
                )
                for key, label in labels
            ),
        )
        return format_html(
            "<table><thead><tr><th></th><th>보낼 수</th><th>확인된 수</th><th>재발송 수</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )

    @admin.display(description="상태 이력")
    def state_history(self, job):
        events = send_job_history(job=job)
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{} → {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    localtime(event.created_at).strftime("%Y-%m-%d %H:%M:%S"),
                    event.data.get("from") or "-",
                    event.data.get("to") or event.action,
                    f"{event.get_actor_kind_display()} {event.actor_id}".strip(),
                    event.data.get("device") or "-",
                    _history_details(event.data),
                )
                for event in events
            ),
        )
        return format_html(
            "<table><thead><tr><th>시각</th><th>상태</th><th>주체</th><th>기기</th><th>내용</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )

    @admin.action(description="발송됨으로 확정", permissions=["resolve"])
    def resolve_mark_sent(self, request, queryset):
        self._resolve(request, queryset, UnknownResolution.MARK_SENT, "발송됨으로 확정")

    @admin.action(description="다시 대기열로", permissions=["resolve"])
    def resolve_requeue(self, request, queryset):
        self._resolve(request, queryset, UnknownResolution.REQUEUE, "다시 대기열에 넣음")

    def _resolve(self, request, queryset, resolution, done_label):
        resolved, skipped = 0, []
        for job in queryset.order_by("pk"):
            try:
                send_job_resolve_unknown(
                    job=job, resolution=resolution, actor=request.user, note="관리자 화면에서 처리"
                )
            except SendJobStateConflict:
                skipped.append(str(job.pk))
                continue
            resolved += 1
        if resolved:
            self.message_user(request, f"{resolved}건을 {done_label}했습니다.", messages.SUCCESS)
        if skipped:
            self.message_user(
                request,
                f"상태 불명이 아닌 작업은 건너뛰었습니다: #{', #'.join(skipped)}",
                messages.WARNING,
            )


_HISTORY_DETAIL_KEYS = (
    ("reported_outcome", "보고"),
    ("resolution", "조치"),
    ("note", "메모"),
    ("reason", "사유"),
    ("previous_reason", "이전 사유"),
    ("observed", "확인"),
    ("resent", "재발송"),
    ("attempt", "시도"),
    ("lease_expired_at", "리스 만료"),
)


def _history_details(data: dict) -> str:
    return " · ".join(f"{label}: {data[key]}" for key, label in _HISTORY_DETAIL_KEYS if data.get(key) not in (None, ""))


@admin.register(SenderRoom)
class SenderRoomAdmin(admin.ModelAdmin):
    """Which rooms each sender serves. Staff may add a link or switch one on or off; a staff choice is kept
    even when the device's later reports say otherwise."""

    list_display = ("device", "room", "source", "is_active", "last_reported_at", "updated_at")
    list_filter = ("is_active", "source", "device")
    list_select_related = ("device", "room")
    search_fields = ("room__name", "room__stable_key", "device__name")
    raw_id_fields = ("room",)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("device", "room", "is_active")
        return ("device", "room", "is_active", "source", "last_reported_at", "created_at", "updated_at")

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return ("device", "room", "source", "last_reported_at", "created_at", "updated_at")

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "device":
            kwargs["queryset"] = Device.objects.filter(role=Device.Role.SENDER).exclude(status=Device.Status.REVOKED)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_delete_permission(self, request, obj=None):
        # Switch a link off instead: a deleted reported link would come back with the next heartbeat.
        return False

    def save_model(self, request, obj, form, change):
        link = sender_room_set(device=obj.device, room=obj.room, is_active=obj.is_active, actor=request.user)
        obj.pk = link.pk
        obj.refresh_from_db()
