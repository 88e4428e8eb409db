"""Swapped values: a draft that uses only true values and still attaches one to the wrong subject.

In a text a value belongs to the subject written with it: the words of the nearest stretch before it in the same
clause that holds words ("솔빛 고등어캔 400g 4,800원": both values belong to 솔빛 고등어캔). Clauses end at
``, · / ; ( )``, at sentence ends and at line ends, never inside a value (a number, a date, a URL); a table row
is one line, so its cells belong to the subject in its first cells. A draft value is a swap when its subject is
one the evidence gives exactly one value of that kind and dimension, the draft's value differs, and the evidence
gives the draft's value to another subject — or, for a date or a time, to the same subject as the other end of
its period (``12월 3일부터 12월 17일까지`` retold as ``12월 17일부터 12월 3일까지``). Precision comes first: a subject
is a product-like word (three or more syllables, or letters with digits: an SKU or a model) or two words written
together as the evidence writes them, and every such subject of the draft's stretch must agree.

Values are amounts, percentages and quantities, and dates and clock times. A date's dimension is its shape — a
calendar date (a year aside: its month and day), a day of the month (``매월 10일`` and ``익월 10일`` alike) or a
weekday — and, for dates and times, its place in a period: a start (``부터``, ``~``), an end (``까지``, or after a
``~``) or neither. A clock time is compared on the twelve-hour dial (a bare ``5시`` may be 17:00): two subjects
whose times differ only by 오전/오후 are never told apart.
"""

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from agent.verification.korean import strip_particle_variants
from agent.verification.numbers import (
    Quantity,
    QuantityKind,
    format_quantity,
    parse_quantities,
    states_pair,
    value_signature,
)
from agent.verification.values import DATE, QUANTITY, TIME, Value, clause_bounds, display, parse_values

# Clause breaks (a table row is one line: its cells are one clause); . ! ? only before a space or the end.
_BREAK_RE = re.compile(r"[,·/;()\n.!?]")
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
_WINDOW_CHARS = 200
# A subject written more often than this in the evidence is a brand or a vendor, not one product or record.
_MAX_SUBJECT_OCCURRENCES = 3
# A subject's values are looked for in its sentence, with the rows of a table around it (rows are short lines).
_SENTENCE_ENDS = ("\n\n", ". ", ".\n")
_WORD_CHAR_RE = re.compile(r"[A-Za-z0-9가-힣]")
_NOT_SIGNIFICANT_RE = re.compile(r"[^1-9]+")
_MEMO_SIZE = 4096
_WORD_MEMO_SIZE = 16384


@dataclass(frozen=True, slots=True)
class Attached:
    """A value with the subject words it belongs to."""

    group: tuple  # kind and dimension: ("amount",), ("quantity", "weight"), ("date", "day", "end") ...
    key: object  # the normalised value within the group
    shown: str  # as a reason or suggestion shows it: 4,800원, 15%, 400g, 10일, 오후 2시
    subject: tuple[str, ...]  # the subject's words, particles removed, in order
    span: tuple[int, int]
    value: object  # the interface value (a number, or {"value", "unit"})
    raw: str


@dataclass(frozen=True, slots=True)
class Swap:
    attached: Attached  # the draft's value
    subject: str  # the subject that the evidence gives another value
    expected: Attached  # the evidence's value for that subject


@lru_cache(maxsize=_WORD_MEMO_SIZE)  # words recur across drafts and evidence
def _lettered_stem(word: str) -> str:
    """The word without its particle, keeping two characters at least ("가을" is not 가 + 을); "" when the stem
    holds no Hangul or Latin letter (a number, a code)."""
    stem = next((variant for variant in reversed(strip_particle_variants(word)) if len(variant) >= 2), word)
    return stem if _HAS_HANGUL.search(stem) or _HAS_LATIN.search(stem) else ""


# Where a date or time stands in a period, read from what follows it (or, for an end, the "~" before it).
_PERIOD_START_AFTER = ("부터", "~", "∼", "에서")
_PERIOD_END_AFTER = ("까지",)
_PERIOD_END_BEFORE_RE = re.compile(r"[~∼]\s*$")


def _period_place(text: str, start: int, end: int) -> str:
    after = text[end : end + 3].lstrip()
    if after.startswith(_PERIOD_END_AFTER) or _PERIOD_END_BEFORE_RE.search(text, max(0, start - 3), start):
        return "end"
    if after.startswith(_PERIOD_START_AFTER):
        return "start"
    return ""


def _group_and_key(text: str, item: Quantity | Value) -> tuple[tuple, object, str] | None:
    """The kind and dimension, the comparison key and the shown form of a value; None for a value no subject
    holds alone (a year)."""
    if isinstance(item, Quantity):
        return (str(item.kind),), item.value, format_quantity(item)
    if item.kind == QUANTITY:
        return (QUANTITY, item.dimension), (item.number, item.unit), display(item)
    place = _period_place(text, *item.span)
    if item.kind == TIME:
        hour, minute = item.value.split(":")
        return (TIME, "clock", place), (int(hour) % 12, int(minute)), item.raw
    shape, _, rest = item.value.partition(":")
    if shape in ("day", "next_month_day"):
        return (DATE, "day", place), int(rest), item.raw
    if shape == "weekday":
        return (DATE, "weekday", place), rest, item.raw
    if shape == "year":
        return None
    return (DATE, "calendar", place), item.value[-5:], item.raw  # MM-DD of a full or a year-less date


