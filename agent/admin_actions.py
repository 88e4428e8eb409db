"""Staff's read-only views of action requests (irreversible actions the model asked for) with the one button that
runs a pending request — through `agent.services`, which checks the tool and its arguments again — and of staff
reviews, whose wrong marks export as evaluation cases (the same file as `eval_agent --from-reviews`)."""

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_POST

from agent.admin_questions import STAFF_ACTION_PERMISSION
from agent.evaluation import review_cases_jsonl
from agent.models import ActionRequest, AnswerReview
from agent.services import QuestionNotActionable, action_request_run_by_staff
from config.admin import ReadOnlyAdmin


@admin.register(ActionRequest)
class ActionRequestAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "question", "tool", "label", "status", "send_job", "executed_by", "executed_at")
    list_filter = ("status", "tool")
    search_fields = ("label", "idempotency_key", "question__text")
    list_select_related = ("question", "send_job")
    ordering = ("-created_at", "-pk")
    fields = (
        "question",
        "run",
        "position",
        "tool",
        "label",
        "arguments",
        "idempotency_key",
        "status",
        "result",
        "send_job",
        "executed_by",
        "created_at",
        "executed_at",
    )

    def get_urls(self):
        return [
            path(
                "<path:object_id>/run/",
                self.admin_site.admin_view(self.run_view),
                name="agent_actionrequest_run",
            ),
            *super().get_urls(),
        ]

    @method_decorator(require_POST)
    def run_view(self, request, object_id):
        if not request.user.has_perm(STAFF_ACTION_PERMISSION):
            raise PermissionDenied
        action_request = ActionRequest.objects.filter(pk=unquote(object_id)).first()
        if action_request is None:
            raise PermissionDenied
        try:
            done = action_request_run_by_staff(request=action_request, actor=request.user)
        except QuestionNotActionable as error:
            self.message_user(request, str(error), messages.ERROR)
        else:
            level = messages.SUCCESS if done.status == ActionRequest.Status.DONE else messages.ERROR
            self.message_user(request, f"동작 요청 {done.get_status_display()}: {done.result}", level)
        return redirect(reverse("admin:conversations_question_change", args=[action_request.question_id]))


EXPORT_FILE_NAME = "wrong_answers_eval.jsonl"


def _eval_file_response(review_ids: list[int] | None) -> HttpResponse:
    response = HttpResponse(review_cases_jsonl(review_ids), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{EXPORT_FILE_NAME}"'
    return response


@admin.register(AnswerReview)
class AnswerReviewAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "question", "action", "reason", "actor")
    list_filter = ("action",)
    search_fields = ("reason", "correction", "question__text")
    list_select_related = ("question", "actor")
    ordering = ("-created_at", "-pk")
    fields = ("question", "run", "action", "text", "reason", "correction", "violations", "actor", "created_at")
    actions = ("export_as_eval_cases",)
    change_list_template = "admin/agent/answerreview/change_list.html"

    def get_urls(self):
        return [
            path(
                "export/",
                self.admin_site.admin_view(self.export_view),
                name="agent_answerreview_export",
            ),
            *super().get_urls(),
        ]

    @admin.action(description="선택한 오답 표시를 평가 사례(JSONL)로 내보내기", permissions=["view"])
    def export_as_eval_cases(self, request, queryset):
        return _eval_file_response(list(queryset.values_list("pk", flat=True)))

    def export_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        return _eval_file_response(None)
