"""The staff's view of the agent: the question audit page (everything behind an answer on one screen, with the
two staff actions), the needs-attention list and the statistics page.

Reads come from `agent.selectors`, the two actions go through `agent.services`; nothing here decides anything.
The Question admin replaces the plain read-only one of `conversations.admin` (registered first, then swapped), so
its URL names stay `admin:conversations_question_*`. The attention and statistics pages live at
`admin/agent/attention/` and `admin/agent/statistics/` (this module is also their URLconf, included by
`config/urls.py` before the admin site).
"""

import csv
from collections import Counter
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.views.decorators.http import require_POST

import conversations.admin  # noqa: F401  (the plain Question admin must be registered before it is replaced)
from agent.answer_sources import sentence_sources
from agent.models import AnswerReview, AnswerRun
from agent.selectors import (
    ATTENTION_STATUSES,
    DAILY_STATUSES,
    StatisticsWindow,
    answer_run_awaiting_approval,
    question_audit,
    questions_annotated,
    questions_needing_attention,
    statistics_daily,
    statistics_failed_questions,
    statistics_frequent_questions,
    statistics_latency_percentiles,
    statistics_rates,
    statistics_source_split,
    statistics_violations_by_kind,
)
from agent.services import QuestionNotActionable, answer_approve, answer_mark_wrong, staff_text_verify
from agent.templatetags.agent_admin import reason_label
from config.admin import ReadOnlyAdmin
from conversations.models import Question
from delivery.models import SendJob
from delivery.services import SendJobError
from vendors.models import Vendor

STATISTICS_DAYS = 14
STATISTICS_MAX_DAYS = 366
RATE_LABELS = {"automation": "자동 처리율", "override": "검증 무시 발송 비율", "marked_wrong": "오답 표시율"}
ATTENTION_PAGE_SIZE = 50
# Staff actions create an AnswerReview row; who may create one may approve and mark wrong.
STAFF_ACTION_PERMISSION = "agent.add_answerreview"
_IN_FLIGHT = (SendJob.State.QUEUED, SendJob.State.CLAIMED, SendJob.State.SENDING, SendJob.State.VERIFYING)


class ApproveForm(forms.Form):
    text = forms.CharField(
        label="보낼 답변",
        widget=forms.Textarea(attrs={"rows": 6, "cols": 100}),
        help_text="고친 답변은 다시 검증합니다.",
    )
    override_reason = forms.CharField(
        label="검증 무시 사유",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 100}),
        help_text="검증 위반이 남아 있어도 보내야 할 때만 적습니다. 사유와 함께 기록됩니다.",
    )

    def clean_text(self):
        # Browsers submit textarea line breaks as CRLF; the room gets plain newlines.
        return self.cleaned_data["text"].replace("\r\n", "\n").strip()


class MarkWrongForm(forms.Form):
    reason = forms.CharField(label="오답 사유", widget=forms.Textarea(attrs={"rows": 2, "cols": 100}))


# --- list filters ------------------------------------------------------------------------------------------


class LatestOutcomeFilter(admin.SimpleListFilter):
    title = "최근 실행 결과"
    parameter_name = "outcome"

    def lookups(self, request, model_admin):
        return AnswerRun.Outcome.choices

    def queryset(self, request, queryset):
        return queryset if self.value() is None else queryset.filter(latest_outcome=self.value())


class _YesNoFilter(admin.SimpleListFilter):
    annotation = ""

    def lookups(self, request, model_admin):
        return [("yes", "예"), ("no", "아니오")]

    def queryset(self, request, queryset):
        if self.value() not in ("yes", "no"):
            return queryset
        return queryset.filter(**{self.annotation: self.value() == "yes"})


class AwaitingReviewFilter(_YesNoFilter):
    title = "검토 대기"
    parameter_name = "awaiting_review"
    annotation = "awaiting_review"


class MarkedWrongFilter(_YesNoFilter):
    title = "오답 표시"
    parameter_name = "marked_wrong"
    annotation = "marked_wrong"


# --- the Question admin ------------------------------------------------------------------------------------