_ATTACHED_KINDS = (QUANTITY, DATE, TIME)


@lru_cache(maxsize=_MEMO_SIZE)
def attachments(text: str) -> tuple[Attached, ...]:
    """Every exact amount, percentage, quantity, date and time of ``text`` with the subject it belongs to
    (remembered per text: evidence stretches recur across drafts and rounds)."""
    return attach(text, parse_quantities(text), parse_values(text))


def attach(text: str, quantities: Iterable[Quantity], values: Iterable[Value]) -> tuple[Attached, ...]:
    """``attachments`` of a text already parsed into its amounts and percentages and its other values."""
    quantities = [quantity for quantity in quantities if not quantity.approx]
    values = list(values)
    items = sorted(
        [*quantities, *(value for value in values if value.kind in _ATTACHED_KINDS)], key=lambda item: item.span
    )
    if not items:
        return ()
    # Values are blanked out: their digits, commas and dots are neither words nor clause breaks.
    blanked = _blanked(text, sorted([*(quantity.span for quantity in quantities), *(value.span for value in values)]))
    breaks = [
        match.end()
        for match in _BREAK_RE.finditer(blanked)
        if match.group() not in ".!?" or match.end() == len(text) or text[match.end()].isspace()
    ]
    found = []
    subject: tuple[str, ...] = ()
    cursor = 0
    for item in items:
        start, end = item.span
        segment_start = cursor
        last_break = bisect_right(breaks, start) - 1
        if last_break >= 0 and breaks[last_break] > cursor:  # a new clause: the subject before it is not this one's
            subject, segment_start = (), breaks[last_break]
        words = _WORD_RE.findall(blanked, segment_start, start)
        stems = tuple(stem for stem in map(_lettered_stem, words) if stem)
        if stems and (not subject or _subjects_of(stems)):
            subject = stems
        elif stems:  # attribute words only ("고등어캔 400g 단가 4,800원"): still the same subject
            subject = (*subject, *stems)
        # else the value follows another one ("400g 4,800원") and shares its subject
        cursor = max(cursor, end)  # the weekdays of a list share one span
        if (grouped := _group_and_key(text, item)) is None:
            continue
        group, key, shown = grouped
        found.append(Attached(group, key, shown, subject, (start, end), item.value, item.raw))
    return tuple(found)


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the given spans (sorted) replaced by spaces."""
    parts = []
    position = 0
    for start, end in spans:
        start = max(start, position)
        if end > start:
            parts.append(text[position:start])
            parts.append(" " * (end - start))
            position = end
    parts.append(text[position:])
    return "".join(parts)


@lru_cache(maxsize=_MEMO_SIZE)  # asked for each draft value by attach and find_swaps
def _subjects_of(words: tuple[str, ...]) -> tuple[str, ...]:
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
    return tuple(subjects)


def _has_subject(attached: Attached, subject: str) -> bool:
    words = subject.split(" ")
    if len(words) == 1:
        return subject in attached.subject
    return any(attached.subject[index : index + len(words)] == tuple(words) for index in range(len(attached.subject)))


def _occurrences(text: str, subjects: Iterable[str]) -> dict[str, list[int]]:
    """Where each subject starts in ``text``, as a word ("고등어캔" not inside "참고등어캔"), for the subjects found;
    a subject is looked for only until it is written more often than ``_MAX_SUBJECT_OCCURRENCES`` (then it pins
    down nothing). A few subjects per draft: one ``str.find`` scan each is cheaper than an automaton's pass."""
    occurrences: dict[str, list[int]] = {}
    for subject in subjects:
        kept = []
        start = text.find(subject)
        while start != -1 and len(kept) <= _MAX_SUBJECT_OCCURRENCES:
            if start == 0 or not _WORD_CHAR_RE.match(text[start - 1]):
                kept.append(start)
            start = text.find(subject, start + 1)
        if kept:
            occurrences[subject] = kept
    return occurrences


_WEEKDAY_LETTERS = {"mon": "월", "tue": "화", "wed": "수", "thu": "목", "fri": "금", "sat": "토", "sun": "일"}


