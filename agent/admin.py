# --- FAQ store ---

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from agent.knowledge.faq import faq_category_counts, faq_keyword_search, faq_search_traced
from agent.knowledge.faq_index import FaqIndexUnavailable, faq_index_rebuild
from agent.knowledge.faq_services import (
    FaqError,
    faq_entries_delete_batch,
    faq_entry_create,
    faq_entry_delete,
    faq_entry_update,
)
from agent.knowledge.hub import (
    hub_workspace_save,
)
from agent.models import FaqEntry, FaqVersion, KnowledgeDocument, KnowledgeWorkspace
from config.admin import ReadOnlyAdmin


class FaqCategoryFilter(admin.SimpleListFilter):
    title = "분류"
    parameter_name = "category"

    def lookups(self, request, model_admin):
        return [(row["category"], f"{row['category'] or '(미분류)'} ({row['count']})") for row in faq_category_counts()]

    def queryset(self, request, queryset):
        value = self.value()
        return queryset if value is None else queryset.filter(category=value)


class FaqEntryForm(forms.Form):
    question = forms.CharField(label="질문", widget=forms.Textarea(attrs={"rows": 2, "cols": 90}))
    answer = forms.CharField(label="답변", widget=forms.Textarea(attrs={"rows": 8, "cols": 90}))
    category = forms.CharField(label="분류", max_length=100, required=False)
    url = forms.URLField(label="URL", max_length=500, required=False, assume_scheme="https")


class FaqSearchForm(forms.Form):
    query = forms.CharField(label="검색어", max_length=300)
    mode = forms.ChoiceField(label="방식", choices=[("semantic", "의미 검색"), ("keyword", "키워드 검색")])
    field = forms.ChoiceField(
        label="대상", choices=[("both", "질문+답변"), ("question", "질문"), ("answer", "답변")], required=False
    )