class QuestionAuditAdmin(ReadOnlyAdmin):
    """Read-only list and audit page of questions; approve-and-send and mark-wrong go through the services."""

    list_display = (
        "created_at",
        "room",
        "vendor",
        "short_text",
        "status",
        "latest_outcome_display",
        "delivery_display",
        "latency_display",
    )
    list_display_links = ("created_at", "short_text")
    list_filter = ("status", LatestOutcomeFilter, "room__kind", AwaitingReviewFilter, MarkedWrongFilter)
    search_fields = ("text", "room__name", "vendor__name", "vendor__code")
    ordering = ("-created_at", "-pk")
    list_per_page = 50
    change_list_template = "admin/agent/question/change_list.html"

    def get_queryset(self, request):
        return questions_annotated(super().get_queryset(request))

    @admin.display(description="질문")
    def short_text(self, question):
        return question.text if len(question.text) <= 60 else question.text[:60] + "…"

    @admin.display(description="최근 실행 결과", ordering="latest_outcome")
    def latest_outcome_display(self, question):
        if not question.latest_outcome:
            return "-"
        label = AnswerRun.Outcome(question.latest_outcome).label
        if question.awaiting_review:
            label += " (검토 대기)"
        return label

    @admin.display(description="발송/도착")
    def delivery_display(self, question):
        return delivery_badge(question.send_state)

    @admin.display(description="소요", ordering="latest_latency_ms")
    def latency_display(self, question):
        if not question.latest_latency_ms:
            return "-"
        return f"{question.latest_latency_ms / 1000:.2f}초"

    # --- the audit page and its actions

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<path:object_id>/approve/",
                self.admin_site.admin_view(self.approve_view),
                name="{}_{}_approve".format(*info),
            ),
            path(
                "<path:object_id>/mark-wrong/",
                self.admin_site.admin_view(self.mark_wrong_view),
                name="{}_{}_mark_wrong".format(*info),
            ),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        question = self._question_or_none(request, object_id)
        if question is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_view_permission(request, question):
            raise PermissionDenied
        return self._render_audit(request, question)

    @staticmethod
    def has_staff_action_permission(request) -> bool:
        return request.user.has_perm(STAFF_ACTION_PERMISSION)

    @method_decorator(require_POST)
    def approve_view(self, request, object_id):
        question = self._question_for_action(request, object_id)
        form = ApproveForm(request.POST)
        if not form.is_valid():
            return self._render_audit(request, question, approve_form=form)
        text, reason = form.cleaned_data["text"], form.cleaned_data["override_reason"]
        try:
            review = answer_approve(question=question, actor=request.user, text=text, override_reason=reason)
        except QuestionNotActionable as error:
            run = answer_run_awaiting_approval(question=question)
            remaining = staff_text_verify(question=question, run=run, text=text) if run else []
            self.message_user(request, str(error), messages.ERROR)
            return self._render_audit(request, question, approve_form=form, approve_violations=remaining)
        except SendJobError as error:
            self.message_user(request, f"발송 작업을 만들지 못했습니다: {error}", messages.ERROR)
            return self._render_audit(request, question, approve_form=form)
        job_id = review.run.send_job_id
        if review.action == AnswerReview.Action.OVERRIDE:
            note = (
                f"검증 위반 {len(review.violations)}건을 무시하고 발송을 요청했습니다 (발송 작업 #{job_id}, 사유 기록)."
            )
            self.message_user(request, note, messages.WARNING)
        else:
            self.message_user(request, f"승인하여 발송을 요청했습니다 (발송 작업 #{job_id}).", messages.SUCCESS)
        return redirect(self._change_url(question))

    @method_decorator(require_POST)
    def mark_wrong_view(self, request, object_id):
        question = self._question_for_action(request, object_id)
        form = MarkWrongForm(request.POST)
        if not form.is_valid():
            return self._render_audit(request, question, mark_wrong_form=form)
        try:
            answer_mark_wrong(question=question, actor=request.user, reason=form.cleaned_data["reason"])
        except QuestionNotActionable as error:
            self.message_user(request, str(error), messages.ERROR)
            return self._render_audit(request, question, mark_wrong_form=form)
        self.message_user(request, "오답으로 표시했습니다. 주의 필요 목록과 평가 세트에 남습니다.", messages.SUCCESS)
        return redirect(self._change_url(question))

    def _question_or_none(self, request, object_id) -> Question | None:
        try:
            return self.get_queryset(request).filter(pk=unquote(object_id)).first()
        except (ValueError, TypeError):
            return None

    def _question_for_action(self, request, object_id) -> Question:
        if not self.has_staff_action_permission(request):
            raise PermissionDenied
        question = self._question_or_none(request, object_id)
        if question is None:
            raise PermissionDenied  # the same answer for a missing question as for a forbidden one
        return question

    def _change_url(self, question) -> str:
        return reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[question.pk])

    def _render_audit(self, request, question, *, approve_form=None, approve_violations=None, mark_wrong_form=None):
        run_id = request.GET.get("run")
        audit = question_audit(question=question, run_id=int(run_id) if run_id and run_id.isdigit() else None)
        approvable = audit.approvable_run
        if approve_form is None and approvable is not None:
            approve_form = ApproveForm(initial={"text": approval_draft(approvable, audit.rounds)})
        rounds = audit.rounds
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"질문 #{question.pk}",
            "audit": audit,
            "question": question,
            "run": audit.run,
            "round_pairs": [
                (draft_round, rounds[index + 1] if index + 1 < len(rounds) else None)
                for index, draft_round in enumerate(rounds)
            ],
            "can_act": self.has_staff_action_permission(request),
            "approve_form": approve_form,
            "approve_text": approve_form["text"].value() if approve_form is not None else "",
            "approve_violations": approve_violations or [],
            "mark_wrong_form": mark_wrong_form or MarkWrongForm(),
            # Which evidence item each sentence of the delivered answer came from (derived from the stored run).
            "sentence_sources": (
                sentence_sources(audit.run.final_text, audit.evidence) if audit.run and audit.run.final_text else []
            ),
            "verdict": audit_verdict(audit),
            "workspace_titles": audit.workspace_titles,
            "device_names": audit.device_names,
            "send_job_rows": [
                {"job": item.job, "history": item.history, "badge": delivery_badge(item.job.state)}
                for item in audit.send_jobs
            ],
        }
        return TemplateResponse(request, "admin/agent/question/audit.html", context)