def _signatures(attached: Attached) -> set[str]:
    """The non-zero digits, in order, that every written form of the value holds (3,900원 and 3천9백원: "39";
    1.5L and 1,500ml: "15"); a number of months also as years (12개월: "12" and 1년: "1"); a clock time's hour
    on either dial (오후 2시 and 14:00: "2" or "14"); a calendar date's month and day (12월 3일 and 2026-12-03:
    "123"). A weekday has no digits: its letter stands in (looked for in the text itself)."""
    kind = attached.group[0]
    if kind == TIME:
        hour = attached.key[0]
        return {value_signature(hour or 12), value_signature(hour + 12)}
    if kind == DATE:
        shape = attached.group[1]
        if shape == "weekday":
            return {_WEEKDAY_LETTERS[attached.key]}
        if shape == "calendar":
            month, day = attached.key.split("-")
            return {value_signature(int(month)) + value_signature(int(day))}
        return {value_signature(attached.key)}
    number = attached.key[0] if kind == QUANTITY else attached.key
    signatures = {value_signature(number)}
    if attached.group == (QUANTITY, "months") and number % 12 == 0:
        signatures.add(value_signature(number // 12))
    return signatures


def _sentences_around(text: str, start: int, end: int) -> str:
    """The sentence holding ``text[start:end]`` with the sentence before and the one after it."""
    left, right = clause_bounds(text, start, end, _WINDOW_CHARS, _SENTENCE_ENDS)
    if left > 2:
        left = clause_bounds(text, left - 3, left - 2, _WINDOW_CHARS, _SENTENCE_ENDS)[0]
    if right + 2 < len(text):
        right = clause_bounds(text, right + 1, right + 2, _WINDOW_CHARS, _SENTENCE_ENDS)[1]
    return text[left:right]


def find_swaps(drafted: Iterable[Attached], evidence: str, supported: Callable[[Attached], bool]) -> list[Swap]:
    """Those of the draft's values (``attach``-ed) that are attached to a subject that ``evidence`` (the passages
    joined by line breaks) gives exactly one other value, while it gives the draft's value to another subject
    (see the module). Only the subjects of the values ``supported`` (stated by the evidence) are looked for."""
    candidates = []
    for attached in drafted:
        if attached.subject and supported(attached) and (subjects := _subjects_of(attached.subject)):
            candidates.append((attached, subjects))
    if not candidates:
        return []
    occurrences = _occurrences(evidence, {subject for _, subjects in candidates for subject in subjects})
    # The sentences around each subject the evidence writes one to three times (more often: a brand or a vendor,
    # which pins down nothing).
    windows_of = {
        subject: list(dict.fromkeys(_sentences_around(evidence, start, start + len(subject)) for start in starts))
        for subject, starts in occurrences.items()
        if len(starts) <= _MAX_SUBJECT_OCCURRENCES
    }
    swaps = []
    for attached, subjects in candidates:
        pinned = [subject for subject in subjects if subject in windows_of]
        if not _may_have_partner(attached, [window for subject in pinned for window in windows_of[subject]]):
            continue
        resolved: dict[str, Attached] = {}
        partner_found = False
        for subject in pinned:
            own, partner = _evidence_values(windows_of[subject], subject, attached)
            if own is not None:
                resolved[subject] = own
                partner_found = partner_found or partner
        if len({item.key for item in resolved.values()}) != 1:
            continue  # no subject the evidence pins down, or subjects that disagree
        expected = next(iter(resolved.values()))
        if expected.key != attached.key and partner_found:
            swaps.append(Swap(attached, max(resolved, key=len), expected))
    return swaps


_QUANTITY_KINDS = frozenset(QuantityKind)


def _may_have_partner(attached: Attached, windows: list[str]) -> bool:
    """False when no window around the draft value's subjects states an amount or percentage equal to it: then no
    other subject holds it there, so it is no swap, and the windows need no full parse (most of a cold evidence
    set's windows hold the signature of a round amount, 3,000원's "3", in some other number)."""
    if attached.group[0] not in _QUANTITY_KINDS:
        return True
    pair = (attached.group[0], attached.key)
    return any(states_pair(window, pair) for window in windows)


def _evidence_values(windows: list[str], subject: str, attached: Attached) -> tuple[Attached | None, bool]:
    """The one value of the draft value's kind and dimension that the evidence attaches to ``subject`` (None when
    it attaches none or several: the search stops at the second), and whether a sentence around the subject
    (``windows``) attaches the draft's value to another product-like subject."""
    signatures = _signatures(attached)
    weekday = attached.group[:2] == (DATE, "weekday")
    if not any(
        signature in (window if weekday else _NOT_SIGNIFICANT_RE.sub("", window))
        for window in windows
        for signature in signatures
    ):
        return None, False  # the draft's value is written nowhere near the subject: no other subject has it there
    own: Attached | None = None
    partner = False
    dimension = attached.group[:2]  # a period's start and end are one dimension for the partner
    for window in windows:
        for item in attachments(window):
            if item.group[:2] != dimension:
                continue
            of_subject = _has_subject(item, subject)
            if of_subject and item.group == attached.group:
                if own is not None and own.key != item.key:
                    return None, False
                own = own or item
            elif item.key == attached.key and (of_subject or _subjects_of(item.subject)):
                partner = True  # another subject's value, or the other end of this subject's period
    return own, partner
