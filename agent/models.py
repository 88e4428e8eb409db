# --- FAQ store (embeddings/FAQ engineer) ---
import uuid

from django.conf import settings
from django.db import models


class FaqEntry(models.Model):
    """One FAQ question and answer. The database is the source of truth; the Qdrant index is rebuilt from it."""

    class Status(models.TextChoices):
        ACTIVE = "active", "사용"
        RETIRED = "retired", "폐기"

    question = models.TextField("질문")
    answer = models.TextField("답변")
    # sha256 of the normalised question: how a repeated question is recognised (see faq_services.question_key).
    question_key = models.CharField("질문 키", max_length=64, db_index=True, editable=False)
    category = models.CharField("분류", max_length=100, blank=True, db_index=True)
    url = models.URLField("링크(URL)", max_length=500, blank=True)
    source = models.CharField("출처", max_length=100, blank=True)
    source_id = models.CharField("출처 ID", max_length=200, blank=True)
    source_created_at = models.DateTimeField("원본 작성 시각")
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.ACTIVE, db_index=True)
    replaced_by = models.ForeignKey(
        "self", verbose_name="대체 항목", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces"
    )
    # Character bigrams of question and answer (agent.knowledge.embeddings.text_bigrams), kept by every writer in
    # agent.knowledge.faq_services: the keyword retry's index on PostgreSQL (GIN, migration 0007).
    search_bigrams = models.JSONField("검색 바이그램", default=list, blank=True, editable=False)
    point_id = models.UUIDField("색인 포인트 ID", default=uuid.uuid4, unique=True, editable=False)
    # Null until the Qdrant write after commit succeeds; `rebuild_faq_index` heals entries left unindexed.
    indexed_at = models.DateTimeField("색인 시각", null=True, blank=True, editable=False)
    created_at = models.DateTimeField("생성", auto_now_add=True)
    updated_at = models.DateTimeField("수정", auto_now=True)

    class Meta:
        ordering = ["-id"]
        verbose_name = "FAQ 항목"
        verbose_name_plural = "FAQ 항목"
        constraints = [
            models.UniqueConstraint(
                fields=["question_key"], condition=models.Q(status="active"), name="faq_one_active_per_question"
            )
        ]

    def __str__(self):
        return self.question[:80]

    @property
    def passage(self) -> str:
        """The text reranked and shown as evidence."""
        return f"질문: {self.question}\n답변: {self.answer}"


