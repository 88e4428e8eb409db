"""Reads of the agent: the room context a question is answered in, and what staff look at."""

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Aggregate, Count, Exists, FloatField, OuterRef, Q, QuerySet, Subquery
from django.db.models.expressions import RawSQL
from django.utils import timezone

from agent.models import (
    ActionRequest,
    AnswerReview,
    AnswerRun,
    AttentionItem,
    DraftRound,
    KnowledgeWorkspace,
    RunEvidence,
    ToolCallRecord,
)
from agent.verification.kinds import UNKNOWN_KIND
from conversations.models import Question
from conversations.selectors import (
    question_counts_by_day,
    question_ids_untouched,
    question_ids_without,
    question_texts_counted,
    questions_all,
    questions_count_between,
    questions_created_between,
    questions_newest_without,
    room_messages_before,
)
from delivery.selectors import device_names, send_job_history, send_jobs_for_question, send_jobs_unsent_count
from monitoring.business_hours import business_seconds_between
from monitoring.selectors import alerts_open_count, liveness_markers_for_question
from vendors.selectors import vendor_id_names

if TYPE_CHECKING:
    from conversations.models import Message
    from delivery.models import SendJob
    from monitoring.models import AuditEvent, LivenessMarker


def room_history(*, room, before: "Message") -> list[dict]:
    """The room's recent messages before the question, oldest first, within the count and age limits."""
    since = before.sent_at - timedelta(hours=settings.AGENT_HISTORY_HOURS)
    recent = room_messages_before(room=room, before=before, since=since, limit=settings.AGENT_HISTORY_LIMIT)
    return [
        {
            "role": "assistant" if message.sent_by_me else "user",
            "sender": message.sender_name,
            "text": message.text,
            "sent_at": message.sent_at.isoformat(),
        }
        for message in reversed(recent)
    ]


# --- the sweep: questions whose run was lost ---


def questions_dispatch_lost(*, untouched_since: datetime, limit: int) -> list[int]:
    """Accepted questions nothing has touched since `untouched_since` (their dispatch was lost), oldest id first."""
    return question_ids_untouched(status=Question.Status.ACCEPTED, untouched_since=untouched_since, limit=limit)


def questions_lease_lapsed(*, now: datetime, limit: int) -> list[int]:
    """Running questions without an open run whose lease is still live at `now` (its worker died), oldest first."""
    live_lease = AnswerRun.objects.filter(question=OuterRef("pk"), finished_at__isnull=True, lease_expires_at__gt=now)
    return question_ids_without(status=Question.Status.RUNNING, exists=Exists(live_lease), limit=limit)


# --- staff views: the question audit page, the needs-attention list, statistics ---

# Outcomes whose answer staff may still approve and send (mirrors `answer_approve`).
APPROVABLE_OUTCOMES = (Question.Status.ANSWERED, Question.Status.HELD, Question.Status.NO_EVIDENCE)
# Blocked: the room had no vendor, so no answer was attempted; staff assign the room and have it answered.
ATTENTION_STATUSES = (
    Question.Status.HELD,
    Question.Status.NO_EVIDENCE,
    Question.Status.FAILED,
    Question.Status.BLOCKED,
)
# The reasons a question is on the attention list, as the list filters them.
ATTENTION_REASONS = {
    "held": "보류",
    "no_evidence": "근거 없음",
    "failed": "실패",
    "blocked": "차단 (방 벤더 미확정)",
    "awaiting_review": "승인 대기",
    "marked_wrong": "오답 표시",
    "handoff_removed": "사람 연결 문장 제거",
    "actions_pending": "실행하지 않은 동작 요청",
}
# The "past the SLA" filter measures at most this many of the oldest candidates in business time.
ATTENTION_SLA_SCAN_LIMIT = 5000
# Questions nobody answered: ended without a sent answer for one of these reasons (statistics).
UNANSWERED_STATUSES = (
    Question.Status.HELD,
    Question.Status.NO_EVIDENCE,
    Question.Status.BLOCKED,
    Question.Status.FAILED,
)
DAILY_STATUSES = (
    Question.Status.ANSWERED,
    Question.Status.HELD,
    Question.Status.BLOCKED,
    Question.Status.NO_EVIDENCE,
    Question.Status.FAILED,
)
EVIDENCE_SOURCE_KINDS = ("record", "hub", "faq")
# Runs that went through the pipeline; blocked rooms and crashed runs record no latency.
TIMED_OUTCOMES = APPROVABLE_OUTCOMES
# The business day is Seoul's, whatever the server's zone.
STATISTICS_TIMEZONE = ZoneInfo("Asia/Seoul")
# The Python percentile path reads at most this many of the newest runs.
LATENCY_SAMPLE_LIMIT = 100_000
_NOT_WORD = re.compile(r"[\W_]+")


