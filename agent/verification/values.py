"""Dates, clock times, quantities and contacts in Korean text, with normalised values.

Each value has a ``key`` that two texts agree on when they state the same thing (``12월 5일`` and ``2026-12-05``
share the month-day key, ``1.5L`` and ``1,500ml`` the quantity key), and the interface ``value`` of
docs/verification.md. Like the amount parser, this only reads what is written with digits (and weekday names):
relative words (오늘, 내일, 이번 주), months alone and spelled-out numbers are not values.
"""

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

import ahocorasick

from agent.verification.korean import PARTICLES, UNIT_FOLLOWERS, is_hangul_syllable

DATE, TIME, QUANTITY, CONTACT = "date", "time", "quantity", "contact"
VALUE_KINDS = (CONTACT, DATE, TIME, QUANTITY)  # in the order they are read

WEEKDAYS = {"월": "mon", "화": "tue", "수": "wed", "목": "thu", "금": "fri", "토": "sat", "일": "sun"}


@dataclass(frozen=True, slots=True)
class Value:
    kind: str  # "date" | "time" | "quantity" | "contact"
    value: str | dict  # the interface form: "2026-12-05", "14:00", {"value": 1500, "unit": "ml"}, "0212345678"
    span: tuple[int, int]
    raw: str
    unit: str | None = None  # quantities: the unit in the smallest of its conversion group
    dimension: str | None = None  # quantities: "weight", "volume", "months", or the unit itself
    ambiguous_hour: bool = False  # a bare "3시": 03:00 or 15:00

    @property
    def number(self) -> int | float | None:
        return self.value["value"] if isinstance(self.value, dict) else None

    def keys(self) -> tuple:
        """What this value states, as comparison keys (two for a bare hour)."""
        if self.kind == QUANTITY:
            return ((QUANTITY, self.number, self.unit),)
        if self.kind == TIME and self.ambiguous_hour:
            hour, minute = self.value.split(":")
            other = (int(hour) + 12) % 24
            return ((TIME, self.value), (TIME, f"{other:02d}:{minute}"))
        return ((self.kind, self.value),)

    def as_dict(self) -> dict:
        payload = {"kind": self.kind, "value": self.value, "span": list(self.span), "raw": self.raw}
        if self.unit is not None:
            payload["unit"] = self.unit
        return payload


# --- contacts ---------------------------------------------------------------------------------------------

_EMAIL_RE = re.compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
# Patterns start with a character class and check what precedes it right after it ("[0-9](?<![0-9][0-9])" is
# a digit no digit precedes): the regex engine then skips fast to where a value can start, where a leading
# lookbehind would make it try every position.
_PHONE_BODY = r"0[0-9]{1,2}\)?[ \-.)]?[0-9]{3,4}[ \-.][0-9]{4}"
_PHONE_RE = re.compile(
    r"(?:"
    rf"\+(?<![0-9\-.]\+)82[ \-]?\(?{_PHONE_BODY}"  # +82-2-1234-5678
    rf"|\((?<![0-9\-.]\(){_PHONE_BODY}"  # (02)123-4567
    rf"|0(?<![0-9\-.]0){_PHONE_BODY[1:]}"  # 02-1234-5678, 010 1234 5678
    r"|0(?<![0-9\-.]0)1[016789][0-9]{7,8}"  # 01012345678
    r"|1(?<![0-9\-.]1)[5-9][0-9]{2}-[0-9]{4}"  # 1588-1234
    r")(?![0-9])"
)
_TLDS = r"(?:co\.kr|or\.kr|go\.kr|ac\.kr|com|net|org|kr|io|shop|biz|info|me|co)"
_URL_RE = re.compile(
    r"(?:(?:https?://)(?:www\.)?|www\.)[A-Za-z0-9\-._~%]+(?:/[^\s<>\"'()\[\]가-힣]*)?"
    rf"|(?<![@A-Za-z0-9.\-])[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.{_TLDS}(?![A-Za-z0-9\-])(?:/[^\s<>\"'()\[\]가-힣]*)?",
    re.IGNORECASE,
)
_URL_TRAILING = ".,;:!?"
# Every URL the pattern reads has a scheme (so "://"), www. or a listed domain ending: a cheap look first, led by
# the literals ":" and "." that the regex engine skips ahead to.
_MAY_HOLD_URL_RE = re.compile(rf"://|\.(?<=www\.)|\.{_TLDS}(?![A-Za-z0-9\-])", re.IGNORECASE)


