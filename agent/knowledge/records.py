"""The query side of the per-counterpart records search: what a question asks for, and the vendor's matching
records and products as evidence items (`vendor_records_search`).

The question is read here — spoken forms written out, Korean-aware tokens, other words for each token's subject
(`agent.knowledge.synonyms`), the days it is about (`agent.knowledge.periods`) — and the rows are read by the
vendors selectors (`vendors.selectors.vendor_rows_match`), always scoped to the one vendor in SQL:
1. exact pass — rows of the vendor in which a query token is a substring, scored by the share of tokens found;
   another word for the token's subject (`agent.knowledge.synonyms`: 대금 → 결제) counts 0.85 of one, so
   "대금은 매달 며칠에 들어와요?" finds the contract whose terms read "결제 조건은 …".
2. similar pass (PostgreSQL only), for tokens of three or more characters that no exact hit contains — pg_trgm
   word similarity (`단말기들` still finds `단말기`). It runs only then, because word similarity costs far more per
   row than LIKE.
The stored side — `search_text` and the normalisation it shares with the query (`search_normalize`) — is
written by `vendors.records`.
"""

import datetime
import re
from typing import TYPE_CHECKING

from django.utils import timezone

from agent.knowledge.periods import months_named, question_window
from agent.knowledge.synonyms import spoken_forms_written, subject_variants
from agent.knowledge.types import EvidenceItem
from agent.verification.korean import EndingStripper
from vendors.records import search_normalize, values_text
from vendors.selectors import VendorRowsQuery, vendor_rows_match, vendor_rows_match_similar

if TYPE_CHECKING:
    from vendors.models import Product, Vendor, VendorRecord

# ---------------------------------------------------------------------------------------------------------------
# Korean-aware tokens
# ---------------------------------------------------------------------------------------------------------------

# Particles and polite endings that glue onto nouns (`단말기는`, `정산은요`, `계약서에서`). The longest that fits
# is stripped, so `에서` wins over `에`; at most twice and never below a two-character stem (`단가` stays).
_PARTICLES = [
        "은", "는", "이", "가", "을", "를", "에", "에서", "의", "도", "로", "으로", "와", "과", "랑", "이랑",
        "까지", "부터", "만", "요", "에게", "한테", "께서", "처럼", "보다", "마다", "이나", "하고", "이요",
        "이에요", "예요", "인가요", "인지", "입니다", "이고", "에서는", "으로는", "에는", "엔",
]  # fmt: skip
_MAX_PARTICLE_STRIPS = 2
_MIN_TOKEN_LENGTH = 2
_MAX_QUERY_TOKENS = 8
# Question words never name anything in a record; matching them only adds noise. A token is dropped when it
# starts with one of these stems (`얼마예요`, `얼마죠`, `알려주세요`, `궁금합니다`, `되나요`).
_QUESTION_STEMS = ("얼마", "어떻게", "어떤", "언제", "무엇", "뭐", "뭔", "알려", "궁금", "있나", "있어", "있을까",
                   "되나", "되어", "됩니", "될까", "인가", "인지", "혹시", "부탁", "확인해", "며칠", "몇",
                   "돼", "되요")  # fmt: skip
_QUESTION_WORDS = frozenset(
    ["문의", "문의드립니다", "좀", "주세요", "지금", "현재", "저희", "매달", "매월", "진행", "중인", "이번"]
)
# Verb endings after a verbal noun in questions (`결제돼요`, `발송되나요`, `정산하나요`): the noun is the token.
# So are 받다 forms after one (`지급받는`, `입금받나요`: what the vendor receives is the noun's subject).
_VERBAL_ENDINGS = ("되나요", "되는지", "됩니까", "돼요", "되요", "되죠", "하나요", "합니까", "해요", "하죠", "할까요",
                   "되었나요", "됐나요", "했나요", "받는지", "받나요", "받아요", "받으려면", "받는", "받을", "받은",
                   "받죠")  # fmt: skip