def questions_annotated(queryset: QuerySet[Question] | None = None) -> QuerySet[Question]:
    """Questions with their latest run's outcome, latency and answer send state, and their staff-review flags."""
    queryset = questions_all() if queryset is None else queryset
    latest_run = AnswerRun.objects.filter(question=OuterRef("pk")).order_by("-attempt")
    return queryset.select_related("room", "vendor").annotate(
        latest_outcome=Subquery(latest_run.values("outcome")[:1]),
        latest_latency_ms=Subquery(latest_run.values("latency_ms")[:1]),
        send_state=Subquery(latest_run.values("send_job__state")[:1]),
        awaiting_review=Exists(
            AnswerRun.objects.filter(question=OuterRef("pk"), awaiting_review=True, send_job__isnull=True)
        ),
        marked_wrong=Exists(
            AnswerReview.objects.filter(question=OuterRef("pk"), action=AnswerReview.Action.MARK_WRONG)
        ),
        handoff_removed=Subquery(latest_run.values("handoff_removed")[:1]),
        actions_pending=Exists(
            ActionRequest.objects.filter(question=OuterRef("pk"), status=ActionRequest.Status.PENDING)
        ),
    )


def questions_needing_attention() -> QuerySet[Question]:
    """Every question staff must look at, newest first: ended held, no evidence, blocked (its room has no vendor)
    or failed, its answer marked wrong, an answer waiting for approval, a sentence handing the vendor to a person
    removed from its answer, or an action request not run. Annotated with the latest wrong-mark reason and staff
    action; its work-queue row (owner, state) selected."""
    reviews = AnswerReview.objects.filter(question=OuterRef("pk")).order_by("-created_at", "-pk")
    # `pk IN (…)` rather than the EXISTS annotations: under OR, PostgreSQL hashes an IN list once but runs an
    # EXISTS per question.
    marked_wrong = AnswerReview.objects.filter(action=AnswerReview.Action.MARK_WRONG).values("question_id")
    awaiting = AnswerRun.objects.filter(awaiting_review=True, send_job__isnull=True).values("question_id")
    handed_off = AnswerRun.objects.filter(handoff_removed=True).values("question_id")
    actions_pending = ActionRequest.objects.filter(status=ActionRequest.Status.PENDING).values("question_id")
    return (
        questions_annotated()
        .filter(
            Q(status__in=ATTENTION_STATUSES)
            | Q(pk__in=marked_wrong)
            | Q(pk__in=awaiting)
            | Q(pk__in=handed_off)
            | Q(pk__in=actions_pending)
        )
        .annotate(
            marked_wrong_reason=Subquery(reviews.filter(action=AnswerReview.Action.MARK_WRONG).values("reason")[:1]),
            latest_review_action=Subquery(reviews.values("action")[:1]),
        )
        .select_related("attention__owner")
        .order_by("-created_at", "-pk")
    )


def reviews_marked_wrong(review_ids: list[int] | None = None) -> QuerySet[AnswerReview]:
    """Every wrong mark by staff (or the ones given), oldest first, with the question, its room and message."""
    reviews = AnswerReview.objects.filter(action=AnswerReview.Action.MARK_WRONG)
    if review_ids is not None:
        reviews = reviews.filter(pk__in=review_ids)
    return reviews.select_related("question__room", "question__message", "run", "actor").order_by("created_at", "pk")


def staff_correction_text(question: Question) -> str:
    """The text of the latest correction staff sent after the question's answer, or ""."""
    return (
        AnswerReview.objects.filter(question=question, action=AnswerReview.Action.CORRECT)
        .order_by("-created_at", "-pk")
        .values_list("text", flat=True)
        .first()
        or ""
    )