_NOT_DIGIT_RE = re.compile(r"[^0-9]")


def _contacts(text: str) -> list[Value]:
    found = []
    if "@" in text:
        for match in _EMAIL_RE.finditer(text):
            found.append(Value(CONTACT, match.group().lower(), match.span(), match.group()))
    for match in _PHONE_RE.finditer(text):
        written = match.group()
        digits = _NOT_DIGIT_RE.sub("", written)
        if written.startswith("+82"):
            digits = "0" + digits[2:].lstrip("0")
        found.append(Value(CONTACT, digits, match.span(), written))
    for match in _URL_RE.finditer(text) if _MAY_HOLD_URL_RE.search(text) else ():
        start, end = match.span()
        while end > start and text[end - 1] in _URL_TRAILING:
            end -= 1
        written = text[start:end]
        found.append(Value(CONTACT, normalise_url(written), (start, end), written))
    return found


_SCHEME_RE = re.compile(r"^https?://")


def normalise_url(url: str) -> str:
    """In lower case, without scheme, ``www.`` and trailing ``/`` (a path's case is not a different answer)."""
    return _SCHEME_RE.sub("", url.lower()).removeprefix("www.").rstrip("/")


# --- dates ------------------------------------------------------------------------------------------------

_NOT_BEFORE_ISO = r"0-9.\-/"
_NOT_BEFORE_NUMERIC_DATE = r"0-9.\-/,"


def _one_or_two_digits(not_before: str) -> str:
    """One or two digits, the first of which no character of the class ``not_before`` precedes."""
    return f"[0-9](?<![{not_before}][0-9])[0-9]?"


# A year 19xx or 20xx that no {0} precedes.
_LED_YEAR = "[12](?<![{0}][12])(?:(?<=1)9|(?<=2)0)[0-9]{{2}}"
# Alternatives, each with a literal it cannot match without (see _alternatives): year, month and day.
_FULL_DATE_RES = (
    ("년", re.compile(rf"({_LED_YEAR.format('0-9')}) ?년 ?([0-9]{{1,2}}) ?월 ?([0-9]{{1,2}}) ?일")),
    (None, re.compile(rf"({_LED_YEAR.format(_NOT_BEFORE_ISO)})([-./])([0-9]{{1,2}})\2([0-9]{{1,2}})\.?(?![0-9])")),
)
_MONTH_DAY_RES = (
    ("월", re.compile(rf"({_one_or_two_digits('0-9')}) ?월 ?([0-9]{{1,2}}) ?일")),
    ("/", re.compile(rf"({_one_or_two_digits(_NOT_BEFORE_NUMERIC_DATE)})/([0-9]{{1,2}})(?![0-9/%])")),
    (".", re.compile(rf"({_one_or_two_digits(_NOT_BEFORE_NUMERIC_DATE)})\.([0-9]{{1,2}})\.(?![0-9])")),
)
_YEAR_RE = re.compile(rf"({_LED_YEAR.format('0-9')}) ?년(?!간|도 ?[0-9]| ?동안| ?이내)")
# 매월 10일, 익월 25일, 다음 달 15일, a bare 15일 — but 15일 간/이내/후 ... is a duration (a quantity).
_NEXT_MONTH_WORDS = ("익월", "다음 달", "다음달", "차월", "내달")
_DAY_RE = re.compile(rf"({_one_or_two_digits('0-9.,')})(?: ?~ ?([0-9]{{1,2}}))? ?일(?!요일)")
_DURATION_AFTER_DAY = ("간", "이내", "안에", "안으로", "동안", "후", "뒤", "전", "마다", "내", "째", "치", "씩", "분")
_PER_DAY_RE = re.compile(r" ?[0-9]+ ?(?:회|번|건|차례)")
_NIGHTS_BEFORE_RE = re.compile(r"[0-9]박 ?$")
_WEEKDAY_CHARS = "월화수목금토일"
_WEEKDAY_RES = (
    ("요일", re.compile(rf"([{_WEEKDAY_CHARS}])요일")),
    ("(", re.compile(rf"\(([{_WEEKDAY_CHARS}])\)")),
    # a list or a range of days (월·수·금, 월~금)
    (
        None,
        re.compile(
            rf"([{_WEEKDAY_CHARS}](?<![가-힣0-9][{_WEEKDAY_CHARS}])(?: ?[·/~\-] ?[{_WEEKDAY_CHARS}])+)"
            r"(?:요일)?(?![가-힣])"
        ),
    ),
)
_WEEKDAY_LIST = 2


