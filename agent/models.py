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