def action_requests_for_run(run: AnswerRun | None) -> list[ActionRequest]:
    """The action requests the model made in `run`, in order, with their send jobs."""
    if run is None:
        return []
    return list(run.action_requests.select_related("send_job").order_by("position"))


@dataclass(frozen=True)
class AttentionFilters:
    """The work queue's filters: `state` open | done | "" (all); `owner` "me" | "none" | a user id | "" (anyone);
    `vendor` a vendor id | "none" | ""; `reason` a key of ATTENTION_REASONS | ""; `age_hours` accepted at least
    that long ago; `over_sla` waiting longer than the SLA in business time."""

    state: str = AttentionItem.State.OPEN
    owner: str = ""
    vendor: str = ""
    reason: str = ""
    age_hours: int | None = None
    over_sla: bool = False


def attention_queue(filters: AttentionFilters, *, user, now: datetime | None = None) -> QuerySet[Question]:
    """`questions_needing_attention` narrowed by the filters."""
    now = now or timezone.now()
    queryset = questions_needing_attention()
    if filters.state == AttentionItem.State.OPEN:
        queryset = queryset.filter(Q(attention__isnull=True) | Q(attention__state=AttentionItem.State.OPEN))
    elif filters.state == AttentionItem.State.DONE:
        queryset = queryset.filter(attention__state=AttentionItem.State.DONE)
    if filters.owner == "me":
        queryset = queryset.filter(attention__owner=user)
    elif filters.owner == "none":
        queryset = queryset.filter(Q(attention__isnull=True) | Q(attention__owner__isnull=True))
    elif filters.owner.isdigit():
        queryset = queryset.filter(attention__owner_id=int(filters.owner))
    if filters.vendor == "none":
        queryset = queryset.filter(vendor__isnull=True)
    elif filters.vendor.isdigit():
        queryset = queryset.filter(vendor_id=int(filters.vendor))
    queryset = _attention_reason_filter(queryset, filters.reason)
    if filters.age_hours:
        queryset = queryset.filter(created_at__lte=now - timedelta(hours=filters.age_hours))
    if filters.over_sla:
        sla = settings.ATTENTION_SLA_BUSINESS_MINUTES * 60
        # Business time never runs faster than the clock: only questions older than the SLA can be past it.
        candidates = queryset.filter(created_at__lte=now - timedelta(seconds=sla)).order_by("created_at", "pk")
        over = [
            pk
            for pk, created_at in candidates.values_list("pk", "created_at")[:ATTENTION_SLA_SCAN_LIMIT]
            if business_seconds_between(created_at, now, at_most=sla) > sla
        ]
        queryset = queryset.filter(pk__in=over)
    return queryset


def _attention_reason_filter(queryset: QuerySet[Question], reason: str) -> QuerySet[Question]:
    if reason in ("held", "no_evidence", "failed", "blocked"):
        return queryset.filter(status=reason)
    if reason == "awaiting_review":
        return queryset.filter(
            pk__in=AnswerRun.objects.filter(awaiting_review=True, send_job__isnull=True).values("question_id")
        )
    if reason == "marked_wrong":
        return queryset.filter(
            pk__in=AnswerReview.objects.filter(action=AnswerReview.Action.MARK_WRONG).values("question_id")
        )
    if reason == "handoff_removed":
        return queryset.filter(pk__in=AnswerRun.objects.filter(handoff_removed=True).values("question_id"))
    if reason == "actions_pending":
        return queryset.filter(
            pk__in=ActionRequest.objects.filter(status=ActionRequest.Status.PENDING).values("question_id")
        )
    return queryset


def attention_vendors() -> list[tuple[int, str]]:
    """The vendors of questions on the attention list (for its filter), by name."""
    ids = questions_needing_attention().order_by().exclude(vendor__isnull=True).values("vendor_id")
    return vendor_id_names(ids, limit=500)


def staff_counts() -> dict[str, int]:
    """The admin index's three numbers: open items of the attention list, open alerts (not
    yet acknowledged), and send jobs not (yet) delivered — waiting, on their way, failed or of unknown state."""
    return {
        "attention": attention_queue(AttentionFilters(), user=None).count(),
        "alerts": alerts_open_count(),
        "unsent": send_jobs_unsent_count(),
    }


