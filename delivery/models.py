from django.conf import settings
from django.db import models


class Device(models.Model):
    """An edge program on a staff PC (uploader) or Mac (sender), identified by a role-scoped token.

    Neither the pairing code nor the token is stored in clear: both are shown once and kept as hashes.
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
    token_hash = models.CharField(max_length=64, unique=True, null=True, blank=True, editable=False)
    pairing_code_hash = models.CharField(max_length=64, unique=True, null=True, blank=True, editable=False)
    pairing_expires_at = models.DateTimeField("코드 만료", null=True, blank=True, editable=False)
    pairing_attempts = models.PositiveIntegerField("코드 실패 횟수", default=0, editable=False)
    client_name = models.CharField("기기가 알린 이름", max_length=100, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
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
