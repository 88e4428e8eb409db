"""Swapped values: a draft that uses only true numbers and still attaches one to the wrong subject.

In a text a value belongs to the subject written with it: the words of the nearest stretch before it in the same
clause that holds words ("솔빛 고등어캔 400g 4,800원": both values belong to 솔빛 고등어캔). Clauses end at
``, · / ; ( )``, at sentence ends and at line ends, never inside a value (a number, a date, a URL); a table row
is one line, so its cells belong to the subject in its first cells. A draft value is a swap when its subject is
one the evidence gives exactly one value of that kind and dimension, the draft's value differs, and the evidence
gives the draft's value to another subject. Precision comes first: a subject is a product-like word (three or
more syllables, or letters with digits: an SKU or a model) or two words written together as the evidence writes
them, and every such subject of the draft's stretch must agree.
"""

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from agent.verification.korean import strip_particle_variants
from agent.verification.numbers import Quantity, format_quantity, parse_quantities
from agent.verification.values import QUANTITY, Value, display, parse_values

_CLAUSE_BREAKS = frozenset(",·/;()\n")  # a table row is one line: its cells are one clause
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)")
_WORD_RE = re.compile(r"[A-Za-z0-9가-힣][A-Za-z0-9가-힣\-_+&.]*")
_HAS_HANGUL = re.compile(r"[가-힣]")
_HAS_LATIN = re.compile(r"[A-Za-z]")
_HAS_DIGIT = re.compile(r"[0-9]")
# Words that name what a value is, not whose it is: they never make a subject on their own.
_ATTRIBUTE_WORDS = frozenset(
    (
        "단가",
        "가격",
        "공급가",
        "판매가",
        "납품가",
        "소비자가",
        "정상가",
        "행사가",
        "할인가",
        "할인",
        "할인율",
        "금액",
        "비용",
        "요금",
        "배송비",
        "수수료",
        "최소",
        "최대",
        "주문",
        "수량",
        "기준",
        "행사",
        "적용",
        "이상",
        "이하",
        "미만",
        "초과",
        "약",
        "총",
        "각",
        "개당",
        "박스당",
        "기간",
        "조건",
        "현재",
        "기존",
        "변경",
        "경우",
        "이번",
        "다음",
        "지난",
        "올해",
        "매월",
        "매주",
        "문의",
        "안내",
        "참고",
        "상품",
        "제품",
        "가능",
        "모두",
        "각각",
        "전체",
        "일반",
        "신규",
        "특별",
    )
)
_WINDOW_CHARS = 400
_MEMO_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Attached:
    """A value with the subject words it belongs to."""

    group: tuple  # kind and dimension: ("amount",), ("percent",), ("quantity", "weight") ...
    key: object  # the normalised value within the group
    shown: str  # as a reason or suggestion shows it: 4,800원, 15%, 400g
    subject: tuple[str, ...]  # the subject's words, particles removed, in order
    span: tuple[int, int]
    value: object  # the interface value (a number, or {"value", "unit"})
    raw: str


@dataclass(frozen=True, slots=True)
class Swap:
    attached: Attached  # the draft's value
    subject: str  # the subject that the evidence gives another value
    expected: Attached  # the evidence's value for that subject


def _stems(words: Iterable[str]) -> tuple[str, ...]:
    """Each word without its particle, keeping two characters at least ("가을" is not 가 + 을)."""
    return tuple(next((v for v in reversed(strip_particle_variants(word)) if len(v) >= 2), word) for word in words)


def _group_and_key(item: Quantity | Value) -> tuple[tuple, object, str]:
    if isinstance(item, Quantity):
        return (str(item.kind),), item.value, format_quantity(item)
    return (QUANTITY, item.dimension), (item.number, item.unit), display(item)


@lru_cache(maxsize=_MEMO_SIZE)
def attachments(text: str) -> tuple[Attached, ...]:
    """Every exact amount, percentage and quantity of ``text`` with the subject it belongs to (remembered per
    text: evidence stretches recur across drafts and rounds)."""
    quantities = [quantity for quantity in parse_quantities(text) if not quantity.approx]
    values = parse_values(text)
    protected = sorted([*(quantity.span for quantity in quantities), *(value.span for value in values)])
    items = sorted([*quantities, *(value for value in values if value.kind == QUANTITY)], key=lambda item: item.span)
    found = []
    subject: tuple[str, ...] = ()
    cursor = 0
    for item in items:
        start, end = item.span
        segment_start = cursor
        clause_break = _last_break(text, cursor, start, protected)
        if clause_break is not None:  # a new clause: the subject before the break is not this value's
            subject, segment_start = (), clause_break
        words = _WORD_RE.findall(_blank(text[segment_start:start], segment_start, protected))
        stems = tuple(stem for stem in _stems(words) if _HAS_HANGUL.search(stem) or _HAS_LATIN.search(stem))
        if stems and (not subject or _subjects_of(stems)):
            subject = stems
        elif stems:  # attribute words only ("고등어캔 400g 단가 4,800원"): still the same subject
            subject = (*subject, *stems)
        # else the value follows another one ("400g 4,800원") and shares its subject
        group, key, shown = _group_and_key(item)
        found.append(Attached(group, key, shown, subject, (start, end), item.value, item.raw))
        cursor = end
    return tuple(found)