class FaqVersion(models.Model):
    """A read-only snapshot of an entry taken at each change; kept when the entry itself is deleted."""

    class Reason(models.TextChoices):
        CREATED = "created", "생성"
        UPDATED = "updated", "수정"
        QUESTION_CHANGED = "question_changed", "질문 변경(새 항목)"
        SUPERSEDED = "superseded", "새 버전으로 교체"
        DELETED = "deleted", "삭제"

    class Origin(models.TextChoices):
        # A file row carries its own date (source_created_at); any other change is curation, dated when it
        # happened. The batch ingest lets a file row win only over versions older than it (faq_ingest_jsonl).
        FILE = "file", "파일 적재"
        CURATION = "curation", "큐레이션(직원 변경)"

    entry = models.ForeignKey(
        FaqEntry, verbose_name="FAQ 항목", null=True, on_delete=models.SET_NULL, related_name="versions"
    )
    entry_ref = models.PositiveBigIntegerField("FAQ 번호")  # survives deletion of the entry
    # The question's key (faq_services.question_key) at this version: a deleted or renamed question is still
    # known by its key, so a later file load can tell that staff removed it.
    question_key = models.CharField("질문 키", max_length=64, blank=True, editable=False)
    snapshot = models.JSONField("스냅숏")
    reason = models.CharField("사유", max_length=32, choices=Reason.choices)
    origin = models.CharField("변경 주체", max_length=16, choices=Origin.choices, default=Origin.CURATION)
    actor = models.CharField("작업자", max_length=150, blank=True)
    created_at = models.DateTimeField("시각", auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "FAQ 버전"
        verbose_name_plural = "FAQ 버전"
        indexes = [
            models.Index(fields=["entry_ref", "-created_at"], name="faqversion_entry_ref"),
            models.Index(fields=["question_key", "origin", "-created_at"], name="faqversion_question_key"),
        ]

    def __str__(self):
        return f"FAQ #{self.entry_ref} {self.get_reason_display()}"


# --- FAQ training uploads (a spreadsheet of Q/A rows, conflicts reviewed by staff) ---


class TrainingJob(models.Model):
    """One uploaded spreadsheet of FAQ rows. Rows without a similar FAQ are added at once; the others wait as
    conflicts for staff review. Status changes only through agent.knowledge.training.training_job_transition."""

    class Status(models.TextChoices):
        QUEUED = "queued", "대기"
        RUNNING = "running", "처리 중"
        REVIEW = "review", "검토 대기"
        DONE = "done", "완료"
        FAILED = "failed", "실패"

    file_name = models.CharField("파일명", max_length=255)
    file_sha256 = models.CharField("파일 해시", max_length=64)
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    rows_total = models.PositiveIntegerField("전체 행", default=0)
    rows_done = models.PositiveIntegerField("처리한 행", default=0)
    added_count = models.PositiveIntegerField("추가", default=0)
    conflict_count = models.PositiveIntegerField("충돌", default=0)
    skipped_count = models.PositiveIntegerField("건너뜀", default=0)
    failed_count = models.PositiveIntegerField("실패", default=0)
    error = models.TextField("오류", blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name="올린 직원", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField("올린 시각", auto_now_add=True)
    started_at = models.DateTimeField("시작 시각", null=True, blank=True)
    finished_at = models.DateTimeField("끝난 시각", null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "FAQ 학습 업로드"
        verbose_name_plural = "FAQ 학습 업로드"

    def __str__(self):
        return f"{self.file_name} (#{self.pk})"


class TrainingJobRow(models.Model):
    """One row of an uploaded spreadsheet and what became of it."""

    class Status(models.TextChoices):
        PENDING = "PENDING", "처리 전"
        ADDED = "ADDED", "추가됨"
        CONFLICT = "CONFLICT", "충돌(검토)"
        SKIPPED_DUPLICATE = "SKIPPED_DUPLICATE", "중복이라 건너뜀"
        SKIPPED_EMPTY = "SKIPPED_EMPTY", "빈 행이라 건너뜀"
        FAILED = "FAILED", "실패"

    job = models.ForeignKey(TrainingJob, verbose_name="업로드", on_delete=models.CASCADE, related_name="rows")
    row_number = models.PositiveIntegerField("행 번호")  # as the spreadsheet shows it (header is row 1)
    question = models.TextField("질문", blank=True)
    # faq_services.question_key of the question: finds a question repeated earlier in the same file.
    question_key = models.CharField("질문 키", max_length=64, blank=True, editable=False)
    answer = models.TextField("답변", blank=True)
    category = models.CharField("분류", max_length=200, blank=True)
    url = models.CharField("링크(URL)", max_length=1000, blank=True)
    source = models.CharField("출처", max_length=200, blank=True)
    status = models.CharField("결과", max_length=20, choices=Status.choices, default=Status.PENDING, db_index=True)
    reason = models.TextField("사유", blank=True)
    entry = models.ForeignKey(
        FaqEntry, verbose_name="추가된 FAQ", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["job", "row_number"]
        verbose_name = "FAQ 학습 행"
        verbose_name_plural = "FAQ 학습 행"
        constraints = [models.UniqueConstraint(fields=["job", "row_number"], name="training_row_unique_number")]
        indexes = [models.Index(fields=["job", "question_key"], name="training_row_question_key")]

    def __str__(self):
        return f"#{self.job_id} {self.row_number}행"


class TrainingConflict(models.Model):
    """A row whose question is the same as, or similar to, an existing FAQ: staff decide what to keep.

    Before an action deletes or changes the existing FAQ, the FAQ's version snapshot is kept (`snapshot_version`),
    and the review page can restore it."""

    class Match(models.TextChoices):
        SAME_QUESTION = "same_question", "같은 질문"
        SIMILAR = "similar", "비슷한 질문"

    class Status(models.TextChoices):
        OPEN = "open", "검토 대기"
        RESOLVED = "resolved", "처리됨"
        RESTORED = "restored", "되돌림"

    class Action(models.TextChoices):
        KEEP_EXISTING = "keep_existing", "기존 유지 (새 행 버림)"
        ADD_NEW = "add_new", "새 FAQ로 추가"
        UPDATE_EXISTING = "update_existing", "기존 FAQ 수정"
        REPLACE_EXISTING = "replace_existing", "기존 FAQ 삭제 후 새 FAQ로 교체"

    job = models.ForeignKey(TrainingJob, verbose_name="업로드", on_delete=models.CASCADE, related_name="conflicts")
    row = models.OneToOneField(TrainingJobRow, verbose_name="행", on_delete=models.CASCADE, related_name="conflict")
    existing = models.ForeignKey(
        FaqEntry, verbose_name="기존 FAQ", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    existing_snapshot = models.JSONField("기존 FAQ (발견 당시)", default=dict)
    match = models.CharField("일치 종류", max_length=16, choices=Match.choices)
    score = models.FloatField("유사도")
    candidates = models.JSONField("다른 후보", default=list, blank=True)  # [{"faq_id", "question", "score"}]
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.OPEN, db_index=True)
    action = models.CharField("조치", max_length=20, choices=Action.choices, blank=True)
    result_entry = models.ForeignKey(
        FaqEntry, verbose_name="결과 FAQ", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    snapshot_version = models.ForeignKey(
        FaqVersion, verbose_name="되돌릴 스냅숏", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name="처리한 직원", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField("처리 시각", null=True, blank=True)

    class Meta:
        ordering = ["job", "row__row_number"]
        verbose_name = "FAQ 학습 충돌"
        verbose_name_plural = "FAQ 학습 충돌"

    def __str__(self):
        return f"#{self.job_id} {self.row.row_number}행 ↔ FAQ #{self.existing_id}"


# --- LightRAG knowledge hub ---


class KnowledgeWorkspace(models.Model):
    """One LightRAG workspace of the knowledge hub (a sub-folder of `LIGHTRAG_WORKING_DIR` on the default storages).

    `revision` goes up with every committed hub write to the workspace: a process whose in-memory copy was loaded
    at an older revision reloads it before its next search (LightRAG's file storages never refresh on their own).
    """

    # The LightRAG workspace name and folder: fixed once created, so staff rename `title`, never this.
    slug = models.SlugField("슬러그", max_length=50, unique=True)
    title = models.CharField("이름", max_length=100)
    description = models.TextField("설명", blank=True)
    # Words that route a question to this workspace (see agent.knowledge.hub.workspaces_route).
    routing_keywords = models.JSONField("라우팅 키워드", default=list, blank=True)
    enabled = models.BooleanField("사용", default=True)
    revision = models.PositiveIntegerField("리비전", default=0, editable=False)
    updated_at = models.DateTimeField("수정 시각", auto_now=True)

    class Meta:
        ordering = ["id"]
        verbose_name = "지식 워크스페이스"
        verbose_name_plural = "지식 워크스페이스"

    def __str__(self):
        return f"{self.title} ({self.slug})"


class KnowledgeDocument(models.Model):
    """A text document ingested into one hub workspace. The row keeps the text, so it can be ingested again."""

    class Status(models.TextChoices):
        PENDING = "pending", "대기"
        INGESTED = "ingested", "반영됨"
        FAILED = "failed", "실패"
        RETIRED = "retired", "보관(검색 제외)"

    class Extractor(models.TextChoices):
        LOCAL = "local", "로컬 추출기"
        LLM = "llm", "LLM 추출"

    workspace = models.ForeignKey(
        KnowledgeWorkspace, verbose_name="워크스페이스", on_delete=models.PROTECT, related_name="documents"
    )
    title = models.CharField("제목", max_length=300)
    source = models.CharField("출처", max_length=200, blank=True)
    file_name = models.CharField("파일명", max_length=255, blank=True)
    content = models.TextField("본문")
    # Character bigrams of the text's words: on PostgreSQL a GIN index (migration 0016) finds the few documents that
    # can hold a word, for the hub's rare-noun lookup.
    search_bigrams = models.JSONField("검색 바이그램", default=list, blank=True, editable=False)
    sha256 = models.CharField("본문 해시", max_length=64, editable=False)
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    extractor = models.CharField("그래프 추출", max_length=16, choices=Extractor.choices, blank=True)
    error = models.TextField("오류", blank=True)
    chunk_count = models.PositiveIntegerField("청크 수", default=0)
    entity_count = models.PositiveIntegerField("엔터티 수", default=0)
    relation_count = models.PositiveIntegerField("관계 수", default=0)
    ingested_at = models.DateTimeField("반영 시각", null=True, blank=True)
    # LightRAG's ids of the chunks the last ingest wrote: what removing the document takes out of the hub.
    hub_chunk_ids = models.JSONField("청크 ID", default=list, blank=True, editable=False)
    # The common nouns this document adds to `KnowledgeTermCount` ([] while retired); null: not counted yet.
    counted_terms = models.JSONField("집계된 용어", null=True, blank=True, editable=False)
    created_at = models.DateTimeField("등록 시각", auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "지식 문서"
        verbose_name_plural = "지식 문서"
        constraints = [
            # The same text twice in one workspace is one document: ingesting it again reuses the row.
            models.UniqueConstraint(fields=["workspace", "sha256"], name="knowledge_document_unique_content")
        ]

    def __str__(self):
        return self.title

    @property
    def hub_doc_id(self) -> str:
        """The document's id inside LightRAG (chunk `full_doc_id`, file path prefix)."""
        return f"doc-{self.pk}"


class KnowledgeDocumentVersion(models.Model):
    """A read-only snapshot of a hub document after each change (text included); kept when the document is deleted,
    so a replaced or deleted text can be seen and restored."""

    class Reason(models.TextChoices):
        CREATED = "created", "등록"
        REPLACED = "replaced", "본문 교체"
        RETIRED = "retired", "보관(검색 제외)"
        RESTORED = "restored", "복원"
        DELETED = "deleted", "삭제"

    document = models.ForeignKey(
        KnowledgeDocument, verbose_name="지식 문서", null=True, on_delete=models.SET_NULL, related_name="versions"
    )
    document_ref = models.PositiveBigIntegerField("문서 ID")  # survives deletion of the document
    workspace_slug = models.SlugField("워크스페이스", max_length=50)
    reason = models.CharField("사유", max_length=32, choices=Reason.choices)
    title = models.CharField("제목", max_length=300)
    content = models.TextField("본문")
    sha256 = models.CharField("본문 해시", max_length=64)
    status = models.CharField("상태", max_length=16)
    actor = models.CharField("작업자", max_length=150, blank=True)
    created_at = models.DateTimeField("시각", auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "지식 문서 버전"
        verbose_name_plural = "지식 문서 버전"
        indexes = [models.Index(fields=["document_ref", "-created_at"], name="knowledgeversion_document_ref")]

    def __str__(self):
        return f"문서#{self.document_ref} {self.get_reason_display()}"


class KnowledgeTermCount(models.Model):
    """In how many hub documents (retired ones not counted) a common noun occurs. The local extractor makes entities
    only of nouns at least two documents share; each document's nouns are counted once, when its text or state
    changes, so an ingest never re-reads the other documents."""

    name = models.CharField("용어", max_length=100, unique=True)
    document_count = models.PositiveIntegerField("문서 수", default=0, db_index=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "지식 허브 용어 빈도"
        verbose_name_plural = "지식 허브 용어 빈도"

    def __str__(self):
        return f"{self.name} ({self.document_count})"


# --- answering: runs, evidence, draft rounds, tool calls, staff reviews ---


class AnswerRun(models.Model):
    """One attempt of the agent at one question, with everything staff need to see why each word is there.

    A run is open until `finished_at` is set. While open it holds a lease on its question (`lease_expires_at`),
    renewed by its worker's heartbeat; a run whose lease lapsed is closed by the sweep with an `error` and no
    `outcome`, and the question goes to a new run. A run closed by a transient error looks the same.
    """

    class Outcome(models.TextChoices):
        ANSWERED = "answered", "답변"
        HELD = "held", "보류"
        BLOCKED = "blocked", "차단"
        NO_EVIDENCE = "no_evidence", "근거 없음"
        FAILED = "failed", "실패"

    question = models.ForeignKey(
        "conversations.Question", verbose_name="질문", on_delete=models.CASCADE, related_name="runs"
    )
    attempt = models.PositiveIntegerField("시도", default=1)
    provider = models.CharField("LLM 제공자", max_length=32)
    model_name = models.CharField("모델", max_length=100, blank=True)
    room_kind = models.CharField("방 종류", max_length=16)
    history = models.JSONField("사용한 대화 이력", default=list, blank=True)
    search_query = models.TextField("검색어", blank=True)
    query_rewritten = models.BooleanField("검색어 재작성", default=False)
    tools_offered = models.JSONField("제공한 도구", default=list, blank=True)
    confirmed_actions = models.JSONField("확인된 동작", default=list, blank=True)
    outcome = models.CharField("결과", max_length=16, choices=Outcome.choices, blank=True)
    outcome_reason = models.CharField("결과 사유", max_length=200, blank=True)
    final_text = models.TextField("최종 답변", blank=True)
    awaiting_review = models.BooleanField("검토 대기", default=False)
    # A sentence handing the vendor to a person was removed from the answer: staff should look at the question.
    handoff_removed = models.BooleanField("사람 연결 문장 제거", default=False)
    prompt_tokens = models.PositiveIntegerField("입력 토큰", default=0)
    completion_tokens = models.PositiveIntegerField("출력 토큰", default=0)
    llm_calls = models.PositiveIntegerField("LLM 호출 수", default=0)
    latency_ms = models.PositiveIntegerField("소요(ms)", default=0)
    stage_ms = models.JSONField("단계별 소요(ms)", default=dict, blank=True)
    error = models.TextField("오류", blank=True)
    send_job = models.ForeignKey(
        "delivery.SendJob",
        verbose_name="발송 작업",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="answer_runs",
    )
    worker = models.CharField("작업자", max_length=200, blank=True)  # host:pid of the process that ran it
    lease_expires_at = models.DateTimeField("리스 만료", null=True, blank=True)
    started_at = models.DateTimeField("시작", auto_now_add=True)
    finished_at = models.DateTimeField("종료", null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]
        verbose_name = "답변 실행"
        verbose_name_plural = "답변 실행"
        constraints = [
            models.UniqueConstraint(fields=["question", "attempt"], name="answer_run_unique_attempt"),
            # A finished run holds no lease.
            models.CheckConstraint(
                name="answer_run_lease_only_while_open",
                condition=models.Q(finished_at__isnull=True) | models.Q(lease_expires_at__isnull=True),
            ),
        ]
        indexes = [models.Index(fields=["started_at"], name="answer_run_started")]

    def __str__(self):
        return f"질문 #{self.question_id} 시도 {self.attempt}: {self.get_outcome_display() or '진행 중'}"


class RunEvidence(models.Model):
    """An evidence item as the model saw it (already masked), in the order it was given."""

    run = models.ForeignKey(AnswerRun, verbose_name="답변 실행", on_delete=models.CASCADE, related_name="evidence")
    round = models.PositiveSmallIntegerField("라운드", default=0)
    position = models.PositiveSmallIntegerField("순서")
    source_kind = models.CharField("출처 종류", max_length=16)
    reference = models.CharField("참조", max_length=200)
    workspace = models.CharField("워크스페이스", max_length=64, blank=True)
    title = models.CharField("제목", max_length=300, blank=True)
    url = models.URLField("링크(URL)", max_length=500, blank=True)
    text = models.TextField("내용")
    score = models.FloatField("점수", default=0)
    mask_count = models.PositiveIntegerField("가린 벤더명 수", default=0)

    class Meta:
        ordering = ["run", "round", "position"]
        verbose_name = "근거"
        verbose_name_plural = "근거"

    def __str__(self):
        return self.reference


class DraftRound(models.Model):
    """One draft of the answer and what the verification engine found in it."""

    run = models.ForeignKey(AnswerRun, verbose_name="답변 실행", on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveSmallIntegerField("라운드")
    draft = models.TextField("초안", blank=True)
    violations = models.JSONField("위반", default=list, blank=True)
    removed = models.JSONField("제거한 문장", default=list, blank=True)
    clean_text = models.TextField("정리된 답변", blank=True)

    class Meta:
        ordering = ["run", "number"]
        verbose_name = "초안 라운드"
        verbose_name_plural = "초안 라운드"
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="draft_round_unique_number")]

    def __str__(self):
        return f"실행 #{self.run_id} 라운드 {self.number}"


class ToolCallRecord(models.Model):
    """A tool call the model asked for: allowed or blocked, with its arguments, duration and result summary."""

    run = models.ForeignKey(AnswerRun, verbose_name="답변 실행", on_delete=models.CASCADE, related_name="tool_calls")
    round = models.PositiveSmallIntegerField("라운드", default=0)
    position = models.PositiveSmallIntegerField("순서")
    name = models.CharField("도구", max_length=64)
    arguments = models.JSONField("인자", default=dict, blank=True)
    allowed = models.BooleanField("허용")
    blocked_reason = models.CharField("차단 사유", max_length=200, blank=True)
    forced = models.BooleanField("강제 검색", default=False)
    duration_ms = models.PositiveIntegerField("소요(ms)", default=0)
    result_summary = models.TextField("결과 요약", blank=True)
    error = models.TextField("오류", blank=True)

    class Meta:
        ordering = ["run", "round", "position"]
        verbose_name = "도구 호출"
        verbose_name_plural = "도구 호출"

    def __str__(self):
        return f"{self.name} ({'허용' if self.allowed else '차단'})"


class ActionRequest(models.Model):
    """An irreversible action the model asked for (e.g. sending a document), recorded with its validated arguments
    and idempotency key — never performed inside the tool loop.

    It runs once the answer passed verification: at once for an `auto` vendor, on staff approval for a `review`
    one; a held, blocked or no-evidence answer runs none (staff may run them from the question page). Running
    looks the tool up in the registry again and validates the arguments again. Status changes only through
    `agent.services.action_request_transition`: `pending → done | refused | failed`.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "실행 대기"
        DONE = "done", "실행됨"
        REFUSED = "refused", "거부됨"
        FAILED = "failed", "실패"

    run = models.ForeignKey(
        AnswerRun, verbose_name="답변 실행", on_delete=models.CASCADE, related_name="action_requests"
    )
    question = models.ForeignKey(
        "conversations.Question", verbose_name="질문", on_delete=models.CASCADE, related_name="action_requests"
    )
    position = models.PositiveSmallIntegerField("순서", default=0)
    tool = models.CharField("도구", max_length=64)
    arguments = models.JSONField("인자", default=dict, blank=True)
    idempotency_key = models.CharField("멱등 키", max_length=200)
    label = models.CharField("대상", max_length=300, blank=True)
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.PENDING)
    result = models.CharField("결과", max_length=500, blank=True)
    send_job = models.ForeignKey(
        "delivery.SendJob",
        verbose_name="발송 작업",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="action_requests",
    )
    executed_by = models.CharField("실행자", max_length=150, blank=True)
    created_at = models.DateTimeField("기록 시각", auto_now_add=True)
    executed_at = models.DateTimeField("실행 시각", null=True, blank=True)

    class Meta:
        ordering = ["run", "position"]
        verbose_name = "동작 요청"
        verbose_name_plural = "동작 요청"
        constraints = [
            models.UniqueConstraint(fields=["run", "idempotency_key"], name="action_request_unique_key_per_run")
        ]

    def __str__(self):
        return f"{self.tool} {self.label} ({self.get_status_display()})"


class AnswerReview(models.Model):
    """A staff decision on an answer: approval (possibly edited or overridden) or a mark that it was wrong."""

    class Action(models.TextChoices):
        APPROVE = "approve", "승인 후 발송"
        OVERRIDE = "override", "검증 무시 발송"
        CORRECT = "correct", "정정 발송"
        MARK_WRONG = "mark_wrong", "오답 표시"

    question = models.ForeignKey(
        "conversations.Question", verbose_name="질문", on_delete=models.CASCADE, related_name="reviews"
    )
    run = models.ForeignKey(
        AnswerRun, verbose_name="답변 실행", null=True, blank=True, on_delete=models.SET_NULL, related_name="reviews"
    )
    action = models.CharField("조치", max_length=16, choices=Action.choices)
    text = models.TextField("보낸 답변", blank=True)
    reason = models.TextField("사유", blank=True)
    # With a wrong mark: what the answer should have said, when staff wrote it (exported as an evaluation case).
    correction = models.TextField("바른 답변", blank=True)
    violations = models.JSONField("재검증 위반", default=list, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name="직원", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField("시각", auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "직원 검토"
        verbose_name_plural = "직원 검토"

    def __str__(self):
        return f"{self.get_action_display()} q#{self.question_id}"


class AttentionItem(models.Model):
    """Staff's handling of a question on the needs-attention list: who owns it and whether it is done. A question
    without a row is open and unowned. Written only by `agent.services.attention_*` and the staff actions."""

    class State(models.TextChoices):
        OPEN = "open", "처리 전"
        DONE = "done", "완료"

    question = models.OneToOneField(
        "conversations.Question", verbose_name="질문", on_delete=models.CASCADE, related_name="attention"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name="담당자",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    state = models.CharField("처리 상태", max_length=8, choices=State.choices, default=State.OPEN, db_index=True)
    done_at = models.DateTimeField("완료 시각", null=True, blank=True)
    updated_at = models.DateTimeField("수정 시각", auto_now=True)

    class Meta:
        verbose_name = "주의 질문 처리"
        verbose_name_plural = "주의 질문 처리"

    def __str__(self):
        return f"q#{self.question_id} {self.get_state_display()}"
