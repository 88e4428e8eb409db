from django.conf import settings
from django.db import models


class Device(models.Model):
    """An edge program on a staff PC (uploader) or Mac (sender), identified by a role-scoped token.

    Neither the pairing code nor the token is stored in clear: both are shown once and kept as hashes. A token may
    expire (`DEVICE_TOKEN_TTL_DAYS`); the device rotates it itself, and a rotated token (`pending_token_hash`)
    replaces the current one at its first use.
    """

    class Role(models.TextChoices):
        UPLOADER = "uploader", "업로더(대화 수집 PC)"
        SENDER = "sender", "발송기(Mac)"

    class Status(models.TextChoices):
        PENDING = "pending", "페어링 대기"
        ACTIVE = "active", "사용 중"
        REVOKED = "revoked", "해지됨"

    name = models.CharField("기기 이름", max_length=100)
    role = models.CharField("역할", max_length=16, choices=Role.choices)
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.PENDING)
    token_hash = models.CharField("토큰 해시", max_length=64, unique=True, null=True, blank=True, editable=False)
    pending_token_hash = models.CharField(
        "교체 중인 토큰 해시", max_length=64, unique=True, null=True, blank=True, editable=False
    )
    token_issued_at = models.DateTimeField("토큰 발급", null=True, blank=True, editable=False)
    token_expires_at = models.DateTimeField("토큰 만료", null=True, blank=True, editable=False)
    token_rotation_requested_at = models.DateTimeField("토큰 교체 요청", null=True, blank=True, editable=False)
    pairing_code_hash = models.CharField(
        "페어링 코드 해시", max_length=64, unique=True, null=True, blank=True, editable=False
    )
    pairing_expires_at = models.DateTimeField("코드 만료", null=True, blank=True, editable=False)
    client_name = models.CharField("기기가 알린 이름", max_length=100, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name="등록한 직원",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    created_at = models.DateTimeField("등록", auto_now_add=True)
    paired_at = models.DateTimeField("페어링", null=True, blank=True, editable=False)
    last_seen_at = models.DateTimeField("마지막 접속", null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField("해지", null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        verbose_name = "엣지 기기"
        verbose_name_plural = "엣지 기기"

    def __str__(self):
        return f"{self.name} ({self.get_role_display()})"

    @property
    def is_authenticated(self) -> bool:
        # DRF treats request.user as the principal; a device is one.
        return True


# --- send jobs ---


class SendJob(models.Model):
    """One reply to deliver into a room, claimed by a sender device under a lease.

    `queued → claimed → sending → verifying → sent`, or `failed` (with a reason), or `unknown` (a device went
    silent past its lease or could not tell). Every move is a compare-and-set in `delivery.services.send_jobs`
    with an audit row; nothing else writes `state`.
    """

    class State(models.TextChoices):
        QUEUED = "queued", "대기"
        CLAIMED = "claimed", "기기 수령"
        SENDING = "sending", "발송 중"
        VERIFYING = "verifying", "도착 확인 중"
        SENT = "sent", "발송됨"
        FAILED = "failed", "실패"
        UNKNOWN = "unknown", "상태 불명"

    LEASED_STATES = (State.CLAIMED, State.SENDING, State.VERIFYING)

    room = models.ForeignKey(
        "conversations.Room", verbose_name="대화방", on_delete=models.PROTECT, related_name="send_jobs"
    )
    question = models.ForeignKey(
        "conversations.Question",
        verbose_name="질문",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="send_jobs",
    )
    idempotency_key = models.CharField("멱등 키", max_length=200, unique=True)
    request_fingerprint = models.CharField("요청 지문", max_length=64)
    state = models.CharField("상태", max_length=16, choices=State.choices, default=State.QUEUED)
    reason = models.CharField("사유", max_length=500, blank=True)
    lease_holder = models.ForeignKey(
        Device,
        verbose_name="리스 보유 기기",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="send_leases",
    )
    lease_expires_at = models.DateTimeField("리스 만료", null=True, blank=True)
    claimed_by = models.ForeignKey(
        Device,
        verbose_name="마지막 수령 기기",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="claimed_send_jobs",
    )
    attempt = models.PositiveIntegerField("시도", default=1)
    expected_texts = models.PositiveIntegerField("보낼 글 수", default=0)
    expected_photos = models.PositiveIntegerField("보낼 사진 수", default=0)
    expected_files = models.PositiveIntegerField("보낼 파일 수", default=0)
    observed_counts = models.JSONField("도착 확인 수", default=dict, blank=True)
    resent_counts = models.JSONField("재발송 수", default=dict, blank=True)
    created_by = models.CharField("요청자", max_length=150)
    created_at = models.DateTimeField("요청", auto_now_add=True)
    state_changed_at = models.DateTimeField("상태 변경", auto_now_add=True)
    claimed_at = models.DateTimeField("수령", null=True, blank=True)
    finished_at = models.DateTimeField("종료", null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        verbose_name = "발송 작업"
        verbose_name_plural = "발송 작업"
        indexes = [models.Index(fields=["state", "id"], name="send_job_state_id")]
        constraints = [
            # A lease exists exactly while a device works on the job.
            models.CheckConstraint(
                name="send_job_lease_only_while_leased",
                condition=(
                    models.Q(state__in=["claimed", "sending", "verifying"], lease_holder__isnull=False)
                    & models.Q(lease_expires_at__isnull=False)
                )
                | (
                    ~models.Q(state__in=["claimed", "sending", "verifying"])
                    & models.Q(lease_holder__isnull=True, lease_expires_at__isnull=True)
                ),
            )
        ]

    def __str__(self):
        return f"발송 #{self.pk} ({self.get_state_display()})"

    @property
    def expected_counts(self) -> dict:
        return {"texts": self.expected_texts, "photos": self.expected_photos, "files": self.expected_files}


class SendJobItem(models.Model):
    """One text, photo or file of a send job, in sending order. Photos and files are stored by content hash."""

    class Kind(models.TextChoices):
        TEXT = "text", "글"
        PHOTO = "photo", "사진"
        FILE = "file", "파일"

    job = models.ForeignKey(SendJob, verbose_name="발송 작업", on_delete=models.CASCADE, related_name="items")
    index = models.PositiveSmallIntegerField("순서")
    kind = models.CharField("종류", max_length=8, choices=Kind.choices)
    text = models.TextField("내용", blank=True)
    file = models.FileField("첨부", upload_to="send_items/", max_length=300, blank=True)
    name = models.CharField("파일 이름", max_length=200, blank=True)
    sha256 = models.CharField("파일 해시(SHA-256)", max_length=64, blank=True)
    size = models.PositiveIntegerField("크기(바이트)", default=0)

    class Meta:
        ordering = ["job", "index"]
        verbose_name = "발송 항목"
        verbose_name_plural = "발송 항목"
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="send_item_unique_index_per_job"),
            models.CheckConstraint(
                name="send_item_text_or_content",
                condition=(models.Q(kind="text") & ~models.Q(text="") & models.Q(file=""))
                | (
                    models.Q(kind__in=["photo", "file"])
                    & ~models.Q(file="")
                    & ~models.Q(sha256="")
                    & ~models.Q(name="")
                ),
            ),
        ]

    def __str__(self):
        return f"#{self.job_id}[{self.index}] {self.get_kind_display()}"


class SenderRoom(models.Model):
    """A room a sender device can send into: reported from its client DB, or set by staff in the admin.

    A staff-set row (`source=admin`) is never overridden by the device's reports.
    """

    class Source(models.TextChoices):
        REPORTED = "reported", "기기 보고"
        ADMIN = "admin", "관리자 지정"

    device = models.ForeignKey(Device, verbose_name="발송 기기", on_delete=models.CASCADE, related_name="sender_rooms")
    room = models.ForeignKey(
        "conversations.Room", verbose_name="대화방", on_delete=models.CASCADE, related_name="sender_rooms"
    )
    source = models.CharField("출처", max_length=16, choices=Source.choices, default=Source.REPORTED)
    is_active = models.BooleanField("사용", default=True)
    last_reported_at = models.DateTimeField("마지막 보고", null=True, blank=True)
    created_at = models.DateTimeField("등록", auto_now_add=True)
    updated_at = models.DateTimeField("수정", auto_now=True)

    class Meta:
        ordering = ["device", "room"]
        verbose_name = "발송 기기 담당 방"
        verbose_name_plural = "발송 기기 담당 방"
        constraints = [models.UniqueConstraint(fields=["device", "room"], name="sender_room_unique_device_room")]

    def __str__(self):
        return f"{self.device} → {self.room}"