# A compound ending in an aspect syllable (`정산일`, `지급일`, `배송비`, `할인율`, `정산금`) also finds its stem in the
# records, where the values are written `정산 월`, `지급 예정일`, `할인율`, `정산액`.
_ASPECT_SUFFIXES = ("일", "율", "률", "비", "액", "금")
# A month with the share it counts (`11월치`, `11월분`): the records write the month alone (`11월 매입분`, `정산 월`).
_MONTH_SHARE_RE = re.compile(r"^(\d{1,2}월)(?:치|분|달)$")
_TOKEN_SPLIT = re.compile(r"[\s,/]+")
_EDGE_PUNCTUATION = re.compile(r"^[^\w]+|[^\w]+$")


# `단말기는` → `단말기`, `정산은요` → `정산`; a stem is never shorter than two characters.
particle_strip = EndingStripper(_PARTICLES, times=_MAX_PARTICLE_STRIPS, min_stem=_MIN_TOKEN_LENGTH)


def query_tokens(query: str) -> list[str]:
    """Distinct search tokens of a question: normalised, edge punctuation and particles stripped, noise dropped.
    A one-character word is kept only when it names a subject other words write at length (`돈` → 대금, 결제 …):
    it is searched by those words alone."""
    tokens: list[str] = []
    for raw in _TOKEN_SPLIT.split(search_normalize(query)):
        bare = _EDGE_PUNCTUATION.sub("", raw)
        token = particle_strip(bare)
        if len(bare) > 1 and bare[1:] in _PARTICLES and _synonyms(bare[:1]):
            token = bare[:1]  # `돈은` → 돈: a subject word of one syllable keeps no particle either
        for ending in _VERBAL_ENDINGS:
            if bare.endswith(ending) and len(bare) - len(ending) >= _MIN_TOKEN_LENGTH:
                token = bare[: -len(ending)]
                break
        if len(token) >= 3 and token.endswith(_ASPECT_SUFFIXES) and "가" <= token[-2] <= "힣":
            token = token[:-1]
        token = _MONTH_SHARE_RE.sub(r"\1", token)
        if (
            (len(token) < _MIN_TOKEN_LENGTH and not _synonyms(token))
            or token in tokens
            or bare in _QUESTION_WORDS
            or token in _QUESTION_WORDS
            or bare.startswith(_QUESTION_STEMS)
        ):
            continue
        tokens.append(token)
    return tokens[:_MAX_QUERY_TOKENS]


# ---------------------------------------------------------------------------------------------------------------
# Evidence text: what the model sees
# ---------------------------------------------------------------------------------------------------------------


def _effective_text(record: "VendorRecord") -> str:
    if not (record.effective_from or record.effective_to):
        return ""
    start = record.effective_from.isoformat() if record.effective_from else ""
    end = record.effective_to.isoformat() if record.effective_to else ""
    today = timezone.localdate()
    if record.effective_to and record.effective_to < today:
        state = " (종료)"
    elif record.effective_from and record.effective_from > today:
        state = " (예정)"
    else:
        state = ""
    return f"적용 기간: {start} ~ {end}{state}"


def record_evidence_text(record: "VendorRecord") -> str:
    lines = [f"[{record.get_kind_display()}] {record.title}", record.body, values_text(record.values or {})]
    lines.append(_effective_text(record))
    return "\n".join(line for line in lines if line)


def product_evidence_text(product: "Product", brand_name: str | None) -> str:
    brand = f"{brand_name} " if brand_name else ""
    return f"{brand}{product.name} ({product.sku}) 단가 {product.unit_price:,}원"


# ---------------------------------------------------------------------------------------------------------------
# Search
# ---------------------------------------------------------------------------------------------------------------

# The similar pass (pg_trgm word similarity) runs only for tokens of three or more word characters that no exact
# hit contains: a token an exact hit holds is already found at its best score.
_TRIGRAM_MIN_WORD_CHARS = 3  # shorter tokens share trigrams with half of any text (`or`, `1=1`)
_NON_WORD = re.compile(r"\W")
_MIN_SYNONYM_LENGTH = 2  # a one-syllable word for the subject (돈) is inside too many others