def answer_run_awaiting_approval(*, question: Question) -> AnswerRun | None:
    """The latest run when its answer was not sent and may still be approved by staff, else None."""
    run = question.runs.order_by("-attempt").first()
    if run is None or run.send_job_id is not None or run.outcome not in APPROVABLE_OUTCOMES:
        return None
    return run


@dataclass
class SendJobAudit:
    job: "SendJob"
    history: list["AuditEvent"]


@dataclass
class QuestionAudit:
    """Everything the question page shows, for one selected run (the latest by default)."""

    question: Question
    runs: list[AnswerRun]
    run: AnswerRun | None
    evidence: list[RunEvidence]
    rounds: list[DraftRound]
    tool_calls: list[ToolCallRecord]
    send_jobs: list[SendJobAudit]
    markers: list["LivenessMarker"]
    reviews: list[AnswerReview]
    approvable_run: AnswerRun | None
    # Names staff know things by: sender devices (by id, as audit rows name them) and hub workspaces (by slug).
    device_names: dict[str, str]
    workspace_titles: dict[str, str]


def question_audit(*, question: Question, run_id: int | None = None) -> QuestionAudit:
    runs = list(question.runs.select_related("send_job").order_by("-attempt"))
    run = next((r for r in runs if r.pk == run_id), None) if run_id is not None else None
    run = run or (runs[0] if runs else None)
    jobs = send_jobs_for_question(question=question).prefetch_related("items")
    send_jobs = [SendJobAudit(job=job, history=list(send_job_history(job=job))) for job in jobs]
    evidence = list(run.evidence.order_by("round", "position")) if run else []
    device_ids = {event.actor_id for item in send_jobs for event in item.history if event.actor_kind == "device"}
    device_ids |= {str(item.job.claimed_by_id) for item in send_jobs if item.job.claimed_by_id}
    slugs = {item.workspace for item in evidence if item.workspace}
    return QuestionAudit(
        question=question,
        runs=runs,
        run=run,
        evidence=evidence,
        rounds=list(run.rounds.order_by("number")) if run else [],
        tool_calls=list(run.tool_calls.order_by("round", "position")) if run else [],
        send_jobs=send_jobs,
        markers=list(liveness_markers_for_question(question=question)),
        reviews=list(question.reviews.select_related("actor").order_by("created_at", "pk")),
        approvable_run=answer_run_awaiting_approval(question=question),
        device_names=device_names(device_ids=device_ids),
        workspace_titles=dict(KnowledgeWorkspace.objects.filter(slug__in=slugs).values_list("slug", "title"))
        if slugs
        else {},
    )


@dataclass(frozen=True)
class StatisticsWindow:
    """The days (Seoul dates, both ends included) and optionally the one vendor the statistics count."""

    first_day: date
    last_day: date
    vendor_id: int | None = None

    @classmethod
    def last_days(cls, days: int, *, now: datetime | None = None, vendor_id: int | None = None):
        today = timezone.localtime(now or timezone.now(), STATISTICS_TIMEZONE).date()
        return cls(first_day=today - timedelta(days=days - 1), last_day=today, vendor_id=vendor_id)

    @property
    def start(self) -> datetime:
        return datetime.combine(self.first_day, time.min, tzinfo=STATISTICS_TIMEZONE)

    @property
    def end(self) -> datetime:
        """Midnight after the last day (exclusive)."""
        return datetime.combine(self.last_day + timedelta(days=1), time.min, tzinfo=STATISTICS_TIMEZONE)

    @property
    def days(self) -> int:
        return (self.last_day - self.first_day).days + 1

    def question_range(self) -> dict:
        """The window as the keyword arguments of conversations' `questions_…_between` selectors."""
        return {"start": self.start, "end": self.end, "vendor_id": self.vendor_id}

    def questions(self) -> QuerySet[Question]:
        """The window's questions, for a read that joins agent's own rows to them."""
        return questions_created_between(**self.question_range())

    def run_filter(self, prefix: str = "") -> Q:
        """The window's runs, as a filter on `AnswerRun` (or through `prefix`, e.g. `run__`, on a related model)."""
        condition = Q(**{f"{prefix}started_at__gte": self.start, f"{prefix}started_at__lt": self.end})
        if self.vendor_id is not None:
            condition &= Q(**{f"{prefix}question__vendor_id": self.vendor_id})
        return condition


