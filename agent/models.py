# --- FAQ store (embeddings/FAQ engineer) ---
import uuid

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
    url = models.URLField("URL", max_length=500, blank=True)
    source = models.CharField("출처", max_length=100, blank=True)
    source_id = models.CharField("출처 ID", max_length=200, blank=True)
    source_created_at = models.DateTimeField("원본 작성 시각")
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.ACTIVE, db_index=True)
    replaced_by = models.ForeignKey(
        "self", verbose_name="대체 항목", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces"
    )
    point_id = models.UUIDField("색인 포인트 ID", default=uuid.uuid4, unique=True, editable=False)
    # Null until the Qdrant write after commit succeeds; `rebuild_faq_index` heals entries left unindexed.
    indexed_at = models.DateTimeField("색인 시각", null=True, blank=True, editable=False)
    created_at = models.DateTimeField("생성", auto_now_add=True)
    updated_at = models.DateTimeField("수정", auto_now=True)

    class Meta:
        ordering = ["-id"]
        verbose_name = "FAQ"
        verbose_name_plural = "FAQ"
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

    entry = models.ForeignKey(
        FaqEntry, verbose_name="FAQ", null=True, on_delete=models.SET_NULL, related_name="versions"
    )
    entry_ref = models.PositiveBigIntegerField("FAQ ID")  # survives deletion of the entry
    snapshot = models.JSONField("스냅숏")
    reason = models.CharField("사유", max_length=32, choices=Reason.choices)
    actor = models.CharField("작업자", max_length=150, blank=True)
    created_at = models.DateTimeField("시각", auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "FAQ 버전"
        verbose_name_plural = "FAQ 버전"
        indexes = [models.Index(fields=["entry_ref", "-created_at"], name="faqversion_entry_ref")]

    def __str__(self):
        return f"FAQ#{self.entry_ref} {self.reason}"


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
    sha256 = models.CharField("본문 해시", max_length=64, editable=False)
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    extractor = models.CharField("그래프 추출", max_length=16, choices=Extractor.choices, blank=True)
    error = models.TextField("오류", blank=True)
    chunk_count = models.PositiveIntegerField("청크 수", default=0)
    entity_count = models.PositiveIntegerField("엔터티 수", default=0)
    relation_count = models.PositiveIntegerField("관계 수", default=0)
    ingested_at = models.DateTimeField("반영 시각", null=True, blank=True)
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
