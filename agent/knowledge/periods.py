"""Effective periods: which dated evidence is in force on the date a question is about.

A record carries its period in fields (`effective_from` / `effective_to`); a hub passage carries it in its
section path (`2026년 하반기 주요 행사 일정 > 김장 채소 특가전 (11월 10일 ~ 11월 30일)`, the year from the
document title). A question is about today unless it names a month or a date range of its own (`7~8월 특가`,
`10월 정산`, `9월 1일부터`); then evidence overlapping that window is in force, so an ended promotion still
answers a question that names its period.

The date forms read here are the few that evidence periods are written in; value parsing for answers belongs to
the verification package's parsers (dates and durations there once merged) — this module only needs ranges.
"""

import calendar
import datetime
import re
from dataclasses import dataclass

from django.utils import timezone

_YEAR_RE = re.compile(r"(20\d{2})\s*년")
_ISO_DATE = r"(20\d{2})-(\d{1,2})-(\d{1,2})"
_MONTH_DAY = r"(?:(20\d{2})\s*년\s*)?(\d{1,2})\s*월(?:\s*(\d{1,2})\s*일)?"
_RANGE_RE = re.compile(
    rf"(?:{_ISO_DATE}|{_MONTH_DAY})\s*[~∼〜–-]\s*(?:{_ISO_DATE}|{_MONTH_DAY}|(\d{{1,2}})\s*일|(\d{{1,2}})\s*월)"
)
_SINGLE_RE = re.compile(rf"{_ISO_DATE}|{_MONTH_DAY}")
# Days of one month written as "12월 29~31일".
_DAY_RANGE_RE = re.compile(r"(\d{1,2})\s*월\s*(\d{1,2})\s*일?\s*[~∼〜–-]\s*(\d{1,2})\s*일")
# A bare month pair written as "7~8월" (the first month has no 월 of its own).
_MONTH_PAIR_RE = re.compile(r"(?<![\d-])(\d{1,2})\s*[~∼〜–-]\s*(\d{1,2})\s*월")
_RELATIVE_MONTHS = {"지난달": -1, "지난 달": -1, "전월": -1, "이번 달": 0, "이번달": 0, "이달": 0, "금월": 0,
                    "다음 달": 1, "다음달": 1, "익월": 1}  # fmt: skip


@dataclass(frozen=True)
class Period:
    start: datetime.date | None  # None: open at the start
    end: datetime.date | None  # None: open at the end

    def overlaps(self, other: "Period") -> bool:
        return (self.start is None or other.end is None or self.start <= other.end) and (
            self.end is None or other.start is None or other.start <= self.end
        )

    def contains(self, day: datetime.date) -> bool:
        return (self.start is None or self.start <= day) and (self.end is None or day <= self.end)


def _safe_date(year: int, month: int, day: int) -> datetime.date | None:
    if not (1 <= month <= 12):
        return None
    last = calendar.monthrange(year, month)[1]
    return datetime.date(year, month, min(max(day, 1), last)) if 1 <= day <= 31 else None


def _month_end(year: int, month: int) -> datetime.date | None:
    return _safe_date(year, month, calendar.monthrange(year, month)[1]) if 1 <= month <= 12 else None


def _endpoint(groups: tuple, year: int, *, end: bool) -> tuple[datetime.date | None, int, int]:
    """(date, year, month) of one side of a match: ISO, or `[YYYY년] M월 [D일]`."""
    iso_year, iso_month, iso_day, md_year, md_month, md_day = groups
    if iso_year:
        return _safe_date(int(iso_year), int(iso_month), int(iso_day)), int(iso_year), int(iso_month)
    year = int(md_year) if md_year else year
    month = int(md_month)
    if md_day:
        return _safe_date(year, month, int(md_day)), year, month
    return (_month_end(year, month) if end else _safe_date(year, month, 1)), year, month


