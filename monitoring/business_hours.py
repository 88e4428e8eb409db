"""When staff are at work: weekdays and hours from settings, Korean public holidays from `holidays`."""

from datetime import datetime, time
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
