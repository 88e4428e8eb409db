"""When staff are at work: weekdays and hours from settings, Korean public holidays from `holidays`."""

from datetime import datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

import holidays
from django.conf import settings


def is_business_time(moment: datetime) -> bool:
    local = moment.astimezone(ZoneInfo(settings.BUSINESS_TIME_ZONE))
    if local.isoweekday() not in settings.BUSINESS_DAYS:
        return False
    if local.date() in _public_holidays(local.year, settings.BUSINESS_HOLIDAY_COUNTRY):
        return False
    start = time.fromisoformat(settings.BUSINESS_HOURS_START)
    end = time.fromisoformat(settings.BUSINESS_HOURS_END)
    return start <= local.time() < end


@lru_cache(maxsize=8)
def _public_holidays(year: int, country: str):
    return holidays.country_holidays(country, years=[year])


def business_seconds_between(start: datetime, end: datetime, *, at_most: float | None = None) -> float:
    """Seconds of business time from `start` to `end` (0 when `end` is not later): the parts of each business day's
    hours the span covers. Counting stops once it passes `at_most`, so "is this past the SLA?" over a long span
    walks only as many days as it needs."""
    zone = ZoneInfo(settings.BUSINESS_TIME_ZONE)
    start, end = start.astimezone(zone), end.astimezone(zone)
    opens = time.fromisoformat(settings.BUSINESS_HOURS_START)
    closes = time.fromisoformat(settings.BUSINESS_HOURS_END)
    total, day = 0.0, start.date()
    while day <= end.date():
        if day.isoweekday() in settings.BUSINESS_DAYS and day not in _public_holidays(
            day.year, settings.BUSINESS_HOLIDAY_COUNTRY
        ):
            window_start = max(start, datetime.combine(day, opens, tzinfo=zone))
            window_end = min(end, datetime.combine(day, closes, tzinfo=zone))
            if window_end > window_start:
                total += (window_end - window_start).total_seconds()
                if at_most is not None and total > at_most:
                    return total
        day += timedelta(days=1)
    return total
