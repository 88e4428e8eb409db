"""Names shaped like a brand or a business that occur nowhere: not in the evidence, not in the question, not among
the known brands or vendors (`별빛농장 제품도 …`, `‘별빛’ 브랜드`). A model that invents one presents a supplier or a
product line the records do not know; the rewrite either finds it or drops the sentence.

A name is recognised by its shape, not by a list of names:

- a word (less its particle) that ends in a business ending (`농장`, `식품`, `상사`, `푸드` … below) after a stem of
  two characters or more that is not a category word (`가공식품`, `체험농장`, `스마트팜` are ordinary compounds), and
  whose stem is not a word of the evidence or the question (`딸기농장` in an answer about 딸기);
- a quoted name right before a word for a product or a brand (`‘별빛’ 브랜드`, `「별빛」 제품`, `"별빛"이라는 상품`).

Either is a violation only when the whole name, spaces aside, occurs in neither the evidence nor the question and
is no known brand. The caller leaves out the spans other checks already own (brands, vendor names, misspellings).
"""

import re
from dataclasses import dataclass

from agent.verification.brands import EvidenceText, NameIndex
from agent.verification.korean import fold, is_hangul_syllable, is_particle

# Endings of business and brand names. `유통`, `산업`, `무역` are left out: `식품유통`, `식품산업` are everyday words.
BUSINESS_ENDINGS = (
    "농장",
    "농원",
    "목장",
    "상사",
    "상회",
    "물산",
    "식품",
    "푸드",
    "제과",
    "수산",
    "축산",
    "유업",
    "팜",
)
# Stems that make an ordinary compound with a business ending: a category, a process, a place, a kind of farm.
# A stem that ends in one of these is one too (`유기가공식품`).
CATEGORY_STEMS = frozenset(
    (
        "가공", "건강", "기능", "기능성", "냉동", "냉장", "신선", "발효", "간편", "즉석", "전통", "유기", "유기농",
        "친환경", "무농약", "대체", "일반", "가정", "급식", "수입", "수출", "국내", "국산", "해외", "외국", "지역",
        "로컬", "슬로", "패스트", "정크", "비건", "스마트", "종합", "직장", "협력", "거래", "계약", "직영", "산지",
        "인근", "주말", "체험", "관광", "도시", "농수산", "수산", "축산", "농산", "원료", "포장", "온라인", "가맹",
        "대형", "중소", "개인", "가족", "해당", "다른", "기타", "주요", "관련", "한우", "젖소", "양돈", "양계",
        "낙농", "과수", "화훼", "버섯", "인삼", "딸기", "사과", "포도", "감귤", "해양", "농림", "어린이", "영유아",
        "유아", "노인", "고령친화", "반려동물", "다이어트", "할랄", "슈퍼", "수퍼", "헬시", "핑거", "소울",
    )
)  # fmt: skip
MIN_STEM_LENGTH = 2
_ENDING_RE = re.compile("|".join(BUSINESS_ENDINGS))
# A quoted name (letters or digits at both ends) before a word for a product or a brand, `(이)라는` allowed between.
_QUOTED_NAME_RE = re.compile(
    r"[‘'\"“「『]\s*([가-힣A-Za-z0-9][^‘’'\"“”「」『』\n:]{0,18}[가-힣A-Za-z0-9])\s*[’'\"”」』]\s*"
    r"(?:이라는|라는)?\s*(?:브랜드|제품|상품)"
)
_QUOTE_OPENERS = "‘'\"“「『"


@dataclass(frozen=True, slots=True)
class UnknownName:
    word: str  # as written in the draft, without its particle or quotes
    start: int
    end: int


def _is_name_character(char: str) -> bool:
    return is_hangul_syllable(char) or (char.isascii() and char.isalpha())


def _shaped_names(text: str) -> list[tuple[int, int, int]]:
    """(start, stem end, end) of the words ending in a business ending (a particle may follow), and
    (start, end, end) of the quoted names before a product or brand word."""
    shaped = []
    for match in _ENDING_RE.finditer(text):
        start, end = match.start(), match.end()
        while start > 0 and _is_name_character(text[start - 1]):
            start -= 1
        rest_end = end
        while rest_end < len(text) and is_hangul_syllable(text[rest_end]):
            rest_end += 1
        if rest_end > end and not is_particle(text[end:rest_end]):
            continue  # the ending is inside a longer word (`식품점`, `수산물`)
        if match.start() - start >= MIN_STEM_LENGTH:
            shaped.append((start, match.start(), end))
    if any(opener in text for opener in _QUOTE_OPENERS):
        for match in _QUOTED_NAME_RE.finditer(text):
            shaped.append((match.start(1), match.end(1), match.end(1)))
    return shaped


def _is_category(stem: str) -> bool:
    return any(stem.endswith(category) for category in CATEGORY_STEMS)


def find_unknown_brands(
    text: str,
    *,
    evidence: EvidenceText,
    question: str,
    known_brands: NameIndex,
    taken: list[tuple[int, int]],
) -> list[UnknownName]:
    """The brand- or business-shaped names of ``text`` (see the module) found nowhere, outside ``taken``.

    Cheap when the draft has none: one scan for the endings and, when a quote mark is present, one for quoted
    names; the evidence is compacted only when a candidate is left after the spans and the name shapes."""
    found = []
    question_compact = None
    for start, stem_end, end in _shaped_names(text):
        if any(start < taken_end and taken_start < end for taken_start, taken_end in taken):
            continue
        name = text[start:end]
        stem = text[start:stem_end]
        if stem_end < end and _is_category(stem):
            continue
        folded = fold(name)
        if known_brands.has_pattern(folded):
            continue
        if question_compact is None:
            question_compact = "".join(fold(question).split())
        compact = "".join(folded.split())
        if compact in question_compact or compact in evidence.compact:
            continue
        if stem_end < end and (evidence.has_word(fold(stem)) or _has_word(question, stem)):
            continue
        found.append(UnknownName(word=name, start=start, end=end))
    return found


def _has_word(text: str, word: str) -> bool:
    return EvidenceText.of((text,)).has_word(fold(word)) if text else False