def _window(days: int, now: datetime | None, window: StatisticsWindow | None) -> StatisticsWindow:
    return window or StatisticsWindow.last_days(days, now=now)


def statistics_window_start(*, days: int, now: datetime | None = None) -> datetime:
    """Midnight (Seoul) of the first of the last `days` days, today included."""
    return StatisticsWindow.last_days(days, now=now).start


def statistics_daily(*, days: int = 14, now: datetime | None = None, window: StatisticsWindow | None = None) -> list:
    """Per Seoul day, oldest first, every day present: questions asked (`total`) and how many ended in each
    terminal status (keys are the status values)."""
    window = _window(days, now, window)
    counts = question_counts_by_day(**window.question_range(), statuses=DAILY_STATUSES, tz=STATISTICS_TIMEZONE)
    empty = {"total": 0, **dict.fromkeys(DAILY_STATUSES, 0)}
    rows = []
    for offset in range(window.days):
        day = window.first_day + timedelta(days=offset)
        row = counts.get(day, empty)
        rows.append({"day": day, "total": row["total"], **{status: row[status] for status in DAILY_STATUSES}})
    return rows


def statistics_violations_by_kind(
    *, days: int = 14, now: datetime | None = None, window: StatisticsWindow | None = None
) -> list[dict]:
    """Violations the verification found in every draft round of the window's runs, by kind, most first (then by
    kind): `{"kind", "count", "runs", "questions"}` (`runs` and `questions`: how many runs and questions had at
    least one; `questions_with_violation_kind` lists those questions). PostgreSQL unnests the JSON lists itself;
    elsewhere Python reads the non-empty lists."""
    window = _window(days, now, window)
    if connection.vendor == "postgresql":
        return _violations_by_kind_postgresql(window)
    return violations_by_kind_python(window.start, window=window)


def _violation_items_sql(window: StatisticsWindow | None, *, kind: str | None = None) -> tuple[str, list]:
    """The FROM (and WHERE) of every violation in the draft rounds of the window's runs (all runs without one; of
    `kind` only when given), one row per violation as `item` with its `draft` round and `answer_run` (`id`,
    `question_id`): the counts by kind and the questions behind a kind read the same rows, so a bar and its list
    agree."""
    runs = AnswerRun.objects.order_by()
    if window is not None:
        # The window's runs as the ORM writes them for the other statistics (`run_filter`, which joins conversations'
        # question for the vendor), so this SQL names agent's tables only; the JSON unnesting has no ORM form.
        # PostgreSQL flattens the derived table: the plan is the old explicit join's.
        runs = runs.filter(window.run_filter())
    runs_sql, params = runs.values("id", "question_id").query.sql_with_params()
    sql = f"""
        FROM {DraftRound._meta.db_table} AS draft
        JOIN ({runs_sql}) AS answer_run ON answer_run.id = draft.run_id
        CROSS JOIN LATERAL jsonb_array_elements(
            CASE WHEN jsonb_typeof(draft.violations) = 'array' THEN draft.violations ELSE '[]'::jsonb END
        ) AS item
    """
    if kind is not None:
        sql += f"WHERE {_ITEM_KIND_SQL} = %s"
        params = (*params, kind)
    return sql, list(params)


# Like `_violation_kind`: a missing, null or empty kind is the unknown one.
_ITEM_KIND_SQL = f"COALESCE(NULLIF(item->>'kind', ''), '{UNKNOWN_KIND}')"


def _violations_by_kind_postgresql(window: StatisticsWindow) -> list[dict]:
    items, params = _violation_items_sql(window)
    sql = f"""
        SELECT {_ITEM_KIND_SQL} AS kind, COUNT(*), COUNT(DISTINCT draft.run_id), COUNT(DISTINCT answer_run.question_id)
        {items}
        GROUP BY 1
        ORDER BY 2 DESC, 1
    """
    with transaction.atomic(), connection.cursor() as cursor:
        # The planner guesses 100 elements per list, so the estimate passes the JIT threshold and compiling
        # would take several times longer than the query itself.
        cursor.execute("SET LOCAL jit = off")
        cursor.execute(sql, params)
        return [
            {"kind": kind, "count": count, "runs": runs, "questions": questions}
            for kind, count, runs, questions in cursor.fetchall()
        ]


