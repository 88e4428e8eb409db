from django.db import models
from django.db.models import Q


class Room(models.Model):
    """A KakaoTalk chat room as the edge client sees it, and the counterpart it resolved to."""

    class Kind(models.TextChoices):
        EXTERNAL = "external", "외부(벤더) 방"
        INTERNAL = "internal", "내부(직원 전용) 방"

    class ResolutionStatus(models.TextChoices):
        MATCHED = "matched", "매칭됨"
        BLOCKED = "blocked", "차단됨"
        UNRESOLVED = "unresolved", "미확정"

    stable_key = models.CharField("방 고유 키", max_length=200, unique=True)
    name = models.CharField("방 이름", max_length=300)
    kind = models.CharField("방 종류", max_length=16, choices=Kind.choices, default=Kind.EXTERNAL)
    resolution_status = models.CharField(
        "매칭 상태", max_length=16, choices=ResolutionStatus.choices, default=ResolutionStatus.UNRESOLVED
    )
    vendor = models.ForeignKey(
        "vendors.Vendor", verbose_name="벤더", null=True, blank=True, on_delete=models.PROTECT, related_name="rooms"
    )
    resolution_reason = models.CharField("사유", max_length=32, blank=True)
    resolution_candidates = models.JSONField("후보", default=list, blank=True)
    resolved_name = models.CharField("매칭에 쓴 방 이름", max_length=300, blank=True)
    resolved_at = models.DateTimeField("매칭 시각", null=True, blank=True)
    resend_dropped_count = models.PositiveIntegerField("재전송 제거 수", default=0)
    created_at = models.DateTimeField("등록 시각", auto_now_add=True)
    updated_at = models.DateTimeField("수정 시각", auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "대화방"
        verbose_name_plural = "대화방"
        constraints = [
            models.CheckConstraint(
                name="room_vendor_only_when_matched",
                condition=Q(resolution_status="matched", vendor__isnull=False)
                | (~Q(resolution_status="matched") & Q(vendor__isnull=True)),
            )
        ]

    def __str__(self):
        return self.name


class UploadBatch(models.Model):
    """One POST from an uploader device; its result is replayed when the same batch_id comes again."""

    device = models.ForeignKey(
        "delivery.Device", verbose_name="업로드 기기", on_delete=models.PROTECT, related_name="upload_batches"
    )
    batch_id = models.CharField("배치 ID", max_length=100)
    received_at = models.DateTimeField("받은 시각", auto_now_add=True)
    message_count = models.PositiveIntegerField("받은 메시지 수", default=0)
    stored_count = models.PositiveIntegerField("저장 수", default=0)
    resend_count = models.PositiveIntegerField("재전송 수", default=0)
    duplicate_count = models.PositiveIntegerField("중복 수", default=0)
    question_count = models.PositiveIntegerField("질문 수", default=0)
    rejected_count = models.PositiveIntegerField("격리 수", default=0)
    cleaned_count = models.PositiveIntegerField("정리 후 저장 수", default=0)

    class Meta:
        ordering = ["-received_at"]
        verbose_name = "업로드 배치"
        verbose_name_plural = "업로드 배치"
        constraints = [models.UniqueConstraint(fields=["device", "batch_id"], name="upload_batch_unique_per_device")]

    def __str__(self):
        return self.batch_id


class Message(models.Model):
    """A stored (non-resend) chat message. Audit record: never edited after insert."""

    room = models.ForeignKey(Room, verbose_name="대화방", on_delete=models.PROTECT, related_name="messages")
    batch = models.ForeignKey(
        UploadBatch, verbose_name="업로드 배치", on_delete=models.PROTECT, related_name="messages"
    )
    sender_name = models.CharField("보낸 사람", max_length=200)
    sent_by_me = models.BooleanField("내가 보냄", default=False)
    text = models.TextField("내용", blank=True)
    sent_at = models.DateTimeField("보낸 시각")
    unread_count = models.PositiveIntegerField("안 읽음 수", default=0)
    # NULL, not "", so the partial unique constraint ignores messages without a client id.
    client_message_id = models.CharField("클라이언트 메시지 ID", max_length=100, null=True, blank=True)  # noqa: DJ001
    photo_count = models.PositiveIntegerField("사진 수", default=0)
    file_count = models.PositiveIntegerField("파일 수", default=0)
    is_tagged = models.BooleanField("봇 태그", default=False)
    # Characters the database cannot hold, taken out of a field before storing, counted per field and kind:
    # {"text": {"nul": 2}} (NUL removed), {"sender_name": {"surrogate": 1}} (lone surrogate → U+FFFD).
    cleaning = models.JSONField("저장 전 정리", default=dict, blank=True)
    created_at = models.DateTimeField("저장 시각", auto_now_add=True)

    class Meta:
        ordering = ["sent_at", "id"]
        verbose_name = "메시지"
        verbose_name_plural = "메시지"
        indexes = [models.Index(fields=["room", "sent_at"], name="message_room_sent_at")]
        constraints = [
            models.UniqueConstraint(
                fields=["room", "client_message_id"],
                condition=Q(client_message_id__isnull=False),
                name="message_unique_client_id_per_room",
            )
        ]

    def __str__(self):
        return f"{self.sender_name}: {self.text[:40]}"


class ResendWindowEntry(models.Model):
    """The resend window in the database: the whole window without Redis; with Redis, the last-seen time of keys
    whose window slid past their stored copy, so a Redis restart can be recovered from (written in the ingest
    transaction, read only while Redis may have forgotten keys)."""

    room = models.ForeignKey(Room, verbose_name="대화방", on_delete=models.CASCADE, related_name="+")
    key_hash = models.CharField("키 해시", max_length=64)
    last_seen_at = models.DateTimeField("마지막으로 본 시각")
    # "<device id>:<batch id>" of the upload that stored the key: a batch id is unique per device only.
    owner = models.CharField("저장한 업로드", max_length=130)
    updated_at = models.DateTimeField("수정 시각", auto_now=True)

    class Meta:
        verbose_name = "재전송 창 항목"
        verbose_name_plural = "재전송 창 항목"
        constraints = [models.UniqueConstraint(fields=["room", "key_hash"], name="resend_window_unique_key")]
        indexes = [models.Index(fields=["updated_at"], name="resend_window_updated")]

    def __str__(self):
        return f"{self.room_id}:{self.key_hash[:8]}"


class QuarantinedMessage(models.Model):
    """An uploaded message refused on its own while the rest of its batch was stored: the fields exactly as
    received (as JSON text the database can hold) and why, for staff to look at."""

    class Reason(models.TextChoices):
        INVALID = "invalid", "형식 오류"
        UNSTORABLE_IDENTIFIER = "unstorable_identifier", "저장할 수 없는 식별자"
        TIME_OUT_OF_RANGE = "time_out_of_range", "허용 범위 밖의 시각"

    batch = models.ForeignKey(
        UploadBatch, verbose_name="업로드 배치", on_delete=models.PROTECT, related_name="quarantined_messages"
    )
    device = models.ForeignKey("delivery.Device", verbose_name="기기", on_delete=models.PROTECT, related_name="+")
    room = models.ForeignKey(
        Room,
        verbose_name="대화방",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="quarantined_messages",
    )
    room_key = models.TextField("받은 방 키", blank=True)
    index = models.PositiveIntegerField("배치 안 순번")
    reason = models.CharField("사유", max_length=32, choices=Reason.choices)
    errors = models.JSONField("오류", default=list, blank=True)
    # JSON text, not jsonb: jsonb cannot hold NUL either. NUL and lone surrogates stay as \u escapes.
    raw = models.TextField("받은 그대로 (JSON)")
    received_at = models.DateTimeField("받은 시각", auto_now_add=True)

    class Meta:
        ordering = ["-received_at", "batch_id", "index"]
        verbose_name = "격리된 메시지"
        verbose_name_plural = "격리된 메시지"
        constraints = [
            models.UniqueConstraint(fields=["batch", "index"], name="quarantined_message_unique_index_per_batch")
        ]

    def __str__(self):
        return f"{self.batch_id} #{self.index} {self.get_reason_display()}"


class Question(models.Model):
    """A tagged message addressed to the bot. A run of the agent is driven by `status`."""

    class Status(models.TextChoices):
        ACCEPTED = "accepted", "접수"
        RUNNING = "running", "처리 중"
        ANSWERED = "answered", "답변됨"
        HELD = "held", "보류"
        BLOCKED = "blocked", "차단"
        NO_EVIDENCE = "no_evidence", "근거 없음"
        FAILED = "failed", "실패"

    TERMINAL_STATUSES = (Status.ANSWERED, Status.HELD, Status.BLOCKED, Status.NO_EVIDENCE, Status.FAILED)

    message = models.OneToOneField(Message, verbose_name="메시지", on_delete=models.PROTECT, related_name="question")
    room = models.ForeignKey(Room, verbose_name="대화방", on_delete=models.PROTECT, related_name="questions")
    vendor = models.ForeignKey("vendors.Vendor", verbose_name="벤더", null=True, blank=True, on_delete=models.PROTECT)
    text = models.TextField("질문")
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.ACCEPTED)
    outcome_reason = models.CharField("결과 사유", max_length=64, blank=True)
    created_at = models.DateTimeField("접수 시각", auto_now_add=True)
    updated_at = models.DateTimeField("수정 시각", auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "질문"
        verbose_name_plural = "질문"
        indexes = [
            models.Index(fields=["status", "updated_at"], name="question_status_updated"),
            models.Index(fields=["created_at"], name="question_created"),
        ]

    def __str__(self):
        return self.text[:60]