def audit_verdict(audit) -> dict:
    """What the top of the audit page says: the text that went (or would go) to the room, under a heading saying
    which it is, and the violation kinds the verification found on the way (counted over every round)."""
    run, rounds = audit.run, audit.rounds
    kinds = Counter(violation.get("kind", "") for draft_round in rounds for violation in draft_round.violations)
    verdict = {"violation_kinds": sorted(kinds.items()), "violations": [], "job": None}
    sent_jobs = [item.job for item in audit.send_jobs]
    if sent_jobs:
        job = sent_jobs[-1]
        texts = [item.text for item in job.items.all() if item.kind == "text"]
        return {**verdict, "heading": "발송한 답변", "text": "\n".join(texts), "job": job}
    if run is not None and run.final_text:
        heading = "승인하면 보낼 답변" if run.awaiting_review else "보낼 답변"
        return {**verdict, "heading": heading, "text": run.final_text}
    if rounds:
        last = rounds[-1]
        return {**verdict, "heading": "보류된 초안 (보내지 않음)", "text": last.draft, "violations": last.violations}
    return {**verdict, "heading": "보낼 답변이 없습니다", "text": ""}


def approval_draft(run: AnswerRun, rounds) -> str:
    """What the approve form starts with: the run's final text, else the last round's safe text, else its draft
    (a held answer has nothing safe left; staff edit the draft itself)."""
    if run.final_text:
        return run.final_text
    last = rounds[-1] if rounds else None
    if last is None:
        return ""
    return last.clean_text or last.draft


def delivery_badge(state: str | None) -> str:
    """A symbol and a word for a send job state: not queued, on its way, arrived (counted), failed, unknown."""
    if not state:
        return format_html('<span class="delivery delivery-none">{}</span>', "— 발송 없음")
    label = SendJob.State(state).label
    if state == SendJob.State.SENT:
        return format_html('<span class="delivery delivery-sent" title="{}">✔ 도착 확인</span>', label)
    if state in _IN_FLIGHT:
        return format_html('<span class="delivery delivery-pending">⏳ {}</span>', label)
    if state == SendJob.State.FAILED:
        return format_html('<span class="delivery delivery-failed">✖ {}</span>', label)
    return format_html('<span class="delivery delivery-unknown">⚠ {}</span>', label)


if admin.site.is_registered(Question):
    admin.site.unregister(Question)
admin.site.register(Question, QuestionAuditAdmin)


# --- needs attention and statistics (admin/agent/...) ------------------------------------------------------


def attention_reasons(question) -> list[str]:
    """Why a row of `questions_needing_attention` is on the list, in words."""
    reasons = []
    if question.status in ATTENTION_STATUSES:
        reason = Question.Status(question.status).label
        detail = reason_label(question.outcome_reason)
        reasons.append(f"{reason}: {detail}" if detail else reason)
    if question.awaiting_review:
        reasons.append("승인 대기 (검토 후 발송 벤더)")
    if question.marked_wrong:
        reasons.append(f"오답 표시: {question.marked_wrong_reason}")
    return reasons


def _require_question_view(request) -> None:
    if not request.user.has_perm("conversations.view_question"):
        raise PermissionDenied