def _violation_kind(violation) -> str:
    kind = violation.get("kind") if isinstance(violation, dict) else None
    return kind or UNKNOWN_KIND


def _rounds_with_violations(runs: Q):
    """(run, question, violations) of the draft rounds of `runs` (a filter through `run__`) that found any."""
    rounds = DraftRound.objects.filter(runs).exclude(violations=[]).order_by()
    return rounds.values_list("run_id", "run__question_id", "violations").iterator(chunk_size=2000)


def violations_by_kind_python(start: datetime, *, window: StatisticsWindow | None = None) -> list[dict]:
    """The portable path of `statistics_violations_by_kind` (public so tests can hold both to the same data):
    the runs since `start`, or those of `window`."""
    counts: Counter = Counter()
    runs_by_kind: dict[str, set] = defaultdict(set)
    questions_by_kind: dict[str, set] = defaultdict(set)
    runs = window.run_filter("run__") if window else Q(run__started_at__gte=start)
    for run_id, question_id, violations in _rounds_with_violations(runs):
        for violation in violations if isinstance(violations, list) else ():
            kind = _violation_kind(violation)
            counts[kind] += 1
            runs_by_kind[kind].add(run_id)
            questions_by_kind[kind].add(question_id)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [
        {"kind": kind, "count": count, "runs": len(runs_by_kind[kind]), "questions": len(questions_by_kind[kind])}
        for kind, count in ordered
    ]


def questions_with_violation_kind(
    queryset: QuerySet[Question], kind: str, *, window: StatisticsWindow | None = None
) -> QuerySet[Question]:
    """The questions of `queryset` with a violation of `kind` in a draft round of one of their runs (of the
    window's runs when given): exactly the questions a bar of `statistics_violations_by_kind` counts."""
    if connection.vendor != "postgresql":
        return questions_with_violation_kind_python(queryset, kind, window=window)
    items, params = _violation_items_sql(window, kind=kind)
    return queryset.filter(pk__in=RawSQL(f"SELECT DISTINCT answer_run.question_id {items}", params))


def questions_with_violation_kind_python(
    queryset: QuerySet[Question], kind: str, *, window: StatisticsWindow | None = None
) -> QuerySet[Question]:
    """The portable path of `questions_with_violation_kind` (public so tests can hold both to the same data)."""
    runs = window.run_filter("run__") if window else Q()
    question_ids = {
        question_id
        for _, question_id, violations in _rounds_with_violations(runs)
        if isinstance(violations, list) and any(_violation_kind(violation) == kind for violation in violations)
    }
    return queryset.filter(pk__in=question_ids)


def question_text_key(text: str) -> str:
    """What makes two questions "the same" for counting: case, width, spacing and punctuation ignored."""
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


def statistics_frequent_questions(
    *, days: int = 14, limit: int = 10, now: datetime | None = None, window: StatisticsWindow | None = None
) -> list[dict]:
    """The most asked questions of the window by normalised text: `{"text" (newest wording), "count"}`, most first.

    The database counts identical texts first, so Python normalises each distinct wording once."""
    window = _window(days, now, window)
    counts: Counter = Counter()
    newest: dict[str, tuple[datetime, str]] = {}
    for text, asked, last_asked in question_texts_counted(**window.question_range()):
        key = question_text_key(text)
        if key:
            counts[key] += asked
            if key not in newest or last_asked > newest[key][0]:
                newest[key] = (last_asked, text.strip())
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [{"text": newest[key][1], "count": count} for key, count in ordered]


def statistics_unanswered_questions(*, limit: int = 10) -> list[Question]:
    """The latest questions nobody answered, newest first: held, no evidence, blocked or failed, and no answer sent
    for them since (a staff approval sends one)."""
    sent = AnswerRun.objects.filter(question=OuterRef("pk"), send_job__isnull=False)
    return questions_newest_without(statuses=UNANSWERED_STATUSES, exists=Exists(sent), limit=limit)


