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
        return f"감사 기록 #{self.pk}: {self.action} ({self.target_type} #{self.target_id})"


class LivenessMarker(models.Model):
    """Written by the processing path itself: one when a question is accepted, one when it reaches a result."""

    class Kind(models.TextChoices):
        ACCEPTED = "accepted", "접수"
        RESULT = "result", "결과"

    question = models.ForeignKey(
        "conversations.Question", verbose_name="질문", on_delete=models.CASCADE, related_name="markers"
    )
    kind = models.CharField("종류", max_length=16, choices=Kind.choices)
    outcome = models.CharField("결과", max_length=16, blank=True)
    created_at = models.DateTimeField("시각", auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at"]
        verbose_name = "처리 마커"
        verbose_name_plural = "처리 마커"
        constraints = [models.UniqueConstraint(fields=["question", "kind"], name="marker_unique_kind_per_question")]

    def __str__(self):
        outcome = f" ({self.outcome})" if self.outcome else ""
        return f"질문 #{self.question_id} {self.get_kind_display()}{outcome}"


class Alert(models.Model):
    """Something staff must look at. One open alert per (kind, key): raising it again does not add a row."""

    class Kind(models.TextChoices):
        QUESTION_STALLED = "question_stalled", "질문 결과 없음"
        QUESTION_FAILED = "question_failed", "질문 처리 실패"
        SEND_STUCK = "send_stuck", "발송 지연"
        SEND_UNKNOWN = "send_unknown", "발송 상태 불명"
        SEND_NO_SENDER = "send_no_sender", "발송 기기 없음"
        DEVICE_SILENT = "device_silent", "기기 응답 없음"
        UPLOAD_GAP = "upload_gap", "업로드 공백"
        ROOM_UNANSWERED = "room_unanswered", "벤더 미확정 방의 질문"
        LLM_PROVIDER_FAILED = "llm_provider_failed", "LLM 제공자 설정 오류"

    class Status(models.TextChoices):
        OPEN = "open", "열림"
        ACKNOWLEDGED = "acknowledged", "확인함"
        CLOSED = "closed", "닫힘"

    kind = models.CharField("종류", max_length=32, choices=Kind.choices)
    key = models.CharField("대상 키", max_length=100)
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.OPEN)
    message = models.TextField("내용")
    data = models.JSONField("세부", default=dict, blank=True)
    raised_at = models.DateTimeField("발생", auto_now_add=True)
    acknowledged_at = models.DateTimeField("확인", null=True, blank=True)
    acknowledged_by = models.CharField("확인자", max_length=150, blank=True)
    closed_at = models.DateTimeField("종료", null=True, blank=True)
    notified_at = models.DateTimeField("웹훅 전송", null=True, blank=True)
    notify_attempts = models.PositiveIntegerField("웹훅 시도", default=0)

    class Meta:
        ordering = ["-raised_at"]
        verbose_name = "알림"
        verbose_name_plural = "알림"
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "key"], condition=~models.Q(status="closed"), name="alert_one_live_per_kind_key"
            )
        ]

    def __str__(self):
        return f"[{self.get_kind_display()}] {self.message[:60]}"