def _synonyms(token: str) -> list[str]:
    """The other words for the subject ``token`` names (agent.knowledge.synonyms), longest first."""
    variants = subject_variants(token) - {token}
    return sorted((word for word in variants if len(word) >= _MIN_SYNONYM_LENGTH), key=lambda word: (-len(word), word))


# Words that ask about what is coming: records that start after the question's dates are evidence then.
_FUTURE_CUES = ("예정", "다음", "앞으로", "다가오는", "내년", "예약", "사전")


def _records_window(query: str, on: datetime.date | None) -> tuple:
    """(first day, last day or None) a record's effective period must overlap; None: open towards the future."""
    window = question_window(query, today=on)
    return window.start, None if any(cue in query for cue in _FUTURE_CUES) else window.end


def _about_months_asked(records: list, query: str) -> list:
    """Without the records about other months than the ones the question names: an undated record is about the
    months its title or values name ("10월 정산 내역", `정산 월: 2026-10`), so "11월치 정산금" is not answered by
    October's settlement. A record naming no month, or a question naming none, keeps every record."""
    asked = months_named(query)
    if not asked:
        return records
    return [
        record
        for record in records
        if not (named := months_named(f"{record.title} {values_text(record.values)}")) or named & asked
    ]


def vendor_records_search(
    *, vendor: "Vendor", query: str, limit: int, on: datetime.date | None = None
) -> list[EvidenceItem]:
    """The vendor's records and products that match `query`, best first, as evidence items (unmasked).

    The vendor filter is part of every query, so another vendor's row can never be returned: asking for it
    by its exact title, SKU or vendor name gives the same empty list as asking for something that does not
    exist. Records are in force on `on` (default today) or in the period the question names (see
    `_records_window`), and about the months it names, if it names any (`_about_months_asked`).
    """
    query = spoken_forms_written(query)
    tokens = query_tokens(query)
    if limit <= 0 or not tokens:
        return []
    window_start, window_end = _records_window(query, on)
    rows_query = VendorRowsQuery(
        vendor_id=vendor.pk,
        tokens=tuple(tokens),
        synonyms={token: _synonyms(token) for token in tokens},
        window_start=window_start,
        window_end=window_end,
        limit=limit,
    )
    found = vendor_rows_match(rows_query)
    found_in = [row.search_text for row in [*found.records, *found.products]]
    similar_tokens = [
        token
        for token in tokens
        if len(_NON_WORD.sub("", token)) >= _TRIGRAM_MIN_WORD_CHARS and not any(token in text for text in found_in)
    ]
    if similar_tokens:
        found = vendor_rows_match_similar(found, rows_query, similar_tokens)
    records = _about_months_asked(found.records, query)
    products = found.products
    items = [_record_item(record) for record in records] + [_product_item(product) for product in products]
    items.sort(key=lambda item: -item.score)
    return items[:limit]


def _record_item(record: "VendorRecord") -> EvidenceItem:
    return EvidenceItem(
        source_kind="record",
        reference=f"record:{record.pk}",
        text=record_evidence_text(record),
        score=round(record.score, 4),
        title=record.title,
        extra={
            "kind": record.kind,
            "values": record.values,
            "effective_from": record.effective_from.isoformat() if record.effective_from else None,
            "effective_to": record.effective_to.isoformat() if record.effective_to else None,
            "source": record.source,
            "source_id": record.source_id,
            "as_of": (record.effective_from or record.updated_at.date()).isoformat(),
        },
    )


def _product_item(product: "Product") -> EvidenceItem:
    return EvidenceItem(
        source_kind="record",
        reference=f"product:{product.pk}",
        text=product_evidence_text(product, product.brand_name),
        score=round(product.score, 4),
        title=product.name,
        extra={
            "kind": "product",
            "sku": product.sku,
            "brand": product.brand_name or "",
            "unit_price": product.unit_price,
        },
    )