def statistics_source_split(
    *, days: int = 14, now: datetime | None = None, window: StatisticsWindow | None = None
) -> list[dict]:
    """Evidence items given to the model in the window by source: `{"source_kind", "items", "runs"}`, the three
    known sources always present (record, hub, faq), any other kind after them."""
    window = _window(days, now, window)
    rows = {
        row["source_kind"]: row
        for row in RunEvidence.objects.filter(window.run_filter("run__"))
        .order_by()
        .values("source_kind")
        .annotate(items=Count("pk"), runs=Count("run", distinct=True))
    }
    kinds = [*EVIDENCE_SOURCE_KINDS, *sorted(set(rows) - set(EVIDENCE_SOURCE_KINDS))]
    return [
        {"source_kind": kind, "items": rows.get(kind, {}).get("items", 0), "runs": rows.get(kind, {}).get("runs", 0)}
        for kind in kinds
    ]


def statistics_rates(*, window: StatisticsWindow) -> dict:
    """How much the agent did alone and how often staff stepped in, over the window's questions:

    - `automation`: answered questions that reached the room with no staff review at all, per question asked;
    - `override`: staff sends that overrode the verification, per staff send (approve or override);
    - `marked_wrong`: answered questions staff marked wrong, per answered question.

    Each rate is a fraction (None when its denominator is 0) with its numerator and denominator."""
    questions = window.questions()
    reviews = AnswerReview.objects.filter(question__in=questions)
    answered = questions.filter(status=Question.Status.ANSWERED)
    counts = {
        "asked": questions_count_between(**window.question_range()),
        "automatic": answered.exclude(Exists(AnswerReview.objects.filter(question=OuterRef("pk")))).count(),
        "answered": questions_count_between(**window.question_range(), status=Question.Status.ANSWERED),
        "staff_sends": reviews.filter(action__in=[AnswerReview.Action.APPROVE, AnswerReview.Action.OVERRIDE]).count(),
        "overrides": reviews.filter(action=AnswerReview.Action.OVERRIDE).count(),
        "marked_wrong": answered.filter(
            Exists(AnswerReview.objects.filter(question=OuterRef("pk"), action=AnswerReview.Action.MARK_WRONG))
        ).count(),
    }

    def rate(numerator: str, denominator: str) -> dict:
        top, bottom = counts[numerator], counts[denominator]
        return {"rate": top / bottom if bottom else None, "count": top, "of": bottom}

    return {
        "automation": rate("automatic", "asked"),
        "override": rate("overrides", "staff_sends"),
        "marked_wrong": rate("marked_wrong", "answered"),
    }


class _PercentileCont(Aggregate):
    function = "PERCENTILE_CONT"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


def statistics_latency_percentiles(
    *, days: int = 14, now: datetime | None = None, window: StatisticsWindow | None = None
) -> dict:
    """p50 / p95 of run latency over the window's runs that went through the pipeline: `{"count", "p50", "p95"}`
    in ms to one decimal (None without runs). PostgreSQL computes them; elsewhere Python does, over at most
    `LATENCY_SAMPLE_LIMIT` of the newest runs. Both interpolate linearly (`percentile_cont`)."""
    runs = AnswerRun.objects.filter(_window(days, now, window).run_filter(), outcome__in=TIMED_OUTCOMES).order_by()
    if connection.vendor == "postgresql":
        row = runs.aggregate(
            count=Count("pk"),
            p50=_PercentileCont("latency_ms", fraction=0.5),
            p95=_PercentileCont("latency_ms", fraction=0.95),
        )
        return {"count": row["count"], "p50": _ms(row["p50"]), "p95": _ms(row["p95"])}
    return latency_percentiles_python(runs)


def latency_percentiles_python(runs: QuerySet[AnswerRun]) -> dict:
    """The portable path of `statistics_latency_percentiles` (public so tests can hold both to the same data)."""
    values = sorted(runs.order_by("-started_at").values_list("latency_ms", flat=True)[:LATENCY_SAMPLE_LIMIT])
    return {"count": len(values), "p50": _ms(percentile(values, 0.5)), "p95": _ms(percentile(values, 0.95))}


def percentile(sorted_values: list, fraction: float) -> float | None:
    """Linear interpolation between closest ranks, as PostgreSQL's `percentile_cont`."""
    if not sorted_values:
        return None
    position = fraction * (len(sorted_values) - 1)
    lower = int(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    return float(sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * (position - lower))


def _ms(value: float | None) -> float | None:
    # A tenth of a millisecond is all the precision a latency figure has; it also evens out float noise.
    return None if value is None else round(value, 1)