def _alternatives(text: str, alternatives: tuple[tuple[str | None, re.Pattern], ...]) -> Iterator[tuple[int, re.Match]]:
    """The matches ``finditer`` of the patterns joined by ``|`` would give (the first alternative that matches
    at the leftmost position, the search going on after it), each with its alternative's index. An alternative
    is skipped where the text lacks the literal given with it, without which it cannot match.

    Each pattern starts with a character class or a literal, which the regex engine skips ahead to; it cannot
    do so for an alternation of groups, and tries that at every position of the text."""
    patterns = [pattern for literal, pattern in alternatives if literal is None or literal in text]
    indexes = [index for index, (literal, _) in enumerate(alternatives) if literal is None or literal in text]
    upcoming = [pattern.search(text) for pattern in patterns]
    while True:
        best = None
        for position, match in enumerate(upcoming):
            if match is not None and (best is None or match.start() < upcoming[best].start()):
                best = position
        if best is None:
            return
        chosen = upcoming[best]
        yield indexes[best], chosen
        end = chosen.end()
        for position, match in enumerate(upcoming):
            if match is not None and match.start() < end:  # overlapped by the chosen match: look again after it
                upcoming[position] = patterns[position].search(text, end)


_NOT_WEEKDAY_RE = re.compile(r"[^월화수목금토일]")


def _dates(text: str, taken: list[tuple[int, int]]) -> list[Value]:
    found = []

    def add(value: str, start: int, end: int) -> None:
        found.append(Value(DATE, value, (start, end), text[start:end]))
        taken.append((start, end))

    for alternative, match in _alternatives(text, _FULL_DATE_RES):
        if alternative == 0:
            year, month, day = match.group(1), match.group(2), match.group(3)
        else:
            year, month, day = match.group(1), match.group(3), match.group(4)
        if _valid_month_day(month, day):
            add(f"{int(year):04d}-{int(month):02d}-{int(day):02d}", *match.span())
    for _, match in _alternatives(text, _MONTH_DAY_RES):
        if _overlaps_any(match.span(), taken):
            continue
        month, day = match.group(1), match.group(2)
        if _valid_month_day(month, day):
            add(f"{int(month):02d}-{int(day):02d}", *match.span())
    for match in _YEAR_RE.finditer(text) if "년" in text else ():
        if not _overlaps_any(match.span(), taken):
            add(f"year:{match.group(1)}", *match.span())
    for match in _DAY_RE.finditer(text) if "일" in text else ():
        if _overlaps_any(match.span(), taken) or _is_duration_day(text, match):
            continue
        prefix = "next_month_day" if _after_next_month_word(text, match.start()) else "day"
        days = [match.group(1)] + ([match.group(2)] if match.group(2) else [])
        if not all(1 <= int(day) <= 31 for day in days):
            continue
        if len(days) == 1:
            add(f"{prefix}:{int(days[0])}", *match.span())
        else:  # 10~12일: both ends
            add(f"{prefix}:{int(days[0])}", match.start(), match.end(1))
            add(f"{prefix}:{int(days[1])}", match.start(2), match.end())
    for alternative, match in _alternatives(text, _WEEKDAY_RES):
        if _overlaps_any(match.span(), taken):
            continue
        # 월·수·금 is three days; 월~금 is its two ends (the days between are not written, so not stated)
        letters = _NOT_WEEKDAY_RE.sub("", match.group(1)) if alternative == _WEEKDAY_LIST else match.group(1)
        for letter in letters:
            found.append(Value(DATE, f"weekday:{WEEKDAYS[letter]}", match.span(), match.group()))
        taken.append(match.span())
    return found


def _valid_month_day(month: str, day: str) -> bool:
    return 1 <= int(month) <= 12 and 1 <= int(day) <= 31


