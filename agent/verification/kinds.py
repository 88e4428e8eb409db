"""The one table of violation kinds: what each is called, how it is shown, whether the judge may rule on it, what its
value is and how a re-search uses it. Every place that handles violations by kind (the engine, the pipeline's
re-search, the prompts, the admin pages and their styles, the evaluation) reads it here, so a new kind is one entry.
"""

from dataclasses import dataclass
from enum import StrEnum


class ViolationKind(StrEnum):
    AMOUNT = "amount"
    PERCENT = "percent"
    PERCENT_POINT = "percent_point"
    BRAND_UNSUPPORTED = "brand_unsupported"
    BRAND_MISSPELT = "brand_misspelt"
    BRAND_UNKNOWN = "brand_unknown"
    DATE = "date"
    TIME = "time"
    QUANTITY = "quantity"
    CONTACT = "contact"
    VALUE_MISMATCH = "value_mismatch"
    OTHER_VENDOR = "other_vendor"
    OTHER_VENDOR_VALUE = "other_vendor_value"
    ACTION_CLAIM = "action_claim"
    # Recorded by the agent (not the engine): a sentence that asks the vendor something back, removed.
    ASKS_BACK = "asks_back"


class ReportBucket(StrEnum):
    """Where the evaluation counts a delivered violation of the kind."""

    UNSUPPORTED_VALUE = "unsupported_value"  # a value or brand the evidence does not support
    ACTION_CLAIM = "action_claim"
    OTHER_VENDOR = "other_vendor"
    NONE = "none"


class Research(StrEnum):
    """What a violation adds to the re-search query of the next draft round (a suggestion, when there is one and
    it is not a placeholder, always comes first)."""

    FLAGGED_TEXT = "flagged_text"  # the draft's words the engine flagged: the value narrows the search
    NOTHING = "nothing"  # a name to drop or an untrue claim: searching for it finds nothing useful


@dataclass(frozen=True, slots=True)
class KindInfo:
    kind: str
    label: str  # Korean, for staff pages and charts
    judge_label: str  # Korean, what the judge is told it checks
    group: str  # colour group on the staff pages (see GROUP_COLOURS)
    judgeable: bool  # the judge may clear it with a quote (never other vendors, claims or asking back)
    value_kind: str  # what Violation.value holds: a parser kind ("amount", "date" ...), "word", or "none"
    research: Research
    report_bucket: ReportBucket
    from_engine: bool = True  # verify_draft reports it (asks_back is the agent's own)


_KINDS = (
    KindInfo(
        ViolationKind.AMOUNT,
        "금액",
        "금액",
        "number",
        True,
        "amount",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    KindInfo(
        ViolationKind.PERCENT,
        "비율",
        "비율",
        "number",
        True,
        "percent",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    KindInfo(
        ViolationKind.PERCENT_POINT,
        "퍼센트포인트",
        "퍼센트포인트",
        "number",
        True,
        "percent_point",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    KindInfo(
        ViolationKind.BRAND_UNSUPPORTED,
        "근거 없는 브랜드",
        "브랜드",
        "brand",
        True,
        "word",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    KindInfo(
        ViolationKind.BRAND_MISSPELT,
        "브랜드 오기",
        "브랜드",
        "brand",
        True,
        "word",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    # A brand- or business-shaped name found nowhere (agent/verification/unknown_brands.py): no evidence passage
    # holds it, so no quote can state it and the judge is not asked.
    KindInfo(
        ViolationKind.BRAND_UNKNOWN,
        "알 수 없는 브랜드",
        "브랜드",
        "brand",
        False,
        "word",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    KindInfo(
        ViolationKind.DATE,
        "날짜",
        "날짜",
        "schedule",
        True,
        "date",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    KindInfo(
        ViolationKind.TIME,
        "시각",
        "시각",
        "schedule",
        True,
        "time",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    KindInfo(
        ViolationKind.QUANTITY,
        "수량",
        "수량",
        "number",
        True,
        "quantity",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    KindInfo(
        ViolationKind.CONTACT,
        "연락처",
        "연락처",
        "contact",
        True,
        "contact",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    # A value the evidence states, given to the wrong subject: a quote of the other subject's line would "support"
    # it, so the judge never rules on it.
    KindInfo(
        ViolationKind.VALUE_MISMATCH,
        "다른 대상의 값",
        "다른 대상의 값",
        "number",
        False,
        "the swapped value's own kind",
        Research.FLAGGED_TEXT,
        ReportBucket.UNSUPPORTED_VALUE,
    ),
    KindInfo(
        ViolationKind.OTHER_VENDOR,
        "다른 벤더",
        "다른 벤더 이름",
        "vendor",
        False,
        "word",
        Research.NOTHING,
        ReportBucket.OTHER_VENDOR,
    ),
    # A value the evidence states only in a clause about a masked vendor (agent/verification/other_vendors.py): the
    # quote that would "support" it is that vendor's, so the judge never rules on it.
    KindInfo(
        ViolationKind.OTHER_VENDOR_VALUE,
        "다른 벤더의 값",
        "다른 벤더의 값",
        "vendor",
        False,
        "the value's own kind",
        Research.NOTHING,
        ReportBucket.OTHER_VENDOR,
    ),
    KindInfo(
        ViolationKind.ACTION_CLAIM,
        "확인 안 된 처리 완료",
        "처리 완료 표현",
        "claim",
        False,
        "none",
        Research.NOTHING,
        ReportBucket.ACTION_CLAIM,
    ),
    KindInfo(
        ViolationKind.ASKS_BACK,
        "되묻는 문장",
        "되묻는 문장",
        "asks",
        False,
        "none",
        Research.NOTHING,
        ReportBucket.NONE,
        from_engine=False,
    ),
)
KINDS: dict[str, KindInfo] = {str(info.kind): info for info in _KINDS}

# Staff-page colours per group: (background, border). A kind not in the table is shown as "other".
GROUP_COLOURS = {
    "number": ("#ffe0b2", "#e65100"),
    "brand": ("#e1bee7", "#6a1b9a"),
    "vendor": ("#ffcdd2", "#b71c1c"),
    "claim": ("#bbdefb", "#0d47a1"),
    "asks": ("#b2dfdb", "#004d40"),
    "schedule": ("#fff9c4", "#f57f17"),
    "contact": ("#c8e6c9", "#1b5e20"),
    "other": ("#e0e0e0", "#424242"),
}
UNKNOWN_GROUP = "other"
# What the statistics count (and list) a violation recorded without a kind as.
UNKNOWN_KIND = "unknown"
UNKNOWN_KIND_LABEL = "종류 미기록"

JUDGEABLE_KINDS = frozenset(info.kind for info in _KINDS if info.judgeable)
ENGINE_KINDS = tuple(info.kind for info in _KINDS if info.from_engine)


def kind_info(kind: str) -> KindInfo | None:
    return KINDS.get(str(kind))


def kind_label(kind: str) -> str:
    """The Korean label of a kind; an unknown kind (an old record, a newer worker) as it is written."""
    info = KINDS.get(str(kind))
    if info is None:
        return UNKNOWN_KIND_LABEL if kind == UNKNOWN_KIND else str(kind)
    return info.label


def kind_group(kind: str) -> str:
    info = KINDS.get(str(kind))
    return info.group if info else UNKNOWN_GROUP


def kinds_in_bucket(bucket: ReportBucket) -> tuple[str, ...]:
    return tuple(info.kind for info in _KINDS if info.report_bucket == bucket)