def attention_view(request):
    _require_question_view(request)
    only_open = request.GET.get("open") == "1"
    queryset = questions_needing_attention()
    if only_open:
        queryset = queryset.filter(latest_review_action__isnull=True)
    page = Paginator(queryset, ATTENTION_PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [
        {
            "question": question,
            "reasons": attention_reasons(question),
            "review": AnswerReview.Action(question.latest_review_action).label if question.latest_review_action else "",
            "delivery": delivery_badge(question.send_state),
        }
        for question in page.object_list
    ]
    context = {
        **admin.site.each_context(request),
        "opts": Question._meta,
        "title": "주의가 필요한 질문",
        "rows": rows,
        "page": page,
        "only_open": only_open,
    }
    return TemplateResponse(request, "admin/agent/question/attention.html", context)


class StatisticsFilterForm(forms.Form):
    """The statistics page's window: Seoul dates, both ends included, and optionally one vendor."""

    start = forms.DateField(label="시작일", widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
    end = forms.DateField(label="종료일", widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
    vendor = forms.ModelChoiceField(label="벤더", queryset=Vendor.objects.order_by("code"), required=False)

    def clean(self):
        cleaned = super().clean()
        start, end = cleaned.get("start"), cleaned.get("end")
        if start is None or end is None:
            return cleaned
        if end < start:
            raise forms.ValidationError("종료일이 시작일보다 앞섭니다.")
        if (end - start).days + 1 > STATISTICS_MAX_DAYS:
            raise forms.ValidationError(f"기간은 {STATISTICS_MAX_DAYS}일까지 볼 수 있습니다.")
        vendor = cleaned.get("vendor")
        cleaned["window"] = StatisticsWindow(first_day=start, last_day=end, vendor_id=vendor.pk if vendor else None)
        return cleaned


def question_list_url(window: StatisticsWindow, **filters) -> str:
    """The question list narrowed to the window (and `filters`): where a chart's bar leads."""
    query = {
        "created_at__gte": window.start.isoformat(),
        "created_at__lt": window.end.isoformat(),
        **({"vendor__id__exact": window.vendor_id} if window.vendor_id is not None else {}),
        **filters,
    }
    return f"{reverse('admin:conversations_question_changelist')}?{urlencode(query)}"


def statistics_view(request):
    _require_question_view(request)
    default = StatisticsWindow.last_days(STATISTICS_DAYS)
    data = request.GET.copy()
    for key, day in (("start", default.first_day), ("end", default.last_day)):
        if not data.get(key):
            data[key] = day.isoformat()  # the form shows the window it counts
    form = StatisticsFilterForm(data)
    window = form.cleaned_data["window"] if form.is_valid() else default
    daily = statistics_daily(window=window)
    statuses = [(status.value, status.label) for status in DAILY_STATUSES]
    rates = statistics_rates(window=window)
    if request.GET.get("format") == "csv":
        return statistics_csv(window, daily, statuses, rates)
    for row in daily:
        day = StatisticsWindow(first_day=row["day"], last_day=row["day"], vendor_id=window.vendor_id)
        row["links"] = {value: question_list_url(day, status__exact=value) for value, _ in statuses}
    export = request.GET.copy()
    export["format"] = "csv"
    context = {
        **admin.site.each_context(request),
        "opts": Question._meta,
        "title": f"답변 통계 ({window.first_day:%Y-%m-%d} ~ {window.last_day:%Y-%m-%d})",
        "form": form,
        "window": window,
        "csv_url": f"?{export.urlencode()}",
        "daily": daily,
        "daily_totals": {key: sum(row[key] for row in daily) for key in ["total", *dict(statuses)]},
        "statuses": statuses,
        "rates": rates,
        "violations": statistics_violations_by_kind(window=window),
        "frequent": [
            {**row, "link": question_list_url(window, q=row["text"])}
            for row in statistics_frequent_questions(window=window)
        ],
        "failed": statistics_failed_questions(),
        "sources": statistics_source_split(window=window),
        "latency": statistics_latency_percentiles(window=window),
        "window_link": question_list_url(window),
    }
    return TemplateResponse(request, "admin/agent/statistics.html", context)


def statistics_csv(window: StatisticsWindow, daily, statuses, rates) -> HttpResponse:
    """The daily table and the three rates as CSV (UTF-8 with a BOM, so spreadsheet programs read the Korean)."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"statistics-{window.first_day:%Y%m%d}-{window.last_day:%Y%m%d}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response.write("\ufeff")
    writer = csv.writer(response)
    writer.writerow(["날짜", "질문", *(label for _, label in statuses)])
    for row in daily:
        writer.writerow([row["day"].isoformat(), row["total"], *(row[value] for value, _ in statuses)])
    writer.writerow([])
    writer.writerow(["지표", "비율", "건수", "기준 건수"])
    for key, label in RATE_LABELS.items():
        rate = rates[key]
        shown = "" if rate["rate"] is None else f"{rate['rate']:.4f}"
        writer.writerow([label, shown, rate["count"], rate["of"]])
    return response


app_name = "agent_admin"
urlpatterns = [
    path("attention/", admin.site.admin_view(attention_view), name="attention"),
    path("statistics/", admin.site.admin_view(statistics_view), name="statistics"),
]