def _is_duration_day(text: str, match: re.Match) -> bool:
    end = match.end()
    after = text[end : end + 1]
    rest = text[end + 1 : end + 3] if after == " " else text[end : end + 2]
    if after == " " and rest.startswith(("이내", "안에", "안으로", "동안", "후", "뒤", "전", "마다", "내", "간")):
        return True
    if text.startswith(_DURATION_AFTER_DAY, end):
        return True
    if after and is_hangul_syllable(after):
        # 영업일, 일간 are handled as quantities; another word glued on ("1일차") is no day of the month
        run_end = end
        while run_end < len(text) and is_hangul_syllable(text[run_end]):
            run_end += 1
        if text[end:run_end] not in PARTICLES and not text[end:run_end].startswith(("자", "까지", "부터")):
            return True
    if _PER_DAY_RE.match(text, end):  # 1일 2회: a rate, not a day
        return True
    return bool(_NIGHTS_BEFORE_RE.search(text, max(0, match.start() - 4), match.start()))


def _after_next_month_word(text: str, start: int) -> bool:
    before = text[max(0, start - 6) : start].rstrip()
    return before.endswith(_NEXT_MONTH_WORDS)


# --- clock times ------------------------------------------------------------------------------------------

_PERIODS = "오전|오후|새벽|아침|낮|점심|저녁|밤"
# 시 starting a word (시간, 시즌, 시장 ...) is not o'clock.
_NOT_OCLOCK = "(?!간|즌|리즈|스템|장|세|행|작|험|설|청|도)"
# The period word before a time (오후 2시) is looked for behind the number (see _period_before).
_HOUR_RE = re.compile(
    rf"({_one_or_two_digits('0-9.:')})(?: ?~ ?([0-9]{{1,2}}))? ?시{_NOT_OCLOCK}"
    r"(?: ?([0-9]{1,2}) ?분| ?(반))?"
)
_CLOCK_RE = re.compile(rf"({_one_or_two_digits('0-9.:')}):([0-9]{{2}})(?![0-9:])")
_PERIOD_WORDS = tuple(_PERIODS.split("|"))


def _period_before(text: str, start: int) -> tuple[str | None, int]:
    """The period word (오전, 오후, 밤 ...) right before ``start``, one space allowed, and where it starts."""
    end = start - 1 if text[start - 1 : start] == " " else start
    for period in _PERIOD_WORDS:
        if text.startswith(period, end - len(period)) and end - len(period) >= 0:
            return period, end - len(period)
    return None, start


def _clock(period: str | None, hour: int, minute: int, written_hour: str) -> tuple[str, bool] | None:
    if hour > 24 or minute > 59:
        return None
    ambiguous = False
    if period in ("오후", "저녁", "낮", "점심"):
        hour = hour + 12 if hour < 12 else hour
        if period in ("낮", "점심") and hour >= 12 + 6:  # 낮 12시 is noon, 낮 2시 is 14:00
            hour -= 12
    elif period == "밤":
        hour = 0 if hour == 12 else hour + 12 if 5 <= hour < 12 else hour
    elif period in ("오전", "새벽", "아침"):
        hour = 0 if hour == 12 else hour
    elif 1 <= hour <= 12 and not written_hour.startswith("0"):
        ambiguous = True  # a bare 3시 is 03:00 or 15:00
    return f"{hour:02d}:{minute:02d}", ambiguous


def _times(text: str, taken: list[tuple[int, int]]) -> list[Value]:
    found = []
    for match in _CLOCK_RE.finditer(text) if ":" in text else ():
        period, start = _period_before(text, match.start())
        span = (start, match.end())
        if _overlaps_any(span, taken):
            continue
        clock = _clock(period, int(match.group(1)), int(match.group(2)), match.group(1))
        if clock:
            found.append(Value(TIME, clock[0], span, text[start : span[1]], ambiguous_hour=clock[1]))
            taken.append(span)
    for match in _HOUR_RE.finditer(text) if "시" in text else ():
        period, start = _period_before(text, match.start())
        span = (start, match.end())
        if _overlaps_any(span, taken):
            continue
        first, second = match.group(1), match.group(2)
        minute = 30 if match.group(4) else int(match.group(3) or 0)
        hours = [first] + ([second] if second else [])
        last = len(hours) - 1
        clocks = [_clock(period, int(hour), minute if index == last else 0, hour) for index, hour in enumerate(hours)]
        if not all(clocks):
            continue
        for clock in clocks:
            found.append(Value(TIME, clock[0], span, text[start : span[1]], ambiguous_hour=clock[1]))
        taken.append(span)
    return found


# --- quantities -------------------------------------------------------------------------------------------