def period_in(text: str, *, year: int) -> Period | None:
    """The first date range (`9월 1일 ~ 9월 24일`, `2026-11-01 ~ 2026-12-15`, `7~8월`) or single month/date
    (`2026년 11월`, `10월`) written in `text`; a year that is not written is `year`. None when there is none."""
    year = int(match.group(1)) if (match := _YEAR_RE.search(text)) else year
    if match := _DAY_RANGE_RE.search(text):
        month, first, last = (int(group) for group in match.groups())
        start, end = _safe_date(year, month, first), _safe_date(year, month, last)
        if start and end and start <= end:
            return Period(start, end)
    if match := _RANGE_RE.search(text):
        groups = match.groups()
        start, start_year, start_month = _endpoint(groups[0:6], year, end=False)
        day_only, month_only = groups[12], groups[13]
        if day_only:
            end = _safe_date(start_year, start_month, int(day_only))
        elif month_only:
            end = _month_end(start_year, int(month_only))
        else:
            end, _, _ = _endpoint(groups[6:12], start_year, end=True)
        if start and end and start <= end:
            return Period(start, end)
    if match := _MONTH_PAIR_RE.search(text):
        first, last = int(match.group(1)), int(match.group(2))
        start, end = _safe_date(year, first, 1), _month_end(year, last)
        if start and end and start <= end:
            return Period(start, end)
    if match := _SINGLE_RE.search(text):
        start, _, _ = _endpoint(match.groups(), year, end=False)
        end, _, _ = _endpoint(match.groups(), year, end=True)
        if start and end:
            return Period(start, end)
    return None


# A relative month that asks for its day ("다음 달 며칠에 나와요?") names a payment or delivery term, not the month
# the question is about.
_DAY_ASKED_RE = re.compile(r"^\s*(?:몇\s*일|며칠|언제)")
# Seasons as a vendor names a promotion or a rule by them ("여름 특가", "겨울철 배송"): (first month, months long).
_SEASONS = {"봄": (3, 3), "여름": (6, 3), "가을": (9, 3), "겨울": (12, 3)}
_SEASON_RE = re.compile(r"(?<![가-힣])(봄|여름|가을|겨울)(?:철|에|엔|의|은|는|이|때|\s|$)")
# The two holidays promotions and rules are named by, by the months they fall in (their day moves with the moon).
_HOLIDAY_MONTHS = {"설": (1, 2), "추석": (9, 10)}
_HOLIDAY_RE = re.compile(
    r"(?<![가-힣])(추석|설)(?=\s|$|[·,/]|날|명절|연휴|행사|선물|특가|기획|대목|맞이|용|에|엔|때|이|은|도|까지|전에)"
)
# "지난 김장 특가전", "지난번 행사": something that happened before, whenever it was; "작년" / "지난해": last year.
_PAST_EVENT_RE = re.compile(r"(?<![가-힣])(?:지난\s+(?![달주])|지난번)")
_LAST_YEAR_RE = re.compile(r"(?<![가-힣])(?:작년|지난해|전년)")


def _season(name: str, today: datetime.date) -> Period:
    """The season's months this year, or last year's when this year's has not begun (winter: into the next)."""
    first, length = _SEASONS[name]
    year = today.year if datetime.date(today.year, first, 1) <= today else today.year - 1
    last_index = year * 12 + first - 1 + length - 1
    end_year, end_month = divmod(last_index, 12)
    return Period(datetime.date(year, first, 1), _month_end(end_year, end_month + 1))


def question_window(question: str, *, today: datetime.date | None = None) -> Period:
    """The days a question is about: the period it names (`11월 행사`, `지난달 정산`, `여름 특가`, `작년`), the
    past when it names something that happened before (`지난 김장 특가전`: open at the start, ending today), else
    today alone."""
    today = today or timezone.localdate()
    for phrase, shift in _RELATIVE_MONTHS.items():
        # 익월 in a question is a term ("익월 25일"), not its date; so is a relative month whose day is asked.
        if phrase in question and phrase != "익월" and not _DAY_ASKED_RE.match(question.split(phrase, 1)[1]):
            month_index = today.year * 12 + today.month - 1 + shift
            year, month = divmod(month_index, 12)
            return Period(datetime.date(year, month + 1, 1), _month_end(year, month + 1))
    if named := period_in(question, year=today.year):
        if _LAST_YEAR_RE.search(question) and not _YEAR_RE.search(question):
            return _year_before(named)  # "작년 11월 정산": last year's November, not this year's
        return named
    if _LAST_YEAR_RE.search(question):
        return Period(datetime.date(today.year - 1, 1, 1), datetime.date(today.year - 1, 12, 31))
    if match := _HOLIDAY_RE.search(question):
        return _nearest_holiday(match.group(1), today)
    if match := _SEASON_RE.search(question):
        return _season(match.group(1), today)
    if _PAST_EVENT_RE.search(question):
        return Period(None, today)
    return Period(today, today)


def holiday_period(text: str, *, year: int) -> Period | None:
    """The months of the holiday `text` names (`2026년 추석 연휴 운영 안내`, `설 선물세트`), in the year it writes, else
    in `year`; None when it names none."""
    match = _HOLIDAY_RE.search(text)
    if not match:
        return None
    written = _YEAR_RE.search(text)
    return _holiday_in(match.group(1), int(written.group(1)) if written else year)