def _blank(segment: str, offset: int, protected: list[tuple[int, int]]) -> str:
    """``segment`` (at ``offset`` of its text) with the protected spans inside it replaced by spaces."""
    chars = list(segment)
    for start, end in protected:
        for index in range(max(start, offset), min(end, offset + len(segment))):
            chars[index - offset] = " "
    return "".join(chars)


def _last_break(text: str, start: int, end: int, protected: list[tuple[int, int]]) -> int | None:
    """Just past the last clause break in ``text[start:end]`` outside the protected spans, or None."""
    last = None
    for index in range(start, end):
        if text[index] in _CLAUSE_BREAKS and not _inside(index, protected):
            last = index + 1
    for match in _SENTENCE_END_RE.finditer(text, start, end):
        if not _inside(match.start(), protected) and (last is None or match.end() > last):
            last = match.end()
    return last


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _subjects_of(words: tuple[str, ...]) -> list[str]:
    """The product-like subjects among a stretch's words: single words of three or more syllables or with
    letters and digits (SKUs, models), and pairs of adjacent words (a brand and a product noun, a two-word
    title such as 가을 행사) — never a word or a pair that only names attributes (단가, 할인율, 최소 주문 ...)."""
    subjects = []
    for word in words:
        if word in _ATTRIBUTE_WORDS:
            continue
        hangul = len(_HAS_HANGUL.findall(word))
        if hangul >= 3 or (_HAS_DIGIT.search(word) and _HAS_LATIN.search(word)) or (hangul == 0 and len(word) >= 3):
            subjects.append(word)
    for left, right in pairwise(words):
        if (left not in _ATTRIBUTE_WORDS or right not in _ATTRIBUTE_WORDS) and len(left) >= 2 and len(right) >= 2:
            subjects.append(f"{left} {right}")
    return subjects


def _has_subject(attached: Attached, subject: str) -> bool:
    words = subject.split(" ")
    if len(words) == 1:
        return subject in attached.subject
    return any(attached.subject[index : index + len(words)] == tuple(words) for index in range(len(attached.subject)))


def _break_positions(passage: str, start: int, end: int) -> list[int]:
    """Positions just past a line end or a sentence end in ``passage[start:end]``."""
    breaks = [index + 1 for index in range(start, end) if passage[index] == "\n"]
    breaks += [match.end() for match in _SENTENCE_END_RE.finditer(passage, start, end)]
    return sorted(breaks)


def _windows(passage: str, subject: str) -> Iterable[str]:
    """The stretch around each occurrence of ``subject``: from a sentence or line start before it to a sentence
    or line end after it, the neighbouring sentence (or table row) on each side included when short."""
    position = passage.find(subject)
    while position != -1:
        low = max(0, position - _WINDOW_CHARS // 2)
        before = _break_positions(passage, low, position)
        start = 0 if low == 0 else before[0] if before else position
        high = min(len(passage), position + _WINDOW_CHARS)
        after = [index for index in _break_positions(passage, position + len(subject), high) if index < high]
        end = len(passage) if high == len(passage) else after[-1] if after else high
        if end < len(passage) and not after:  # no break within reach: go on to the next one
            following = _break_positions(passage, high, min(len(passage), high + _WINDOW_CHARS))
            end = following[0] if following else min(len(passage), high + _WINDOW_CHARS)
        yield passage[start:end]
        position = passage.find(subject, max(position + 1, end))


def find_swaps(
    draft: str, evidence: tuple[str, ...], evidence_text: str, supported: Callable[[Attached], bool]
) -> list[Swap]:
    """Draft values attached to a subject that the evidence gives exactly one other value (see the module)."""
    swaps = []
    for attached in attachments(draft):
        if not attached.subject or not supported(attached):
            continue
        subjects = [subject for subject in _subjects_of(attached.subject) if subject in evidence_text]
        resolved: dict[str, Attached] = {}
        partner_found = False
        for subject in subjects:
            own, others = _evidence_values(evidence, subject, attached.group)
            if len(own) > 1:
                continue
            if len(own) == 1:
                resolved[subject] = next(iter(own.values()))
            partner_found = partner_found or attached.key in others
        expected_keys = {item.key for item in resolved.values()}
        if len(expected_keys) != 1:
            continue  # no subject the evidence pins down, or subjects that disagree
        expected = next(iter(resolved.values()))
        if expected.key == attached.key or not partner_found:
            continue
        swaps.append(Swap(attached, max(resolved, key=len), expected))
    return swaps


def _evidence_values(evidence: tuple[str, ...], subject: str, group: tuple) -> tuple[dict, set]:
    """The values of ``group`` the evidence attaches to ``subject`` (by key), and those it attaches to other
    subjects that have a product-like word."""
    own: dict = {}
    others: set = set()
    for passage in evidence:
        if subject not in passage:
            continue
        for window in _windows(passage, subject):
            for item in attachments(window):
                if item.group != group:
                    continue
                if _has_subject(item, subject):
                    own.setdefault(item.key, item)
                elif _subjects_of(item.subject):
                    others.add(item.key)
    return own, others
