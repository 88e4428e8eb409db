"""The staff's pages of the knowledge hub's documents: upload, and on each document's page re-ingest, retire,
restore, replace (a corrected upload or an edited text), delete and the version history.

Every write goes through `agent.knowledge.hub`; the destructive ones (retire, replace, delete) show what they take
out of the hub and ask for confirmation first.
"""

from pathlib import Path

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from agent.knowledge.hub import (
    KnowledgeHubError,
    document_text_decode,
    document_title,
    hub_document_delete,
    hub_document_ingest,
    hub_document_reingest,
    hub_document_replace,
    hub_document_restore,
    hub_document_retire,
)
from agent.knowledge.hub_runtime import HubError
from agent.models import KnowledgeDocument, KnowledgeDocumentVersion, KnowledgeWorkspace
from config.admin import ReadOnlyAdmin

Status = KnowledgeDocument.Status
TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
# What a LightRAG failure during a removal looks like to the admin (the service rolled everything back).
HUB_WRITE_ERRORS = (KnowledgeHubError, HubError)


def uploaded_text(upload) -> str:
    """The text of an uploaded .txt / .md file, or a form error in Korean."""
    if Path(upload.name).suffix.lower() not in TEXT_SUFFIXES:
        raise forms.ValidationError("텍스트(.txt) 또는 마크다운(.md) 파일만 올릴 수 있습니다.")
    try:
        text = document_text_decode(upload.read())
    except KnowledgeHubError as error:
        raise forms.ValidationError(str(error)) from error
    if not text.strip():
        raise forms.ValidationError("빈 파일입니다.")
    return text


class KnowledgeDocumentUploadForm(forms.ModelForm):
    upload = forms.FileField(label="파일", help_text="UTF-8 또는 CP949 텍스트(.txt) · 마크다운(.md) 파일")

    class Meta:
        model = KnowledgeDocument
        fields = ["workspace", "title", "source"]
        help_texts = {"title": "비워 두면 파일의 첫 제목 줄을 씁니다."}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["title"].required = False
        self.fields["workspace"].queryset = KnowledgeWorkspace.objects.order_by("id")

    def clean_upload(self):
        upload = self.cleaned_data["upload"]
        self.text = uploaded_text(upload)
        return upload

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("title") and cleaned.get("upload"):
            cleaned["title"] = document_title(self.text, Path(cleaned["upload"].name).stem)
            self.instance.title = cleaned["title"]
        return cleaned


class KnowledgeDocumentReplaceForm(forms.Form):
    """A corrected file, or the text edited in place; the file wins when both are given."""

    upload = forms.FileField(
        label="고친 파일", required=False, help_text="올리면 아래 본문 대신 이 파일의 내용으로 교체합니다."
    )
    content = forms.CharField(label="본문", widget=forms.Textarea(attrs={"rows": 18, "cols": 110}), required=False)
    title = forms.CharField(label="제목", max_length=300, required=False, help_text="비워 두면 지금 제목을 유지합니다.")
    confirmed = forms.BooleanField(
        label="기존 본문을 지식 허브에서 빼고 새 본문으로 교체합니다",
        help_text="기존 본문의 청크·엔터티·관계가 지워지고, 기존 본문은 버전 기록에 남습니다.",
    )

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("upload")
        if upload:
            try:
                cleaned["content"] = uploaded_text(upload)
            except forms.ValidationError as error:
                self.add_error("upload", error)
        elif not (cleaned.get("content") or "").strip():
            self.add_error("content", "교체할 본문을 입력하거나 파일을 올리세요.")
        if cleaned.get("content"):
            cleaned["content"] = cleaned["content"].replace("\r\n", "\n")
        return cleaned


