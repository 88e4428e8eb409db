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
from datetime import date
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

import conversations.admin  # noqa: F401  (the plain Question admin must be registered before it is replaced)
from agent.answer_sources import sentence_sources
from agent.knowledge.faq_services import FaqError
from agent.models import AnswerReview, AnswerRun, AttentionItem
from agent.selectors import (
    ATTENTION_REASONS,
    ATTENTION_STATUSES,
    DAILY_STATUSES,
    AttentionFilters,
    StatisticsWindow,
    action_requests_for_run,
    answer_run_awaiting_approval,
    attention_queue,
    attention_vendors,
    question_audit,
    questions_annotated,
    questions_with_violation_kind,
    statistics_daily,
    statistics_frequent_questions,
    statistics_latency_percentiles,
    statistics_rates,
    statistics_source_split,
    statistics_unanswered_questions,
    statistics_violations_by_kind,
)
from agent.services import (
    UNCHANGED,
    QuestionNotActionable,
    answer_approve,
    answer_correct,
    answer_mark_wrong,
    attention_update,
    question_reanswer,
    staff_answer_latest,
    staff_answer_save_as_faq,
    staff_text_verify,
)
from agent.templatetags.agent_admin import reason_label, violation_kind_label
from agent.verification.kinds import KINDS, UNKNOWN_KIND
from agent.verification.sentences import split_sentences
from config.admin import ReadOnlyAdmin
from conversations.models import Question, Room
from conversations.room_services import RoomAssignmentInvalid, room_vendor_assign
from delivery.models import SendJob
from delivery.services import SendJobError
from monitoring.business_hours import business_seconds_between
from vendors.models import Vendor
from vendors.resolution import REASON_LABELS

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
    correction = forms.CharField(
        label="바른 답변",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 100}),
        help_text="알면 적습니다. 평가 세트로 내보낼 때 이 답변에 있어야 할 내용이 됩니다.",
    )


class CorrectForm(ApproveForm):
    """A correction sent after the answer: the same fields as an approval, its own prefix on the page."""

    prefix = "correct"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["text"].label = "정정 답변"
        self.fields["text"].help_text = "방에 새 메시지로 보냅니다. 보내기 전에 근거로 검증합니다."


class SaveFaqForm(forms.Form):
    prefix = "faq"
    question = forms.CharField(label="FAQ 질문", widget=forms.Textarea(attrs={"rows": 2, "cols": 100}))
    answer = forms.CharField(label="FAQ 답변", widget=forms.Textarea(attrs={"rows": 5, "cols": 100}))
    category = forms.CharField(label="분류", max_length=100, required=False)


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


