from django.db import models


class AuditEvent(models.Model):
    """Who or what changed which row, written in the same transaction as the change."""

    class ActorKind(models.TextChoices):
        STAFF = "staff", "직원"
        DEVICE = "device", "기기"
        SYSTEM = "system", "시스템"

    created_at = models.DateTimeField("시각", auto_now_add=True, db_index=True)
    actor_kind = models.CharField("주체 종류", max_length=16, choices=ActorKind.choices)
    actor_id = models.CharField("주체", max_length=100, blank=True)
    action = models.CharField("동작", max_length=64)
    target_type = models.CharField("대상 종류", max_length=64)
    target_id = models.CharField("대상 ID", max_length=64)
    data = models.JSONField("내용", default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "감사 기록"
        verbose_name_plural = "감사 기록"
        indexes = [models.Index(fields=["target_type", "target_id"], name="audit_target")]

    def __str__(self):
        return f"{self.action} {self.target_type}#{self.target_id}"


class LivenessMarker(models.Model):
    """Written by the processing path itself: one when a question is accepted, one when it reaches a result."""

    class Kind(models.TextChoices):
        ACCEPTED = "accepted", "접수"
        RESULT = "result", "결과"

    question = models.ForeignKey("conversations.Question", on_delete=models.CASCADE, related_name="markers")
    kind = models.CharField("종류", max_length=16, choices=Kind.choices)
    outcome = models.CharField("결과", max_length=16, blank=True)
    created_at = models.DateTimeField("시각", auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at"]
        verbose_name = "처리 마커"
        verbose_name_plural = "처리 마커"
        constraints = [models.UniqueConstraint(fields=["question", "kind"], name="marker_unique_kind_per_question")]

    def __str__(self):
        return f"{self.kind}:{self.outcome} q#{self.question_id}"