# unit as written → (unit reported, factor to it, dimension). Weight, volume and months/years convert within
# their group; every other unit is its own dimension (영업일 never equals 일, 주 is not 7일).
_CONVERTED = {
    "mg": ("g", Decimal("0.001"), "weight"),
    "g": ("g", 1, "weight"),
    "그램": ("g", 1, "weight"),
    "kg": ("g", 1000, "weight"),
    "킬로그램": ("g", 1000, "weight"),
    "킬로": ("g", 1000, "weight"),
    "t": ("g", 10**6, "weight"),
    "톤": ("g", 10**6, "weight"),
    "ml": ("ml", 1, "volume"),
    "mL": ("ml", 1, "volume"),
    "밀리리터": ("ml", 1, "volume"),
    "l": ("ml", 1000, "volume"),
    "L": ("ml", 1000, "volume"),
    "리터": ("ml", 1000, "volume"),
    "개월": ("개월", 1, "months"),
    "년": ("개월", 12, "months"),
}
_COUNTERS = (
    *("영업일", "일간", "시간", "주", "일"),  # durations
    *("개입", "개", "박스", "상자", "팩", "롤", "세트", "포대", "포", "봉지", "봉", "캔", "병", "입"),
    *("팔레트", "파레트", "대", "명", "회", "장", "매", "종", "켤레", "벌", "권", "통", "판", "줄"),
    *("묶음", "다스", "카톤", "케이스", "피스", "건", "곳", "가지", "인분", "인", "평", "인치"),
    *("EA", "ea", "PCS", "pcs", "W", "kW", "kWh", "mAh", "V", "cm", "mm", "m", "km"),
)
_UNITS = sorted([*_CONVERTED, *_COUNTERS], key=len, reverse=True)
_NUMBER_REST = r"(?:,[0-9]{3})*(?:\.[0-9]+)?"
_NUMBER = rf"[0-9]+{_NUMBER_REST}"
_UNIT_ALTERNATION = "|".join(map(re.escape, _UNITS))
_QUANTITY_RE = re.compile(
    rf"([0-9](?<![0-9A-Za-z.,\-_][0-9])[0-9]*{_NUMBER_REST})([천만])?"
    rf"(?: ?[~\-] ?({_NUMBER})([천만])?)? ?({_UNIT_ALTERNATION})"
)
# What may follow a unit in the same word: particles, and these ("100박스씩", "30롤짜리", "3영업일 이내").
_UNIT_FOLLOWERS = (
    *UNIT_FOLLOWERS,
    "단위",
    "내외",
    "부터",
    "까지",
    "이내",
    "안에",
    "동안",
    "간",
    "후",
    "뒤",
    "전",
    "마다",
    "기준",
    "한정",
    "묶음",
    "들이",
    "용",
)
_SMALL_MULTIPLIERS = {"천": 1000, "만": 10**4}
_LATIN_UNIT_RE = re.compile(r"[A-Za-z]")


def _quantities(text: str, taken: list[tuple[int, int]]) -> list[Value]:
    found = []
    for match in _QUANTITY_RE.finditer(text):
        if _overlaps_any(match.span(), taken):
            continue
        unit = match.group(5)
        end = match.end()
        after = text[end : end + 1]
        if _LATIN_UNIT_RE.match(unit) and after and (after.isascii() and after.isalnum()):
            continue  # "5ml" yes, "5mlx" or "3Ways" no
        if not _LATIN_UNIT_RE.match(unit) and after and is_hangul_syllable(after) and not _unit_may_end(text, end):
            continue  # "3개월" is read as 개월 (longest first); "2대표" is no quantity
        if unit == "년" and int(match.group(1).replace(",", "").split(".")[0]) >= 1900:
            continue  # a year
        if unit == "주" and text.startswith(("차", "년"), end):
            continue  # 2주차, 10주년: ordinals
        ends = [(match.group(1), match.group(2), match.span())]
        if match.group(3):  # 2~3박스: both ends, each with its own span
            ends = [
                (match.group(1), match.group(2), (match.start(), match.end(2) if match.group(2) else match.end(1))),
                (match.group(3), match.group(4), (match.start(3), end)),
            ]
        for number, multiplier, span in ends:
            value, reported, dimension = _normalise(number, multiplier, unit)
            found.append(
                Value(
                    QUANTITY,
                    {"value": value, "unit": reported},
                    span,
                    text[span[0] : span[1]],
                    unit=reported,
                    dimension=dimension,
                )
            )
        taken.append(match.span())
    return found


