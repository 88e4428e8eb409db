from django import forms
from django.contrib import admin

from vendors.models import Vendor
from vendors.selectors import vendor_ids_by_alias
from vendors.services import ALIAS_SEPARATOR, VendorInvalid, vendor_fields_clean, vendor_upsert


class VendorAdminForm(forms.ModelForm):
    aliases = forms.CharField(
        label="별칭", required=False, help_text=f"여러 개는 {ALIAS_SEPARATOR} 로 구분합니다. 예: 대한|대한물산 본사"
    )
    # Not required so that a form without it (older clients, scripts) keeps the stored mode.
    answer_mode = forms.ChoiceField(
        label="답변 모드",
        choices=Vendor.AnswerMode.choices,
        initial=Vendor.AnswerMode.AUTO,
        required=False,
        help_text="자동 발송: 검증을 통과한 답변을 바로 보냅니다. 검토 후 발송: 직원이 승인한 답변만 보냅니다.",
    )

    class Meta:
        model = Vendor
        fields = ["code", "name", "aliases", "is_active", "answer_mode"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["aliases"] = ALIAS_SEPARATOR.join(self.instance.aliases)

    def clean_aliases(self):
        return self.cleaned_data["aliases"].split(ALIAS_SEPARATOR)

    def clean(self):
        cleaned = super().clean()
        code = cleaned.get("code", self.instance.code)
        if code is None or "name" not in cleaned or "aliases" not in cleaned:
            return cleaned
        try:
            cleaned["code"], cleaned["name"], cleaned["aliases"] = vendor_fields_clean(
                code=code, name=cleaned["name"], aliases=cleaned["aliases"]
            )
        except VendorInvalid as exc:
            raise forms.ValidationError(str(exc)) from exc
        return cleaned


@admin.register(Vendor)
class VendorAdmin(admin.ModelAdmin):
    form = VendorAdminForm
    list_display = ["code", "name", "aliases_display", "is_active", "answer_mode", "updated_at"]
    list_filter = ["is_active", "answer_mode"]
    search_fields = ["code", "name"]
    search_help_text = "코드, 벤더명, 별칭으로 찾습니다."
    ordering = ["code"]

    @admin.display(description="별칭")
    def aliases_display(self, vendor: Vendor) -> str:
        return ", ".join(vendor.aliases)

    def get_readonly_fields(self, request, obj=None):
        # The code is what rooms carry in their names; a vendor keeps it (create a new vendor instead).
        return ["code", "created_at", "updated_at"] if obj else ["created_at", "updated_at"]

    def get_search_results(self, request, queryset, search_term):
        found, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        alias_ids = vendor_ids_by_alias(search_term)
        if alias_ids:
            found = found | queryset.filter(pk__in=alias_ids)
        return found, may_have_duplicates

    def save_model(self, request, obj, form, change):
        vendor, _created = vendor_upsert(
            code=form.cleaned_data.get("code", obj.code),
            name=form.cleaned_data["name"],
            aliases=form.cleaned_data["aliases"],
            is_active=form.cleaned_data["is_active"],
            answer_mode=form.cleaned_data.get("answer_mode") or None,
            actor_kind="staff",
            actor_id=request.user.pk,
        )
        obj.pk = vendor.pk
        obj.refresh_from_db()

    def has_delete_permission(self, request, obj=None):
        # Rooms, questions and records point at vendors; switch one off (활성) instead of deleting it.
        return False


from vendors import admin_records  # noqa: F401,E402
