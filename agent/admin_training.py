"""Admin of FAQ training uploads: upload a spreadsheet, watch its progress, review the conflicts (one or many at
once, destructive actions confirmed), restore a replaced FAQ. Every write goes through agent.knowledge.training."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from agent.knowledge.training import (
    ACTION_ALIASES,
    DESTRUCTIVE_ACTIONS,
    TrainingError,
    TrainingFileInvalid,
    conflict_score_threshold,
    training_conflict_restore,
    training_conflicts_resolve,
    training_job_create,
    training_job_retry,
)
from agent.models import FaqEntry, TrainingConflict, TrainingJob, TrainingJobRow

_ROWS_SHOWN = 500
_UPLOAD_MAX_BYTES = 20 * 1024 * 1024


class TrainingUploadForm(forms.Form):
    file = forms.FileField(
        label="학습 파일",
        help_text=(
            "엑셀(.xlsx) 또는 CSV(.csv). 첫 행 머리글: question(질문), answer(답변), category(분류), url, source(출처)"
        ),
        widget=forms.ClearableFileInput(attrs={"accept": ".xlsx,.csv"}),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > _UPLOAD_MAX_BYTES:
            raise forms.ValidationError(f"파일이 너무 큽니다 ({_UPLOAD_MAX_BYTES // (1024 * 1024)}MB까지).")
        return upload


ACTION_CHOICES = [
    (TrainingConflict.Action.KEEP_EXISTING, "기존 유지 (새 행 버림)"),
    (TrainingConflict.Action.ADD_NEW, "새 FAQ로 추가 (기존은 그대로)"),
    (TrainingConflict.Action.UPDATE_EXISTING, "기존 FAQ를 새 행으로 수정 (질문이 바뀌면 새 항목)"),
    (TrainingConflict.Action.REPLACE_EXISTING, "기존 FAQ 삭제 후 새 행으로 교체"),
]


@admin.register(TrainingJob)
class TrainingJobAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "file_name",
        "status",
        "progress",
        "added_count",
        "open_conflicts",
        "skipped_count",
        "failed_count",
        "created_by",
        "created_at",
    )
    list_display_links = ("id", "file_name")
    list_filter = ("status",)
    search_fields = ("file_name",)
    ordering = ("-id",)

    def get_queryset(self, request):
        open_filter = Q(conflicts__status=TrainingConflict.Status.OPEN)
        return super().get_queryset(request).annotate(open_conflict_count=Count("conflicts", filter=open_filter))

    @admin.display(description="진행")
    def progress(self, job):
        return f"{job.rows_done} / {job.rows_total}"

    @admin.display(description="검토 대기 충돌", ordering="open_conflict_count")
    def open_conflicts(self, job):
        return job.open_conflict_count

    def has_delete_permission(self, request, obj=None):
        return False  # the upload is the history of what it added; FAQ entries are deleted on their own page

    def get_urls(self):
        view = self.admin_site.admin_view
        custom = [
            path("<int:job_id>/resolve/", view(self.resolve_view), name="agent_trainingjob_resolve"),
            path("<int:job_id>/restore/<int:conflict_id>/", view(self.restore_view), name="agent_trainingjob_restore"),
            path("<int:job_id>/retry/", view(self.retry_view), name="agent_trainingjob_retry"),
        ]
        return custom + super().get_urls()

    def _context(self, request, **extra):
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = TrainingUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                job = training_job_create(file_name=upload.name, data=upload.read(), actor=request.user)
            except TrainingFileInvalid as error:
                form.add_error("file", str(error))
            else:
                self.message_user(request, f"{job.file_name}: {job.rows_total}행을 올렸습니다.", messages.SUCCESS)
                return redirect("admin:agent_trainingjob_change", job.pk)
        context = self._context(request, title="FAQ 학습 파일 올리기", form=form, threshold=conflict_score_threshold())
        return TemplateResponse(request, "admin/agent/training/upload.html", context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        job = get_object_or_404(TrainingJob, pk=object_id)
        if not self.has_view_or_change_permission(request, job):
            raise PermissionDenied
        row_status = request.GET.get("row_status", "")
        rows = job.rows.select_related("entry").order_by("row_number")
        if row_status in TrainingJobRow.Status.values:
            rows = rows.filter(status=row_status)
        row_counts = dict(job.rows.order_by().values_list("status").annotate(count=Count("id")))
        conflicts = job.conflicts.select_related("row", "existing", "result_entry", "resolved_by")
        context = self._context(
            request,
            title=f"FAQ 학습 업로드 #{job.pk} · {job.file_name}",
            job=job,
            running=job.status in (TrainingJob.Status.QUEUED, TrainingJob.Status.RUNNING),
            open_conflicts=[c for c in conflicts if c.status == TrainingConflict.Status.OPEN],
            closed_conflicts=[c for c in conflicts if c.status != TrainingConflict.Status.OPEN],
            rows=rows[:_ROWS_SHOWN],
            rows_limited=rows.count() > _ROWS_SHOWN,
            row_status=row_status,
            row_filters=[(value, label, row_counts.get(value, 0)) for value, label in TrainingJobRow.Status.choices],
            actions=ACTION_CHOICES,
            destructive=sorted(DESTRUCTIVE_ACTIONS),
            can_review=self.has_change_permission(request, job),
            threshold=conflict_score_threshold(),
        )
        return TemplateResponse(request, "admin/agent/training/job.html", context)

    def resolve_view(self, request, job_id):
        job = get_object_or_404(TrainingJob, pk=job_id)
        if request.method != "POST" or not self.has_change_permission(request, job):
            raise PermissionDenied
        action = ACTION_ALIASES.get(request.POST.get("action", ""), request.POST.get("action", ""))
        ids = [int(value) for value in request.POST.getlist("conflict_ids") if value.isdigit()]
        selected = list(
            job.conflicts.filter(pk__in=ids, status=TrainingConflict.Status.OPEN).select_related("row", "existing")
        )
        if action not in TrainingConflict.Action.values or not selected:
            self.message_user(request, "처리할 충돌과 조치를 고르세요.", messages.WARNING)
            return redirect("admin:agent_trainingjob_change", job.pk)
        if action in DESTRUCTIVE_ACTIONS and request.POST.get("confirmed") != "yes":
            context = self._context(
                request,
                title="기존 FAQ를 바꾸는 조치 확인",
                job=job,
                conflicts=selected,
                action=action,
                action_label=dict(ACTION_CHOICES)[action],
            )
            return TemplateResponse(request, "admin/agent/training/confirm_resolve.html", context)
        resolved, errors = training_conflicts_resolve(
            conflict_ids=[c.pk for c in selected], action=action, actor=request.user
        )
        if resolved:
            self.message_user(request, f"충돌 {resolved}건을 처리했습니다.", messages.SUCCESS)
        for error in errors:
            self.message_user(request, error, messages.ERROR)
        return redirect(reverse("admin:agent_trainingjob_change", args=[job.pk]) + "#training-conflicts")

    def restore_view(self, request, job_id, conflict_id):
        job = get_object_or_404(TrainingJob, pk=job_id)
        conflict = get_object_or_404(TrainingConflict, pk=conflict_id, job=job)
        if not self.has_change_permission(request, job):
            raise PermissionDenied
        if request.method == "POST" and request.POST.get("confirmed") == "yes":
            try:
                restored = training_conflict_restore(conflict_id=conflict.pk, actor=request.user)
            except TrainingError as error:
                self.message_user(request, str(error), messages.ERROR)
            else:
                self.message_user(request, f"FAQ #{restored.pk}로 되돌렸습니다.", messages.SUCCESS)
            return redirect(reverse("admin:agent_trainingjob_change", args=[job.pk]) + "#training-resolved")
        snapshot = conflict.snapshot_version.snapshot if conflict.snapshot_version else {}
        result = conflict.result_entry
        context = self._context(
            request,
            title="스냅숏으로 되돌리기 확인",
            job=job,
            conflict=conflict,
            snapshot=snapshot,
            result=result if result and result.status == FaqEntry.Status.ACTIVE else None,
        )
        return TemplateResponse(request, "admin/agent/training/confirm_restore.html", context)

    def retry_view(self, request, job_id):
        job = get_object_or_404(TrainingJob, pk=job_id)
        if request.method != "POST" or not self.has_change_permission(request, job):
            raise PermissionDenied
        if training_job_retry(job=job, actor=request.user):
            self.message_user(request, "남은 행을 다시 처리합니다.", messages.SUCCESS)
        else:
            self.message_user(request, "실패한 업로드만 다시 실행할 수 있습니다.", messages.WARNING)
        return redirect("admin:agent_trainingjob_change", job.pk)
