from django.conf import settings
from django.db import models


class CurationQuerySet(models.QuerySet):
    def current(self):
        """Rows staff have not retired: what evidence, tools and aggregates may use."""
        return self.filter(retired_at__isnull=True)


class Vendor(models.Model):
    """A B2B counterpart. `code` is the number staff put in room names, e.g. `(1234) 대한물산`."""

    class AnswerMode(models.TextChoices):
        AUTO = "auto", "자동 발송"
        REVIEW = "review", "검토 후 발송"

    code = models.CharField("벤더 코드", max_length=32, unique=True)
    name = models.CharField("벤더명", max_length=200)
    aliases = models.JSONField("별칭", default=list, blank=True)
    is_active = models.BooleanField("활성", default=True)
    answer_mode = models.CharField("답변 모드", max_length=16, choices=AnswerMode.choices, default=AnswerMode.AUTO)
    created_at = models.DateTimeField("등록 시각", auto_now_add=True)
    updated_at = models.DateTimeField("수정 시각", auto_now=True)

    class Meta:
        ordering = ["code"]
        verbose_name = "벤더"
        verbose_name_plural = "벤더"

    def __str__(self):
        return f"({self.code}) {self.name}"

    @property
    def all_names(self) -> list[str]:
        return [self.name, *self.aliases]


class Brand(models.Model):
    """A product brand, shared by every vendor that sells it. Aliases are other spellings staff accept."""

    name = models.CharField("브랜드명", max_length=200, unique=True)
    aliases = models.JSONField("별칭", default=list, blank=True)
    updated_at = models.DateTimeField("수정 시각", auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "브랜드"
        verbose_name_plural = "브랜드"

    def __str__(self):
        return self.name

    @property
    def all_names(self) -> list[str]:
        return [self.name, *self.aliases]


class Product(models.Model):
    """A product one vendor deals in, with its contract unit price in won."""

    vendor = models.ForeignKey(Vendor, on_delete=models.CASCADE, related_name="products", verbose_name="벤더")
    brand = models.ForeignKey(
        Brand, on_delete=models.SET_NULL, null=True, blank=True, related_name="products", verbose_name="브랜드"
    )
    name = models.CharField("상품명", max_length=200)
    sku = models.CharField("상품 코드(SKU)", max_length=64)
    unit_price = models.PositiveBigIntegerField("단가(원)")
    category = models.CharField("카테고리", max_length=100, blank=True)
    cost_price = models.PositiveBigIntegerField("원가(원)", null=True, blank=True)
    stock_quantity = models.PositiveIntegerField("재고", default=0)
    safety_stock = models.PositiveIntegerField("안전 재고", default=0)
    # Derived, normalised text the trigram index covers; written by vendors.records, never edited by hand.
    # Empty while retired, so the search never finds a retired row.
    search_text = models.TextField("검색 텍스트", blank=True, editable=False)
    retired_at = models.DateTimeField("폐기 시각", null=True, blank=True, editable=False)
    updated_at = models.DateTimeField("수정 시각", auto_now=True)

    objects = CurationQuerySet.as_manager()

    class Meta:
        ordering = ["vendor", "sku"]
        verbose_name = "상품"
        verbose_name_plural = "상품"
        constraints = [models.UniqueConstraint(fields=["vendor", "sku"], name="product_unique_sku_per_vendor")]

    def __str__(self):
        return f"{self.name} ({self.sku})"


class VendorRecord(models.Model):
    """One document of a vendor's file: contract terms, an order, a promotion, a settlement, a notice."""

    class Kind(models.TextChoices):
        CONTRACT = "contract", "계약 조건"
        ORDER = "order", "주문"
        PROMOTION = "promotion", "프로모션"
        SETTLEMENT = "settlement", "정산"
        NOTICE = "notice", "공지"
        OTHER = "other", "기타"

    vendor = models.ForeignKey(Vendor, on_delete=models.CASCADE, related_name="records", verbose_name="벤더")
    kind = models.CharField("종류", max_length=16, choices=Kind.choices)
    title = models.CharField("제목", max_length=300)
    body = models.TextField("본문", blank=True)
    values = models.JSONField("구조화 값", default=dict, blank=True)
    effective_from = models.DateField("적용 시작일", null=True, blank=True)
    effective_to = models.DateField("적용 종료일", null=True, blank=True)
    source = models.CharField("출처", max_length=100, blank=True)
    source_id = models.CharField("출처 ID", max_length=100, blank=True)
    # Derived, normalised text the trigram index covers; written by vendors.records, never edited by hand.
    # Empty while retired, so the search never finds a retired row.
    search_text = models.TextField("검색 텍스트", blank=True, editable=False)
    retired_at = models.DateTimeField("폐기 시각", null=True, blank=True, editable=False)
    updated_at = models.DateTimeField("수정 시각", auto_now=True)

    objects = CurationQuerySet.as_manager()

    class Meta:
        ordering = ["vendor", "kind", "-updated_at"]
        verbose_name = "벤더 기록"
        verbose_name_plural = "벤더 기록"
        constraints = [
            models.UniqueConstraint(
                fields=["vendor", "kind", "source_id"],
                condition=~models.Q(source_id=""),
                name="vendor_record_unique_source_id",
            ),
            models.CheckConstraint(
                condition=models.Q(effective_from__isnull=True)
                | models.Q(effective_to__isnull=True)
                | models.Q(effective_to__gte=models.F("effective_from")),
                name="vendor_record_effective_range",
            ),
        ]

    def __str__(self):
        return f"[{self.get_kind_display()}] {self.title}"


class RecordImport(models.Model):
    """One successful `import_records` run: what file, what it changed. The audit row points here."""

    file_name = models.CharField("파일명", max_length=300)
    file_sha256 = models.CharField("파일 해시", max_length=64)
    counts = models.JSONField("반영 건수", default=dict)
    created_at = models.DateTimeField("시각", auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "기록 가져오기"
        verbose_name_plural = "기록 가져오기"

    def __str__(self):
        return f"{self.file_name} ({self.created_at:%Y-%m-%d %H:%M})"


class StagedImport(models.Model):
    """An uploaded vendors or records file kept with its dry-run preview until staff apply or discard it."""

    class Kind(models.TextChoices):
        VENDORS = "vendors", "벤더 (code, name, aliases)"
        RECORDS = "records", "기록·상품·브랜드"

    class Status(models.TextChoices):
        PREVIEWED = "previewed", "미리보기"
        APPLIED = "applied", "반영함"
        DISCARDED = "discarded", "닫음"

    kind = models.CharField("종류", max_length=16, choices=Kind.choices)
    file_name = models.CharField("파일명", max_length=300)
    file_sha256 = models.CharField("파일 해시", max_length=64)
    content = models.BinaryField("파일 내용")
    replace_unkeyed = models.BooleanField("source_id 없는 기존 기록 교체", default=False)
    status = models.CharField("상태", max_length=16, choices=Status.choices, default=Status.PREVIEWED)
    preview = models.JSONField("미리보기", default=dict)
    result = models.JSONField("반영 결과", default=dict, blank=True)
    record_import = models.ForeignKey(
        RecordImport, verbose_name="기록 가져오기", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name="올린 직원", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField("올린 시각", auto_now_add=True)
    applied_at = models.DateTimeField("반영 시각", null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "가져오기 업로드"
        verbose_name_plural = "가져오기 업로드"

    def __str__(self):
        return f"{self.file_name} ({self.get_kind_display()})"