def _unit_may_end(text: str, position: int) -> bool:
    """Whether the Hangul after a unit is a particle (or begins with one: "박스는요") or a listed follower."""
    rest = text[position : position + 4]
    return rest.startswith(_UNIT_FOLLOWERS) or any(rest[:length] in PARTICLES for length in (3, 2, 1))


def _normalise(number: str, multiplier: str | None, unit: str) -> tuple[int | float, str, str]:
    amount = Decimal(number.replace(",", "")) * _SMALL_MULTIPLIERS.get(multiplier or "", 1)
    if unit in _CONVERTED:
        reported, factor, dimension = _CONVERTED[unit]
        amount *= Decimal(factor)
    else:
        reported = {"ea": "EA", "pcs": "PCS", "PCS": "PCS"}.get(unit, unit)
        dimension = reported
    value = int(amount) if amount == amount.to_integral_value() else float(amount)
    return value, reported, dimension


# --- all kinds --------------------------------------------------------------------------------------------


def _overlaps_any(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    start, end = span
    return any(start < other_end and other_start < end for other_start, other_end in spans)


def parse_values(text: str, kinds: Iterable[str] = VALUE_KINDS) -> list[Value]:
    """Every date, time, quantity and contact in ``text`` (those of ``kinds``), in order of position. Contacts
    are read first, then dates, times and quantities, each skipping what an earlier one took ("2026-12-05" is no
    phone number, "12월 5일" no duration), so a kind's values are the same whichever later kinds are asked for."""
    kinds = set(kinds)
    last = max(VALUE_KINDS.index(kind) for kind in kinds)
    occupied: list[tuple[int, int]] = []
    found: list[Value] = []
    contacts = _contacts(text)
    occupied.extend(value.span for value in contacts)
    if CONTACT in kinds:
        found.extend(contacts)
    if last >= VALUE_KINDS.index(DATE):
        dates = _dates(text, occupied)
        if DATE in kinds:
            found.extend(dates)
    if last >= VALUE_KINDS.index(TIME):
        times = _times(text, occupied)
        if TIME in kinds:
            found.extend(times)
    if QUANTITY in kinds:
        found.extend(_quantities(text, occupied))
    found.sort(key=lambda value: value.span)
    return found


# --- evidence ---------------------------------------------------------------------------------------------

_PASSAGE_MEMO_SIZE = 2048
_WINDOW_REACH = 100
_CLAUSE_ENDS = ("\n", ", ", ". ")


@lru_cache(maxsize=_PASSAGE_MEMO_SIZE)
def passage_value_keys(passage: str, kind: str | None = None) -> frozenset:
    """Every key the values of ``passage`` (of ``kind``, or all) state, with what a full date also states (its
    year and its day) and what a next-month day states (that day). Remembered per text and kind."""
    keys = set()
    for value in parse_values(passage, VALUE_KINDS if kind is None else (kind,)):
        keys.update(value.keys())
        keys.update(_implied_keys(value))
    return frozenset(keys)


def _implied_keys(value: Value) -> tuple:
    """A full date supports its year and its day; a year-less date its day; 익월 25일 the day 25 (the month-day
    of a full date is compared in ``is_supported``: 2025-12-05 must not support 2026-12-05 through it)."""
    if value.kind != DATE:
        return ()
    text = value.value
    if len(text) == 10:  # YYYY-MM-DD
        return ((DATE, f"year:{text[:4]}"), (DATE, f"day:{int(text[8:])}"))
    if len(text) == 5 and text[2] == "-":  # MM-DD
        return ((DATE, f"day:{int(text[3:])}"),)
    if text.startswith("next_month_day:"):
        return ((DATE, "day:" + text.split(":")[1]),)
    return ()


def is_supported(value: Value, keys: frozenset | set) -> bool:
    """Whether ``keys`` (from the evidence or the question) support ``value``: a month-day by a full date with
    that month and day and the other way round; a bare hour by either half of the day."""
    if not keys.isdisjoint(value.keys()):
        return True
    if value.kind != DATE:
        return False
    if len(value.value) == 10:  # a full date: the same month and day written without a year
        return (DATE, value.value[5:]) in keys
    if len(value.value) == 5 and value.value[2] == "-":  # a year-less date: a full date with its month and day
        return any(key[0] == DATE and len(key[1]) == 10 and key[1][5:] == value.value for key in keys)
    return False


def value_keys_among(passages: Iterable[str]) -> frozenset:
    """What a full parse of every passage states (the question; the property tests' reference)."""
    keys: set = set()
    for passage in passages:
        keys |= passage_value_keys(passage)
    return frozenset(keys)


def supported_in(values: Sequence[Value], text: str, folded: Callable[[], str]) -> list[bool]:
    """For each value, whether ``text`` (the evidence passages joined by line breaks; ``folded()``: the same,
    case-folded, asked for only when an e-mail address or a URL is looked for) states it — the answer of a full
    parse of each clause, without parsing the evidence in full.

    Every written form of a value holds one of its anchors (``25일`` or ``/25`` for the day 25, ``2시`` or
    ``14:00`` for 14:00, ``1.5L`` or ``1,500ml`` for 1,500ml, a phone number's last four digits): one
    Aho-Corasick pass finds them all, and only the clause around each hit is parsed (remembered per clause)."""
    answers = [False] * len(values)
    for latin in (False, True):
        owners: dict[str, list[int]] = {}
        for index, value in enumerate(values):
            if not answers[index]:
                for anchor in _anchors(value, latin):
                    owners.setdefault(anchor, []).append(index)
        if not owners:
            continue
        haystack = folded() if latin else text
        automaton = ahocorasick.Automaton()
        for anchor, indexes in owners.items():
            # A value's number never continues a number: a hit inside a longer one ("2시" in "12시") is skipped
            # (after leading zeros it is the same number: "05일").
            automaton.add_word(anchor, (len(anchor), anchor[0].isdigit(), anchor[-1].isdigit(), indexes))
        automaton.make_automaton()
        remaining = len([answer for answer in answers if not answer])
        last_index = len(haystack) - 1
        for last, (length, digit_first, digit_last, indexes) in automaton.iter(haystack):
            start = last - length + 1
            if (digit_first and start and "0" <= haystack[start - 1] <= "9" and _after_a_number(haystack, start)) or (
                digit_last and last < last_index and "0" <= haystack[last + 1] <= "9"
            ):
                continue
            pending = [index for index in indexes if not answers[index]]
            if not pending:
                continue
            clause = clause_around(haystack, start, last + 1)
            for index in pending:
                if is_supported(values[index], passage_value_keys(clause, values[index].kind)):
                    answers[index] = True
                    remaining -= 1
            if not remaining:
                return answers
    return answers


def _after_a_number(text: str, start: int) -> bool:
    """Whether the digits before ``start`` hold a non-zero digit (a longer number, not leading zeros)."""
    position = start - 1
    while position >= 0 and "0" <= text[position] <= "9":
        if text[position] != "0":
            return True
        position -= 1
    return False


def clause_around(text: str, start: int, end: int, reach: int = _WINDOW_REACH, ends=_CLAUSE_ENDS) -> str:
    """The clause of ``text`` holding ``text[start:end]``: from the last of ``ends`` before it to the first one
    after it, at most ``reach`` characters each way (widened to whole words there)."""
    left, right = clause_bounds(text, start, end, reach, ends)
    return text[left:right]


def clause_bounds(text: str, start: int, end: int, reach: int = _WINDOW_REACH, ends=_CLAUSE_ENDS) -> tuple[int, int]:
    low = max(0, start - reach)
    lefts = [position + len(mark) for mark in ends if (position := text.rfind(mark, low, start)) != -1]
    left = max(lefts, default=-1)
    if left == -1:
        # Widen to the start of the word the reach ends in, never narrow: the only space in the stretch may be the
        # one right before the value (`…co.kr익월 25일`), and cutting there would drop the 익월 it depends on.
        left = text.rfind(" ", 0, low) + 1 if low else 0
    high = min(len(text), end + reach)
    rights = [position for mark in ends if (position := text.find(mark, end, high)) != -1]
    if rights:
        right = min(rights) + (1 if text[min(rights)] == "." else 0)
    else:
        space = text.find(" ", high) if high < len(text) else -1
        right = len(text) if space == -1 else space
    return left, right


_UNIT_SPELLINGS: dict[str, list[tuple[str, Decimal]]] = {}
for _spelling, (_reported, _factor, _) in _CONVERTED.items():
    _UNIT_SPELLINGS.setdefault(_reported, []).append((_spelling, Decimal(_factor)))
for _unit in _COUNTERS:
    _UNIT_SPELLINGS.setdefault({"ea": "EA", "pcs": "PCS"}.get(_unit, _unit), []).append((_unit, Decimal(1)))
_WEEKDAY_LETTERS = {name: letter for letter, name in WEEKDAYS.items()}
_LIST_MARKS = ("·", "/", "~", "-")


@lru_cache(maxsize=4096)
def _cached_anchors(kind: str, value: str, ambiguous: bool, latin: bool) -> tuple[str, ...]:
    if kind == CONTACT:
        if "@" in value:
            return (value,) if latin else ()
        if value.isdigit():
            return () if latin else (value[-4:],)
        return (value.split("/")[0],) if latin else ()
    if latin:
        return ()
    if kind == DATE:
        return _date_anchors(value)
    if kind == TIME:
        return _time_anchors(value)
    number, unit = value.split(" ", 1)
    return _quantity_anchors(Decimal(number), unit)


def _anchors(value: Value, latin: bool) -> tuple[str, ...]:
    key = f"{value.number} {value.unit}" if value.kind == QUANTITY else value.value
    return _cached_anchors(value.kind, key, value.ambiguous_hour, latin)


def _date_anchors(value: str) -> tuple[str, ...]:
    if value.startswith("weekday:"):
        letter = _WEEKDAY_LETTERS[value.split(":")[1]]
        marks = [
            form
            for mark in _LIST_MARKS
            for form in (letter + mark, mark + letter, f"{letter} {mark}", f"{mark} {letter}")
        ]
        return (f"{letter}요일", f"({letter})", *marks)
    if value.startswith("year:"):
        return (value[5:],)
    if value.startswith(("day:", "next_month_day:")):
        day = int(value.split(":")[1])
        anchors = [f"{day}일", f"{day} 일", f"{day:02d}일", f"{day}~", f"{day} ~"]  # 10~12일: a range's low end
        if value.startswith("day:"):  # a date with that day states it too
            anchors += [f"/{day}", f"/{day:02d}", f".{day}.", f".{day:02d}", f"-{day:02d}", f"-{day}"]
        return tuple(dict.fromkeys(anchors))
    month, day = int(value[-5:-3]), int(value[-2:])  # MM-DD or YYYY-MM-DD: every form writes the month-day
    anchors = []
    for m in dict.fromkeys((str(month), f"{month:02d}")):
        anchors += [f"{m}월", f"{m} 월"]
        for d in dict.fromkeys((str(day), f"{day:02d}")):
            anchors += [f"{m}/{d}", f"{m}.{d}", f"-{m}-{d}"]
    return tuple(dict.fromkeys(anchors))


def _time_anchors(value: str) -> tuple[str, ...]:
    hour, minute = int(value[:2]), value[3:]
    hours = {hour, (hour + 12) % 24, (hour - 12) % 24, 12 if hour in (0, 12) else hour, 24 if hour == 0 else hour}
    anchors = []
    for candidate in sorted(hours):
        for written in dict.fromkeys((str(candidate), f"{candidate:02d}")):
            anchors += [f"{written}시", f"{written} 시", f"{written}:{minute}", f"{written}~", f"{written} ~"]
    return tuple(dict.fromkeys(anchors))


def _quantity_anchors(number: Decimal, unit: str) -> tuple[str, ...]:
    anchors = []
    for spelling, factor in _UNIT_SPELLINGS.get(unit, [(unit, Decimal(1))]):
        amount = number / factor
        # zero is written too, as a range's low end (`0~2일`)
        if amount < 0 or amount != amount.quantize(Decimal("0.001")):
            continue
        for written in _written_numbers(amount):
            anchors += [f"{written}{spelling}", f"{written} {spelling}"]
            anchors += [f"{written}~", f"{written} ~", f"{written}-"]  # a range's low end: 2~3박스
    return tuple(dict.fromkeys(anchors))


def _written_numbers(amount: Decimal) -> list[str]:
    if amount != amount.to_integral_value():
        return [format(amount.normalize(), "f")]
    whole = int(amount)
    forms = [str(whole), f"{whole:,}"]
    for size, word in ((10**4, "만"), (1000, "천")):
        if whole >= size and whole % size == 0:
            forms.append(f"{whole // size}{word}")
    return list(dict.fromkeys(forms))


def display(value: Value) -> str:
    """The value as the reason line shows it: 2026-12-05, 14:00, 1,500ml, 0212345678."""
    if value.kind == QUANTITY:
        return f"{value.number:,}{value.unit}"
    return str(value.value)