def _holiday_in(name: str, year: int) -> Period:
    months = _HOLIDAY_MONTHS[name]
    return Period(datetime.date(year, months[0], 1), _month_end(year, months[-1]))


def _nearest_holiday(name: str, today: datetime.date) -> Period:
    """The holiday's months nearest to today: asked in December, 추석 is the one just past and 설 the one coming."""

    def distance(period: Period) -> int:
        if period.contains(today):
            return 0
        return (period.start - today).days if period.start > today else (today - period.end).days

    return min((_holiday_in(name, today.year + shift) for shift in (-1, 0, 1)), key=distance)


def _year_before(period: Period) -> Period:
    def shifted(day: datetime.date | None) -> datetime.date | None:
        return _safe_date(day.year - 1, day.month, day.day) if day else None

    return Period(shifted(period.start), shifted(period.end))


# A month named as what something is about: `11월`, `11월분`, `2026-10` (a record's `정산 월`). A month followed by
# its day (`10월 15일`, `2026-11-10`) is when something happens, not what it is about.
_MONTH_ALONE_RE = re.compile(r"(?<![\d-])(\d{1,2})\s*월(?!\s*\d{1,2}\s*일)")
_RANGE_MONTH_RE = re.compile(r"20\d{2}-(\d{1,2})-\d{1,2}|(?<!\d)(\d{1,2})\s*월")
_YEAR_MONTH_RE = re.compile(r"(?<![\d-])20\d{2}-(\d{1,2})(?![\d-])")


def months_named(text: str) -> frozenset[int]:
    """The months `text` names as a period (1–12): a month (`11월`, `11월분`, `2026-10`), a range of months or
    dates (`11~12월`, `2026-11-01 ~ 2026-12-15`, `12월 29~31일`) and the holidays 설 and 추석. A single day
    (`10월 15일`, `2026-11-10`) names none: it is when something happens, not what it is about."""
    months: set[int] = set()
    rest = text
    for pattern in (_DAY_RANGE_RE, _RANGE_RE, _MONTH_PAIR_RE):
        for match in pattern.finditer(rest):
            if pattern is _MONTH_PAIR_RE:
                ends = [int(match.group(1)), int(match.group(2))]  # "11~12월": the first month has no 월
            else:
                ends = [int(iso or written) for iso, written in _RANGE_MONTH_RE.findall(match.group(0))]
            ends = [month for month in ends if 1 <= month <= 12]
            if ends:
                # From the first month to the last, across the new year when it ends before it starts (11월 ~ 1월).
                span = (ends[-1] - ends[0]) % 12
                months.update((ends[0] - 1 + step) % 12 + 1 for step in range(span + 1))
            rest = rest.replace(match.group(0), " ")
    months.update(int(month) for month in _MONTH_ALONE_RE.findall(rest) if 1 <= int(month) <= 12)
    months.update(int(month) for month in _YEAR_MONTH_RE.findall(rest) if 1 <= int(month) <= 12)
    for holiday in _HOLIDAY_RE.findall(text):
        months.update(_HOLIDAY_MONTHS[holiday])
    return frozenset(months)


# A month's figure: a settlement, purchase or sales total of one month (`9월 정산`, `10월분 매입`, `8월 매출`).
_MONTH_FIGURE_RE = re.compile(r"(?<![\d-])\d{1,2}\s*월\s*(?:분|치|달|한\s*달)?\s*(?:에\s*)?(?:매입|정산|매출|실적)")


def month_figure_asked(question: str) -> bool:
    """Whether the question asks about one month's figure (`9월 정산 금액`, `8월분 매입 정산액`, `9월에 정산 받은
    금액`): the figure of a month is stated only about that month."""
    return bool(_MONTH_FIGURE_RE.search(question))


def period_phrase(question: str) -> str:
    """The words of `question` that name the period `question_window` reads ("여름에 … 특가" → `여름`, "11월 행사"
    → `11월`), "" when it names none."""
    for phrase in _RELATIVE_MONTHS:
        if phrase in question and phrase != "익월" and not _DAY_ASKED_RE.match(question.split(phrase, 1)[1]):
            return phrase
    for pattern in (_RANGE_RE, _SINGLE_RE, _LAST_YEAR_RE, _SEASON_RE, _PAST_EVENT_RE):
        if match := pattern.search(question):
            return (match.group(1) if pattern is _SEASON_RE else match.group(0)).strip()
    return ""


def in_force(period: Period | None, window: Period) -> bool:
    """Whether evidence with `period` (None: undated, always in force) may answer a question about `window`."""
    return period is None or period.overlaps(window)
