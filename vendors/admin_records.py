"""Admin pages of vendor records, products and brands (view, search, edit and retire through vendors.services,
audited), the import history, and uploads of vendor or records files with a dry-run preview before they apply."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from config.admin import ReadOnlyAdmin
from vendors.models import Brand, Product, RecordImport, StagedImport, VendorRecord
from vendors.services import (
    ALIAS_SEPARATOR,
    PRODUCT_EDITABLE,
    RECORD_EDITABLE,
    VendorInvalid,
    brand_save,
    product_save,
    records_retire,
    staged_import_apply,
    staged_import_create,
    staged_import_discard,
    staged_import_repreview,
    vendor_record_save,
)

_UPLOAD_MAX_BYTES = 50 * 1024 * 1024
_CHANGES_SHOWN = 500


class RetiredFilter(admin.SimpleListFilter):
    title = "상태"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("current", "사용 중"), ("retired", "폐기")]

    def queryset(self, request, queryset):
        if self.value() == "current":
            return queryset.filter(retired_at__isnull=True)
        if self.value() == "retired":
            return queryset.filter(retired_at__isnull=False)
        return queryset


class _CuratedAdmin(admin.ModelAdmin):
    """Saves go through a service (validation, derived search text, audit row); rows are retired, never deleted
    here, so what an answer once cited stays explainable."""

    actions = ["retire_selected", "restore_selected"]
    list_select_related = ["vendor"]
    autocomplete_fields = ["vendor"]
    list_per_page = 50

    @admin.display(description="상태", boolean=False)
    def state(self, obj):
        return "폐기" if obj.retired_at else "사용 중"

    def get_readonly_fields(self, request, obj=None):
        # A row belongs to its vendor: move it by retiring it and adding it to the other vendor.
        return ["vendor", "retired_at", "updated_at"] if obj else ["retired_at", "updated_at"]

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="선택한 항목 폐기 (검색·답변에서 빠짐)", permissions=["change"])
    def retire_selected(self, request, queryset):
        count = records_retire(model=self.model, ids=queryset.values_list("pk", flat=True), actor=request.user)
        self.message_user(request, f"{count}건을 폐기했습니다. 검색과 답변 근거에서 빠집니다.", messages.SUCCESS)

    @admin.action(description="선택한 항목 복원", permissions=["change"])
    def restore_selected(self, request, queryset):
        ids = queryset.values_list("pk", flat=True)
        count = records_retire(model=self.model, ids=ids, actor=request.user, retire=False)
        self.message_user(request, f"{count}건을 복원했습니다.", messages.SUCCESS)

    def _save_through_service(self, request, obj, form, save, editable):
        fields = {name: form.cleaned_data[name] for name in editable if name in form.cleaned_data}
        try:
            save(obj, fields, request.user)
        except (ValidationError, VendorInvalid) as error:
            # The form validated the same model rules; this is a race with another writer.
            self.message_user(request, f"저장하지 못했습니다: {error}", messages.ERROR)


@admin.register(VendorRecord)
class VendorRecordAdmin(_CuratedAdmin):
    list_display = [
        "id",
        "vendor",
        "kind",
        "title",
        "effective_from",
        "effective_to",
        "source_id",
        "state",
        "updated_at",
    ]
    list_display_links = ["id", "title"]
    list_filter = [RetiredFilter, "kind"]
    search_fields = ["title", "body", "source", "source_id", "vendor__code", "vendor__name"]
    search_help_text = "제목, 본문, 출처, 출처 ID, 벤더 코드·이름으로 찾습니다."
    fields = ["vendor", *RECORD_EDITABLE, "retired_at", "updated_at"]

    def save_model(self, request, obj, form, change):
        def save(record, fields, actor):
            vendor_record_save(record=record, fields=fields, actor=actor)

        self._save_through_service(request, obj, form, save, RECORD_EDITABLE)


@admin.register(Product)
class ProductAdmin(_CuratedAdmin):
    list_display = ["id", "vendor", "sku", "name", "brand", "unit_price", "stock_quantity", "state", "updated_at"]
    list_display_links = ["id", "sku", "name"]
    list_filter = [RetiredFilter, "category"]
    list_select_related = ["vendor", "brand"]
    search_fields = ["sku", "name", "category", "brand__name", "vendor__code", "vendor__name"]
    search_help_text = "SKU, 상품명, 분류, 브랜드, 벤더 코드·이름으로 찾습니다."
    autocomplete_fields = ["vendor", "brand"]
    fields = ["vendor", "sku", *PRODUCT_EDITABLE, "retired_at", "updated_at"]

    def get_readonly_fields(self, request, obj=None):
        # The SKU is the product's key in every import file of its vendor.
        return [*super().get_readonly_fields(request, obj), "sku"] if obj else super().get_readonly_fields(request)

    def save_model(self, request, obj, form, change):
        def save(product, fields, actor):
            if product.pk is None:
                product.sku = form.cleaned_data["sku"]
            product_save(product=product, fields=fields, actor=actor)

        self._save_through_service(request, obj, form, save, PRODUCT_EDITABLE)


class BrandForm(forms.ModelForm):
    aliases = forms.CharField(
        label="별칭", required=False, help_text=f"여러 개는 {ALIAS_SEPARATOR} 로 구분합니다. 예: 한빛|HANBIT"
    )

    class Meta:
        model = Brand
        fields = ["name", "aliases"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["aliases"] = ALIAS_SEPARATOR.join(self.instance.aliases)

    def clean_aliases(self):
        return [alias.strip() for alias in self.cleaned_data["aliases"].split(ALIAS_SEPARATOR) if alias.strip()]


@admin.register(Brand)
class BrandAdmin(admin.ModelAdmin):
    """Brands are shared by vendors and known to the draft checks; staff rename them or fix their aliases (the
    products are re-indexed). A brand is not retired: its products are."""

    form = BrandForm
    list_display = ["name", "aliases_display", "product_count", "updated_at"]
    search_fields = ["name"]
    search_help_text = "브랜드명으로 찾습니다."

    @admin.display(description="별칭")
    def aliases_display(self, brand):
        return ", ".join(brand.aliases)

    @admin.display(description="상품 수")
    def product_count(self, brand):
        return brand.products.count()

    def save_model(self, request, obj, form, change):
        brand_save(brand=obj, name=form.cleaned_data["name"], aliases=form.cleaned_data["aliases"], actor=request.user)

    def has_delete_permission(self, request, obj=None):
        return False


class ImportUploadForm(forms.Form):
    kind = forms.ChoiceField(label="종류", choices=StagedImport.Kind.choices)
    file = forms.FileField(
        label="파일",
        help_text="벤더: CSV (code,name,aliases). 기록·상품·브랜드: CSV, XLSX, JSON Lines (열 설명: docs/knowledge.md)",
    )
    replace_unkeyed = forms.BooleanField(
        label="source_id 없는 기존 기록 교체",
        required=False,
        help_text="같은 벤더·출처(기본: 파일명)의 source_id 없는 기존 기록을 지우고 이 파일의 행으로 바꿉니다.",
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > _UPLOAD_MAX_BYTES:
            raise forms.ValidationError(f"파일이 너무 큽니다 ({_UPLOAD_MAX_BYTES // (1024 * 1024)}MB까지).")
        return upload


@admin.register(RecordImport)
class RecordImportAdmin(ReadOnlyAdmin):
    """What each import changed; uploads start here (preview first, then apply)."""

    list_display = ["id", "file_name", "counts", "created_at"]
    search_fields = ["file_name"]
    change_list_template = "admin/vendors/recordimport/change_list.html"

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("upload/", view(self.upload_view), name="vendors_recordimport_upload"),
            path("upload/<int:staged_id>/", view(self.preview_view), name="vendors_recordimport_preview"),
            *super().get_urls(),
        ]

    def _can_import(self, request):
        return request.user.has_perm("vendors.add_stagedimport")

    def _context(self, request, **extra):
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}

    def upload_view(self, request):
        if not self._can_import(request):
            raise PermissionDenied
        form = ImportUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            staged = staged_import_create(
                kind=form.cleaned_data["kind"],
                file_name=upload.name,
                data=upload.read(),
                replace_unkeyed=form.cleaned_data["replace_unkeyed"],
                actor=request.user,
            )
            return redirect("admin:vendors_recordimport_preview", staged.pk)
        context = self._context(request, title="벤더·기록 파일 가져오기", form=form)
        return TemplateResponse(request, "admin/vendors/recordimport/upload.html", context)

    def preview_view(self, request, staged_id):
        staged = get_object_or_404(StagedImport, pk=staged_id)
        if not self._can_import(request):
            raise PermissionDenied
        if request.method == "POST":
            return self._preview_post(request, staged)
        preview = staged.preview
        context = self._context(
            request,
            title=f"가져오기 미리보기 · {staged.file_name}",
            staged=staged,
            counts=preview.get("counts", {}),
            changes=preview.get("changes", [])[:_CHANGES_SHOWN],
            changes_total=len(preview.get("changes", [])),
            errors=preview.get("errors", []),
            warnings=preview.get("warnings", []),
            can_replace=staged.kind == StagedImport.Kind.RECORDS and preview.get("unkeyed_rows", 0) > 0,
            can_apply=staged.status == StagedImport.Status.PREVIEWED and not preview.get("blocking"),
        )
        return TemplateResponse(request, "admin/vendors/recordimport/preview.html", context)

    def _preview_post(self, request, staged):
        step = request.POST.get("step")
        try:
            if step == "apply":
                staged = staged_import_apply(staged=staged, actor=request.user)
                self.message_user(request, f"반영했습니다: {staged.result}", messages.SUCCESS)
                if staged.record_import_id:
                    return redirect("admin:vendors_recordimport_change", staged.record_import_id)
                return redirect("admin:vendors_vendor_changelist")
            if step == "repreview":
                staged_import_repreview(staged=staged, replace_unkeyed=request.POST.get("replace_unkeyed") == "on")
            elif step == "discard":
                staged_import_discard(staged=staged, actor=request.user)
                self.message_user(request, "업로드를 닫았습니다. 아무것도 반영하지 않았습니다.", messages.INFO)
                return redirect("admin:vendors_recordimport_changelist")
        except VendorInvalid as error:
            self.message_user(request, str(error), messages.ERROR)
        return redirect(reverse("admin:vendors_recordimport_preview", args=[staged.pk]))