@admin.register(FaqEntry)
class FaqEntryAdmin(admin.ModelAdmin):
    """Every write goes through agent.knowledge.faq_services: add and edit use their own form (a changed question
    becomes a new entry), deletes and the batch delete keep Django's confirmation page but call the services."""

    list_display = ("id", "short_question", "category", "status", "source_created_at", "indexed", "updated_at")
    list_display_links = ("id", "short_question")
    list_filter = ("status", FaqCategoryFilter)
    search_fields = ("question", "answer")
    ordering = ("-id",)
    list_per_page = 50
    change_list_template = "admin/agent/faq/change_list.html"

    @admin.display(description="질문")
    def short_question(self, entry):
        return entry.question if len(entry.question) <= 60 else entry.question[:60] + "…"

    @admin.display(description="색인", boolean=True)
    def indexed(self, entry):
        return entry.status != FaqEntry.Status.ACTIVE or entry.indexed_at is not None

    def get_urls(self):
        custom = [
            path("search/", self.admin_site.admin_view(self.search_view), name="agent_faqentry_search"),
            path("rebuild-index/", self.admin_site.admin_view(self.rebuild_view), name="agent_faqentry_rebuild"),
        ]
        return custom + super().get_urls()

    def _context(self, request, **extra):
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}

    # add / edit through the services

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = FaqEntryForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                entry = faq_entry_create(**form.cleaned_data, source="admin", actor=request.user)
            except FaqError as error:
                form.add_error(None, str(error))
            else:
                self.message_user(request, f"FAQ #{entry.pk}를 등록했습니다.", messages.SUCCESS)
                return redirect("admin:agent_faqentry_change", entry.pk)
        context = self._context(request, title="FAQ 추가", form=form, entry=None)
        return TemplateResponse(request, "admin/agent/faq/form.html", context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        entry = get_object_or_404(FaqEntry, pk=object_id)
        if not self.has_view_or_change_permission(request, entry):
            raise PermissionDenied
        can_change = self.has_change_permission(request, entry) and entry.status == FaqEntry.Status.ACTIVE
        initial = {"question": entry.question, "answer": entry.answer, "category": entry.category, "url": entry.url}
        form = FaqEntryForm(request.POST or None, initial=initial)
        if request.method == "POST":
            if not can_change:
                raise PermissionDenied
            if form.is_valid():
                try:
                    current = faq_entry_update(entry.pk, **form.cleaned_data, actor=request.user)
                except FaqError as error:
                    form.add_error(None, str(error))
                else:
                    if current.pk != entry.pk:
                        text = f"질문이 바뀌어 새 FAQ #{current.pk}로 등록하고 #{entry.pk}는 폐기했습니다."
                    else:
                        text = f"FAQ #{entry.pk}를 저장했습니다."
                    self.message_user(request, text, messages.SUCCESS)
                    return redirect("admin:agent_faqentry_change", current.pk)
        context = self._context(
            request,
            title=f"FAQ #{entry.pk}",
            form=form,
            entry=entry,
            can_change=can_change,
            can_delete=self.has_delete_permission(request, entry),
            versions=entry.versions.order_by("-created_at", "-id"),
        )
        return TemplateResponse(request, "admin/agent/faq/form.html", context)

    # deletes (Django's confirmation pages, the services' writes)

    def delete_model(self, request, obj):
        faq_entry_delete(obj.pk, actor=request.user)

    def delete_queryset(self, request, queryset):
        faq_entries_delete_batch(list(queryset.values_list("pk", flat=True)), actor=request.user)

    # search and rebuild

    def search_view(self, request):
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        form = FaqSearchForm(request.GET or None)
        semantic, keyword, trace = [], [], None
        if form.is_valid():
            query, mode = form.cleaned_data["query"], form.cleaned_data["mode"]
            if mode == "semantic":
                try:
                    semantic, trace = faq_search_traced(query, limit=20)
                except FaqIndexUnavailable as error:
                    self.message_user(request, f"FAQ 색인을 사용할 수 없습니다: {error}", messages.ERROR)
                else:
                    if trace.vector_error:
                        self.message_user(
                            request, f"FAQ 색인을 사용할 수 없습니다: {trace.vector_error}", messages.ERROR
                        )
            else:
                keyword = faq_keyword_search(query, field=form.cleaned_data["field"] or "both")
        context = self._context(
            request,
            title="FAQ 검색",
            form=form,
            semantic=[(item, int(item.reference.split(":")[1])) for item in semantic],
            keyword=keyword,
            trace=trace,
            searched=form.is_bound and form.is_valid(),
        )
        return TemplateResponse(request, "admin/agent/faq/search.html", context)

    def rebuild_view(self, request):
        if not self.has_change_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            try:
                count = faq_index_rebuild()
            except FaqIndexUnavailable as error:
                self.message_user(request, f"색인을 다시 만들지 못했습니다: {error}", messages.ERROR)
            else:
                self.message_user(request, f"FAQ {count}건으로 색인을 다시 만들었습니다.", messages.SUCCESS)
            return redirect("admin:agent_faqentry_changelist")
        active = FaqEntry.objects.filter(status=FaqEntry.Status.ACTIVE).count()
        context = self._context(request, title="FAQ 색인 재구축", active=active)
        return TemplateResponse(request, "admin/agent/faq/rebuild_confirm.html", context)


@admin.register(FaqVersion)
class FaqVersionAdmin(ReadOnlyAdmin):
    """Snapshots taken at every FAQ change; read-only, kept after the entry is deleted."""

    list_display = ("created_at", "entry_ref", "entry_link", "reason", "origin", "actor")
    list_filter = ("reason", "origin")
    search_fields = ("entry_ref", "actor")
    readonly_fields = ("entry", "entry_ref", "reason", "origin", "actor", "created_at", "snapshot")

    @admin.display(description="FAQ")
    def entry_link(self, version):
        if version.entry_id is None:
            return "(삭제됨)"
        url = reverse("admin:agent_faqentry_change", args=[version.entry_id])
        return format_html('<a href="{}">#{}</a>', url, version.entry_id)


# --- LightRAG knowledge hub ---


class KnowledgeWorkspaceAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "enabled", "documents_ingested", "documents_failed", "revision", "updated_at"]
    list_editable = ["enabled"]
    fields = ["slug", "title", "description", "routing_keywords", "enabled", "revision", "updated_at"]
    readonly_fields = ["revision", "updated_at"]
    search_fields = ["slug", "title"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                ingested_count=Count("documents", filter=Q(documents__status=KnowledgeDocument.Status.INGESTED)),
                failed_count=Count("documents", filter=Q(documents__status=KnowledgeDocument.Status.FAILED)),
            )
        )

    def get_readonly_fields(self, request, obj=None):
        # The slug names the workspace's LightRAG folder: set once, when the workspace is created.
        return [*self.readonly_fields, "slug"] if obj else self.readonly_fields

    @admin.display(description="반영된 문서", ordering="ingested_count")
    def documents_ingested(self, obj):
        return obj.ingested_count

    @admin.display(description="실패한 문서", ordering="failed_count")
    def documents_failed(self, obj):
        return obj.failed_count

    def save_model(self, request, obj, form, change):
        hub_workspace_save(workspace=obj, changed_fields=list(form.changed_data), actor=request.user)

    def has_delete_permission(self, request, obj=None):
        return False  # its documents stay in the hub's files; disable the workspace instead


admin.site.register(KnowledgeWorkspace, KnowledgeWorkspaceAdmin)
from agent import admin_actions, admin_hub, admin_questions, admin_training  # noqa: F401,E402