class ViolationKindFilter(admin.SimpleListFilter):
    """Questions with a violation of one kind in a draft round. The statistics page's violation bars also pass the
    days whose runs they count (Seoul dates, both included), so the list holds exactly the questions counted."""

    title = "검증 위반 종류"
    parameter_name = "violation_kind"
    window_parameters = ("violation_start", "violation_end")

    def __init__(self, request, params, model, model_admin):
        self.window_values = {name: params.pop(name)[-1] for name in self.window_parameters if name in params}
        super().__init__(request, params, model, model_admin)

    def expected_parameters(self):
        return [self.parameter_name, *self.window_parameters]

    def lookups(self, request, model_admin):
        return [(kind, violation_kind_label(kind)) for kind in (*KINDS, UNKNOWN_KIND)]

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        return questions_with_violation_kind(queryset, self.value(), window=self._window())

    def _window(self) -> StatisticsWindow | None:
        if not self.window_values:
            return None
        try:
            first_day, last_day = (date.fromisoformat(self.window_values[name]) for name in self.window_parameters)
        except (KeyError, ValueError) as error:
            raise IncorrectLookupParameters(error) from error
        return StatisticsWindow(first_day=first_day, last_day=last_day)


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
    list_filter = (
        "status",
        LatestOutcomeFilter,
        ViolationKindFilter,
        "room__kind",
        AwaitingReviewFilter,
        MarkedWrongFilter,
    )
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
            path(
                "<path:object_id>/correct/",
                self.admin_site.admin_view(self.correct_view),
                name="{}_{}_correct".format(*info),
            ),
            path(
                "<path:object_id>/save-as-faq/",
                self.admin_site.admin_view(self.save_as_faq_view),
                name="{}_{}_save_as_faq".format(*info),
            ),
            path(
                "<path:object_id>/reanswer/",
                self.admin_site.admin_view(self.reanswer_view),
                name="{}_{}_reanswer".format(*info),
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
            answer_mark_wrong(
                question=question,
                actor=request.user,
                reason=form.cleaned_data["reason"],
                correction=form.cleaned_data["correction"],
            )
        except QuestionNotActionable as error:
            self.message_user(request, str(error), messages.ERROR)
            return self._render_audit(request, question, mark_wrong_form=form)
        self.message_user(request, "오답으로 표시했습니다. 주의 필요 목록과 평가 세트에 남습니다.", messages.SUCCESS)
        return redirect(self._change_url(question))

    @method_decorator(require_POST)
    def correct_view(self, request, object_id):
        question = self._question_for_action(request, object_id)
        form = CorrectForm(request.POST)
        if not form.is_valid():
            return self._render_audit(request, question, correct_form=form)
        text, reason = form.cleaned_data["text"], form.cleaned_data["override_reason"]
        try:
            review = answer_correct(question=question, actor=request.user, text=text, override_reason=reason)
        except QuestionNotActionable as error:
            run = question.runs.order_by("-attempt").first()
            remaining = staff_text_verify(question=question, run=run, text=text) if run else []
            self.message_user(request, str(error), messages.ERROR)
            return self._render_audit(request, question, correct_form=form, correct_violations=remaining)
        except SendJobError as error:
            self.message_user(request, f"발송 작업을 만들지 못했습니다: {error}", messages.ERROR)
            return self._render_audit(request, question, correct_form=form)
        note = "정정 답변 발송을 요청했습니다."
        if review.violations:
            note = f"검증 위반 {len(review.violations)}건을 무시하고 정정 답변 발송을 요청했습니다 (사유 기록)."
        self.message_user(request, note, messages.WARNING if review.violations else messages.SUCCESS)
        return redirect(self._change_url(question))

    @method_decorator(require_POST)
    def save_as_faq_view(self, request, object_id):
        question = self._question_for_action(request, object_id)
        if not request.user.has_perm("agent.add_faqentry"):
            raise PermissionDenied
        form = SaveFaqForm(request.POST)
        if not form.is_valid():
            return self._render_audit(request, question, save_faq_form=form)
        data = form.cleaned_data
        try:
            entry = staff_answer_save_as_faq(
                question=question,
                actor=request.user,
                faq_question=data["question"],
                answer=data["answer"],
                category=data["category"],
            )
        except FaqError as error:
            form.add_error(None, str(error))
            return self._render_audit(request, question, save_faq_form=form)
        url = reverse("admin:agent_faqentry_change", args=[entry.pk])
        self.message_user(request, format_html('FAQ <a href="{}">#{}</a>로 저장했습니다.', url, entry.pk))
        return redirect(self._change_url(question))

    @method_decorator(require_POST)
    def reanswer_view(self, request, object_id):
        question = self._question_for_action(request, object_id)
        try:
            question_reanswer(question=question, actor=request.user)
        except QuestionNotActionable as error:
            self.message_user(request, str(error), messages.ERROR)
        else:
            self.message_user(request, "다시 답변하도록 에이전트에 넘겼습니다.", messages.SUCCESS)
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

    def _render_audit(
        self,
        request,
        question,
        *,
        approve_form=None,
        approve_violations=None,
        mark_wrong_form=None,
        correct_form=None,
        correct_violations=None,
        save_faq_form=None,
    ):
        run_id = request.GET.get("run")
        audit = question_audit(question=question, run_id=int(run_id) if run_id and run_id.isdigit() else None)
        approvable = audit.approvable_run
        if approve_form is None and approvable is not None:
            approve_form = ApproveForm(initial={"text": approval_draft(approvable, audit.rounds)})
        latest = audit.runs[0] if audit.runs else None
        if correct_form is None and latest is not None and latest.send_job_id:
            correct_form = CorrectForm(initial={"text": latest.final_text})
        staff_answer = staff_answer_latest(question)
        if save_faq_form is None and staff_answer is not None and request.user.has_perm("agent.add_faqentry"):
            save_faq_form = SaveFaqForm(initial={"question": question.text, "answer": staff_answer.text})
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
            "evidence_inserts": evidence_inserts(audit.evidence),
            "correct_form": correct_form,
            "correct_text": correct_form["text"].value() if correct_form is not None else "",
            "correct_violations": correct_violations or [],
            "save_faq_form": save_faq_form,
            "reason_label": reason_label(question.outcome_reason),
            "room_assign_url": (
                reverse("agent_admin:room_assign", args=[question.room_id]) + f"?question={question.pk}"
                if question.status == Question.Status.BLOCKED
                else ""
            ),
            # Which evidence item each sentence of the delivered answer came from (derived from the stored run).
            "sentence_sources": (
                sentence_sources(audit.run.final_text, audit.evidence) if audit.run and audit.run.final_text else []
            ),
            "action_requests": action_requests_for_run(audit.run),
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
    """What the approve form starts with: the run's final text, else the last round's safe text. A held answer has
    nothing safe left: the form starts empty and offers the evidence sentences to insert (`evidence_inserts`),
    never the draft that failed verification."""
    if run.final_text:
        return run.final_text
    last = rounds[-1] if rounds else None
    return last.clean_text if last is not None else ""


FAQ_ANSWER_PREFIX = "답변:"
EVIDENCE_INSERT_LIMIT = 60


def evidence_inserts(evidence) -> list[dict]:
    """What staff may insert into an answer they write, per evidence item: its sentences, and for an FAQ the whole
    answer. `{"title", "source_kind", "faq_answer", "sentences"}`, in the order the model saw them, each sentence
    once, at most `EVIDENCE_INSERT_LIMIT` sentences in all."""
    items, seen = [], set()
    for item in evidence:
        text, faq_answer = item.text, ""
        if item.source_kind == "faq" and FAQ_ANSWER_PREFIX in text:
            faq_answer = text.split(FAQ_ANSWER_PREFIX, 1)[1].strip()
            text = faq_answer
        sentences = []
        for sentence in split_sentences(text):
            if sentence.text not in seen and len(seen) < EVIDENCE_INSERT_LIMIT:
                seen.add(sentence.text)
                sentences.append(sentence.text)
        if sentences or faq_answer:
            items.append(
                {
                    "title": item.title or item.reference,
                    "source_kind": item.source_kind,
                    "faq_answer": faq_answer,
                    "sentences": sentences,
                }
            )
    return items


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
    if question.handoff_removed:
        reasons.append("사람에게 넘기는 문장을 답변에서 뺐습니다")
    if question.actions_pending:
        reasons.append("실행하지 않은 동작 요청")
    return reasons


def duration_text(seconds: float) -> str:
    """`1일 2시간`, `3시간 5분`, `12분` (days of 24 hours)."""
    minutes = int(seconds // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days}일 {hours}시간"
    if hours:
        return f"{hours}시간 {minutes}분"
    return f"{minutes}분"


def attention_age(question, now) -> dict:
    """Age since accepted in business time against the SLA, and on the clock."""
    sla = settings.ATTENTION_SLA_BUSINESS_MINUTES * 60
    business = business_seconds_between(question.created_at, now)
    return {
        "business": duration_text(business),
        "clock": duration_text((now - question.created_at).total_seconds()),
        "over_sla": business > sla,
    }


def _require_question_view(request) -> None:
    if not request.user.has_perm("conversations.view_question"):
        raise PermissionDenied


ATTENTION_AGES = [(1, "1시간 이상"), (4, "4시간 이상"), (24, "1일 이상"), (72, "3일 이상")]
ATTENTION_BULK_ACTIONS = {
    "take": "나에게 배정",
    "assign": "선택한 담당자에게 배정",
    "release": "담당자 해제",
    "done": "완료 처리",
    "reopen": "다시 열기",
}


def attention_filters(params) -> AttentionFilters:
    age = params.get("age", "")
    return AttentionFilters(
        state=params.get("state", AttentionItem.State.OPEN),
        owner=params.get("owner", ""),
        vendor=params.get("vendor", ""),
        reason=params.get("reason", "") if params.get("reason", "") in ATTENTION_REASONS else "",
        age_hours=int(age) if age.isdigit() else None,
        over_sla=params.get("sla") == "over",
    )


def _staff_users():
    return get_user_model().objects.filter(is_staff=True, is_active=True).order_by("username")


def attention_view(request):
    _require_question_view(request)
    filters = attention_filters(request.GET)
    now = timezone.now()
    page = Paginator(attention_queue(filters, user=request.user, now=now), ATTENTION_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    rows = []
    for question in page.object_list:
        item = getattr(question, "attention", None)
        rows.append(
            {
                "question": question,
                "reasons": attention_reasons(question),
                "review": AnswerReview.Action(question.latest_review_action).label
                if question.latest_review_action
                else "",
                "delivery": delivery_badge(question.send_state),
                "owner": item.owner if item else None,
                "state": item.get_state_display() if item else AttentionItem.State.OPEN.label,
                "age": attention_age(question, now),
                "room_assign_url": (
                    reverse("agent_admin:room_assign", args=[question.room_id]) + f"?question={question.pk}"
                    if question.status == Question.Status.BLOCKED
                    else ""
                ),
            }
        )
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        **admin.site.each_context(request),
        "opts": Question._meta,
        "title": "주의가 필요한 질문",
        "rows": rows,
        "page": page,
        "filters": filters,
        "query": query.urlencode(),
        "states": [(AttentionItem.State.OPEN, "처리 전"), (AttentionItem.State.DONE, "완료"), ("", "전체")],
        "reasons": list(ATTENTION_REASONS.items()),
        "ages": ATTENTION_AGES,
        "vendors": attention_vendors(),
        "staff_users": list(_staff_users()),
        "bulk_actions": list(ATTENTION_BULK_ACTIONS.items()),
        "sla_minutes": settings.ATTENTION_SLA_BUSINESS_MINUTES,
        "can_act": request.user.has_perm(STAFF_ACTION_PERMISSION),
    }
    return TemplateResponse(request, "admin/agent/question/attention.html", context)


@require_POST
def attention_bulk_view(request):
    """Bulk actions of the work queue: take, assign, release, done, reopen the selected questions."""
    if not request.user.has_perm(STAFF_ACTION_PERMISSION):
        raise PermissionDenied
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = ""
    back = back or reverse("agent_admin:attention")
    action = request.POST.get("bulk_action", "")
    ids = [int(pk) for pk in request.POST.getlist("question") if pk.isdigit()]
    if action not in ATTENTION_BULK_ACTIONS or not ids:
        messages.error(request, "질문과 조치를 고르세요.")
        return redirect(back)
    changes = {
        "take": {"owner": request.user},
        "release": {"owner": None},
        "done": {"state": AttentionItem.State.DONE},
        "reopen": {"state": AttentionItem.State.OPEN},
    }
    if action == "assign":
        owner = _staff_users().filter(pk=request.POST.get("owner_id") or 0).first()
        if owner is None:
            messages.error(request, "배정할 담당자를 고르세요.")
            return redirect(back)
        changes["assign"] = {"owner": owner}
    change = {"owner": UNCHANGED, **changes[action]}
    changed = attention_update(question_ids=ids, actor=request.user, **change)
    messages.success(request, f"{ATTENTION_BULK_ACTIONS[action]}: 질문 {changed}건을 바꿨습니다.")
    return redirect(back)


def room_assign_view(request, room_id):
    """Assign a blocked or unresolved room to a vendor (its resolution candidates with their scores as buttons, or
    any vendor by code) and have the room's blocked questions answered again."""
    if not request.user.has_perm("conversations.change_room"):
        raise PermissionDenied
    room = get_object_or_404(Room.objects.select_related("vendor"), pk=room_id)
    blocked = list(room.questions.filter(status=Question.Status.BLOCKED).order_by("-created_at", "-pk")[:50])
    if request.method == "POST":
        # A candidate's button sends its `vendor_code`; the typed code's button (the form's first, so Enter in the
        # field presses it) sends `use_typed`.
        field = "vendor_code_typed" if request.POST.get("use_typed") else "vendor_code"
        code = request.POST.get(field, "").strip()
        vendor = Vendor.objects.filter(code=code, is_active=True).first()
        if vendor is None:
            messages.error(request, "그 코드의 사용 중인 벤더가 없습니다.")
            return redirect(request.get_full_path())
        try:
            room = room_vendor_assign(room=room, vendor=vendor, actor=request.user)
        except RoomAssignmentInvalid as error:
            messages.error(request, str(error))
            return redirect(request.get_full_path())
        messages.success(request, f"방 '{room.name}'을(를) ({vendor.code}) {vendor.name}에 지정했습니다.")
        chosen = {int(pk) for pk in request.POST.getlist("reanswer") if pk.isdigit()}
        reanswered = 0
        if chosen and request.user.has_perm(STAFF_ACTION_PERMISSION):
            for question in blocked:
                if question.pk in chosen:
                    try:
                        question_reanswer(question=question, actor=request.user)
                    except QuestionNotActionable as error:
                        messages.error(request, f"질문 #{question.pk}: {error}")
                    else:
                        reanswered += 1
        if reanswered:
            messages.success(request, f"차단된 질문 {reanswered}건을 다시 답변하도록 넘겼습니다.")
        question_id = request.GET.get("question", "")
        if question_id.isdigit():
            return redirect("admin:conversations_question_change", int(question_id))
        return redirect("agent_admin:attention")
    wanted = request.GET.get("question", "")
    context = {
        **admin.site.each_context(request),
        "opts": Room._meta,
        "title": f"방 벤더 지정: {room.name}",
        "room": room,
        "reason": REASON_LABELS.get(room.resolution_reason, room.resolution_reason),
        "candidates": [{**c, "score_text": f"{c['score']:.0%}"} for c in room.resolution_candidates],
        "blocked": [
            {
                "question": q,
                "reason": reason_label(q.outcome_reason),
                "checked": not wanted or str(q.pk) == wanted,
            }
            for q in blocked
        ],
        "can_reanswer": request.user.has_perm(STAFF_ACTION_PERMISSION),
    }
    return TemplateResponse(request, "admin/agent/question/room_assign.html", context)


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


def violation_questions_url(window: StatisticsWindow, kind: str) -> str:
    """The question list of one violation bar: the questions whose runs of the window found that kind (by when
    the run started, as the bar counts, not when the question was asked)."""
    query = {
        "violation_kind": kind,
        "violation_start": window.first_day.isoformat(),
        "violation_end": window.last_day.isoformat(),
        **({"vendor__id__exact": window.vendor_id} if window.vendor_id is not None else {}),
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
        "violations": [
            {**row, "link": violation_questions_url(window, row["kind"])}
            for row in statistics_violations_by_kind(window=window)
        ],
        "frequent": [
            {**row, "link": question_list_url(window, q=row["text"])}
            for row in statistics_frequent_questions(window=window)
        ],
        "unanswered": [_with_reason_label(question) for question in statistics_unanswered_questions()],
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


def _with_reason_label(question):
    question.reason_label = reason_label(question.outcome_reason)
    return question


app_name = "agent_admin"
urlpatterns = [
    path("attention/", admin.site.admin_view(attention_view), name="attention"),
    path("attention/bulk/", admin.site.admin_view(attention_bulk_view), name="attention_bulk"),
    path("rooms/<int:room_id>/assign/", admin.site.admin_view(room_assign_view), name="room_assign"),
    path("statistics/", admin.site.admin_view(statistics_view), name="statistics"),
]
