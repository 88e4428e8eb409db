import json

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from config.admin import ReadOnlyAdmin
from conversations.models import Message, QuarantinedMessage, Question, Room, UploadBatch
from conversations.room_services import rooms_re_resolve
from conversations.services import room_kind_set
from conversations.storable import storable_json
from vendors.resolution import REASON_LABELS


class ResolutionReasonFilter(admin.SimpleListFilter):
    title = "매칭 사유"
    parameter_name = "resolution_reason"

    def lookups(self, request, model_admin):
        return list(REASON_LABELS.items())

    def queryset(self, request, queryset):
        return queryset if self.value() is None else queryset.filter(resolution_reason=self.value())


@admin.register(Room)
class RoomAdmin(ReadOnlyAdmin):
    list_display = ("name", "kind", "resolution_status", "vendor", "reason_display", "resend_dropped_count")
    list_filter = ("resolution_status", "kind", ResolutionReasonFilter)
    search_fields = ("name", "stable_key", "vendor__name", "vendor__code")
    readonly_fields = (
        "stable_key",
        "name",
        "kind",
        "resolution_status",
        "vendor",
        "reason_display",
        "candidates_table",
        "assign_link",
        "resolved_name",
        "resolved_at",
        "resend_dropped_count",
        "created_at",
        "updated_at",
    )
    exclude = ("resolution_candidates",)
    actions = ["re_resolve", "mark_internal", "mark_external"]

    @admin.display(description="후보 (점수)")
    def candidates_table(self, room):
        if not room.resolution_candidates:
            return "-"
        return format_html_join(
            "",
            "<div>({}) {} — {}</div>",
            ((c["code"], c["name"], f"{c['score']:.2f}") for c in room.resolution_candidates),
        )

    @admin.display(description="사유", ordering="resolution_reason")
    def reason_display(self, room):
        return REASON_LABELS.get(room.resolution_reason, room.resolution_reason or "-")

    @admin.display(description="벤더 지정")
    def assign_link(self, room):
        # The assignment page lives with the attention list (it can also have the room's blocked questions answered).
        url = reverse("agent_admin:room_assign", args=[room.pk])
        return format_html('<a class="button" href="{}" id="room-assign-link">벤더 지정…</a>', url)

    @admin.action(description="벤더 다시 매칭")
    def re_resolve(self, request, queryset):
        """Resolve each selected room again with the current vendors and report the outcome counts."""
        done = rooms_re_resolve(rooms=queryset.order_by("pk"), actor=request.user)
        matched = done.statuses[Room.ResolutionStatus.MATCHED]
        blocked = done.statuses[Room.ResolutionStatus.BLOCKED]
        unresolved = done.statuses[Room.ResolutionStatus.UNRESOLVED]
        self.message_user(
            request,
            f"방 {done.statuses.total()}개를 다시 매칭했습니다: 매칭 {matched}, 차단 {blocked}, 미확정 {unresolved} "
            f"(결과가 바뀐 방 {done.changed}개).",
            messages.SUCCESS,
        )
        if blocked or unresolved:
            self.message_user(
                request,
                f"답변하지 않는 방이 {blocked + unresolved}개 있습니다. 방 이름의 (코드)나 벤더 별칭을 확인하세요.",
                messages.WARNING,
            )

    @admin.action(description="내부(직원 전용) 방으로 지정")
    def mark_internal(self, request, queryset):
        self._set_kind(request, queryset, Room.Kind.INTERNAL)

    @admin.action(description="외부(벤더) 방으로 지정")
    def mark_external(self, request, queryset):
        self._set_kind(request, queryset, Room.Kind.EXTERNAL)

    def _set_kind(self, request, queryset, kind):
        for room in queryset:
            room_kind_set(room=room, kind=kind, actor=request.user)
        self.message_user(
            request, f"{queryset.count()}개 방을 '{Room.Kind(kind).label}'(으)로 지정했습니다.", messages.SUCCESS
        )

    def has_change_permission(self, request, obj=None):
        # Actions need change permission; every field stays read-only.
        return request.user.is_staff


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ("sent_at", "room", "sender_name", "short_text", "sent_by_me", "is_tagged", "unread_count")
    list_filter = ("is_tagged", "sent_by_me", "room")
    search_fields = ("text", "sender_name", "room__name")
    list_select_related = ("room",)
    date_hierarchy = "sent_at"

    @admin.display(description="내용")
    def short_text(self, message):
        return message.text[:80]


@admin.register(UploadBatch)
class UploadBatchAdmin(ReadOnlyAdmin):
    list_display = (
        "batch_id",
        "device",
        "received_at",
        "message_count",
        "stored_count",
        "resend_count",
        "duplicate_count",
        "question_count",
        "rejected_count",
        "cleaned_count",
    )
    list_filter = ("device",)
    search_fields = ("batch_id",)


@admin.register(QuarantinedMessage)
class QuarantinedMessageAdmin(ReadOnlyAdmin):
    """Messages refused one by one at upload while their batch was stored: what came, from where, and why."""

    list_display = ("received_at", "device", "room_or_key", "batch", "index", "reason", "first_error")
    list_filter = ("reason", "device")
    search_fields = ("room_key", "room__name", "batch__batch_id", "raw")
    list_select_related = ("device", "room", "batch")
    fields = ("received_at", "device", "batch", "index", "room", "room_key", "reason", "errors_list", "raw_pretty")
    readonly_fields = fields

    @admin.display(description="대화방")
    def room_or_key(self, quarantined):
        return quarantined.room or quarantined.room_key[:60] or "-"

    @admin.display(description="오류")
    def first_error(self, quarantined):
        if not quarantined.errors:
            return "-"
        error = quarantined.errors[0]
        return f"{error['field'] or '메시지'}: {error['message']}"[:120]

    @admin.display(description="오류 (전체)")
    def errors_list(self, quarantined):
        return format_html_join(
            "", "<div><code>{}</code> {}</div>", ((e["field"] or "메시지", e["message"]) for e in quarantined.errors)
        )

    @admin.display(description="받은 그대로 (JSON)")
    def raw_pretty(self, quarantined):
        # Re-indented; NUL and lone surrogates stay visible as \u escapes.
        try:
            text = storable_json(json.loads(quarantined.raw), indent=1)
        except (ValueError, RecursionError):
            text = quarantined.raw
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", text[:50_000])


@admin.register(Question)
class QuestionAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "room", "vendor", "short_text", "status", "outcome_reason")
    list_filter = ("status", "room__resolution_status")
    search_fields = ("text", "room__name", "vendor__name")
    list_select_related = ("room", "vendor")

    @admin.display(description="질문")
    def short_text(self, question):
        return question.text[:80]