class KnowledgeDocumentAdmin(admin.ModelAdmin):
    list_display = [
        "title",
        "workspace",
        "status",
        "extractor",
        "chunk_count",
        "entity_count",
        "relation_count",
        "ingested_at",
        "created_at",
    ]
    list_filter = ["status", "workspace", "extractor"]
    search_fields = ["title", "source", "file_name"]
    list_select_related = ["workspace"]
    actions = ["reingest", "retire_selected", "delete_selected"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        kwargs["form"] = KnowledgeDocumentUploadForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        return ["workspace", "title", "source", "upload"]

    def save_model(self, request, obj, form, change):
        upload = form.cleaned_data["upload"]
        document = hub_document_ingest(
            workspace=form.cleaned_data["workspace"],
            title=form.cleaned_data["title"],
            content=form.text,
            source=form.cleaned_data.get("source") or "",
            file_name=Path(upload.name).name,
            actor=request.user,
        )
        obj.pk = document.pk
        obj.refresh_from_db()
        if document.status == Status.FAILED:
            messages.error(request, f"지식 허브 반영에 실패했습니다: {document.error}")

    # --- the document page and its actions

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name

        def route(suffix, view, name):
            return path(
                f"<path:object_id>/{suffix}/", self.admin_site.admin_view(view), name=f"{info[0]}_{info[1]}_{name}"
            )

        return [
            route("reingest", self.reingest_view, "reingest"),
            route("retire", self.retire_view, "retire"),
            route("restore", self.restore_view, "restore"),
            route("replace", self.replace_view, "replace"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The document as a read-only page with its actions and version history (no generic edit form: a text
        change is a replace)."""
        if request.method == "POST":
            raise PermissionDenied
        document = self._document(request, object_id, permission=self.has_view_or_change_permission)
        context = self._context(
            request,
            title=document.title,
            document=document,
            can_change=self.has_change_permission(request, document),
            can_delete=self.has_delete_permission(request, document),
            versions=document.versions.order_by("-created_at", "-id"),
        )
        return TemplateResponse(request, "admin/agent/knowledge/document.html", context)

    @method_decorator(require_POST)
    def reingest_view(self, request, object_id):
        document = self._document(request, object_id)
        result = self._hub_write(request, hub_document_reingest, document)
        if result is not None:
            self._report(request, result, "지식 허브에 다시 반영했습니다.")
        return redirect(self._change_url(document))

    def retire_view(self, request, object_id):
        document = self._document(request, object_id)
        if request.method == "POST" and request.POST.get("confirmed") == "yes":
            if self._hub_write(request, hub_document_retire, document) is not None:
                self.message_user(
                    request, f"'{document.title}'을(를) 보관했습니다. 더 이상 근거로 쓰이지 않습니다.", messages.SUCCESS
                )
            return redirect(self._change_url(document))
        context = self._context(request, title="문서 보관 확인", documents=[document], action_url=request.path)
        return TemplateResponse(request, "admin/agent/knowledge/confirm_retire.html", context)

    @method_decorator(require_POST)
    def restore_view(self, request, object_id):
        document = self._document(request, object_id)
        result = self._hub_write(request, hub_document_restore, document)
        if result is not None:
            self._report(request, result, "복원하여 지식 허브에 다시 반영했습니다.")
        return redirect(self._change_url(document))

    def replace_view(self, request, object_id):
        document = self._document(request, object_id)
        form = KnowledgeDocumentReplaceForm(
            request.POST or None, request.FILES or None, initial={"content": document.content}
        )
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            result = self._hub_write(
                request, hub_document_replace, document, content=data["content"], title=data["title"]
            )
            if result is not None:
                self._report(request, result, "본문을 교체했습니다. 이전 본문은 버전 기록에 남습니다.")
                return redirect(self._change_url(document))
        context = self._context(request, title=f"본문 교체: {document.title}", document=document, form=form)
        return TemplateResponse(request, "admin/agent/knowledge/replace.html", context)

    # --- deletes (Django's confirmation pages, the services' writes)

    def delete_model(self, request, obj):
        hub_document_delete(document=obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        for document in queryset.order_by("pk"):
            hub_document_delete(document=document, actor=request.user)

    # --- list actions

    @admin.action(description="선택한 문서를 지식 허브에 다시 반영", permissions=["change"])
    def reingest(self, request, queryset):
        results = [hub_document_reingest(document=document, actor=request.user) for document in queryset]
        failed = [document for document in results if document.status == Status.FAILED]
        if len(failed) < len(results):
            messages.success(request, f"{len(results) - len(failed)}건을 다시 반영했습니다.")
        for document in failed:
            messages.error(request, f"{document.title}: {document.error}")

    @admin.action(description="선택한 문서 보관 (검색 제외)", permissions=["change"])
    def retire_selected(self, request, queryset):
        documents = list(queryset.exclude(status=Status.RETIRED).order_by("pk"))
        if request.POST.get("confirmed") != "yes":
            context = self._context(
                request,
                title="문서 보관 확인",
                documents=documents,
                action_url=reverse("admin:agent_knowledgedocument_changelist"),
                bulk=True,
            )
            return TemplateResponse(request, "admin/agent/knowledge/confirm_retire.html", context)
        retired = sum(self._hub_write(request, hub_document_retire, document) is not None for document in documents)
        if retired:
            self.message_user(request, f"문서 {retired}건을 보관했습니다.", messages.SUCCESS)
        return None

    # --- helpers

    def _document(self, request, object_id, *, permission=None) -> KnowledgeDocument:
        document = get_object_or_404(KnowledgeDocument.objects.select_related("workspace"), pk=unquote(object_id))
        if not (permission or self.has_change_permission)(request, document):
            raise PermissionDenied
        return document

    def _hub_write(self, request, write, document, **kwargs):
        try:
            return write(document=document, actor=request.user, **kwargs)
        except HUB_WRITE_ERRORS as error:
            self.message_user(request, f"'{document.title}': 지식 허브를 바꾸지 못했습니다: {error}", messages.ERROR)
            return None

    def _report(self, request, document, success: str) -> None:
        if document.status == Status.FAILED:
            self.message_user(request, f"지식 허브 반영에 실패했습니다: {document.error}", messages.ERROR)
        else:
            self.message_user(request, success, messages.SUCCESS)

    def _context(self, request, **extra):
        return {**self.admin_site.each_context(request), "opts": self.opts, **extra}

    def _change_url(self, document) -> str:
        return reverse("admin:agent_knowledgedocument_change", args=[document.pk])


class KnowledgeDocumentVersionAdmin(ReadOnlyAdmin):
    """Snapshots of hub documents (text included); read-only, kept after the document is deleted."""

    list_display = ("created_at", "document_ref", "document_link", "workspace_slug", "title", "reason", "actor")
    list_filter = ("reason", "workspace_slug")
    search_fields = ("title", "content", "actor")
    readonly_fields = (
        "document",
        "document_ref",
        "workspace_slug",
        "reason",
        "title",
        "status",
        "actor",
        "created_at",
        "sha256",
        "content",
    )

    @admin.display(description="지식 문서")
    def document_link(self, version):
        if version.document_id is None:
            return "(삭제됨)"
        url = reverse("admin:agent_knowledgedocument_change", args=[version.document_id])
        return format_html('<a href="{}">#{}</a>', url, version.document_id)


admin.site.register(KnowledgeDocument, KnowledgeDocumentAdmin)
admin.site.register(KnowledgeDocumentVersion, KnowledgeDocumentVersionAdmin)
