"""Reads of the vendors app: vendor lookups, the names revision other caches key on, the resolution index."""

import threading
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max

from vendors.models import Vendor
from vendors.resolution import Resolution, VendorIndex, normalize_name

# Bumped (on commit) by every vendor write in vendors.services. It closes the gap the table aggregate alone
# leaves: a transaction that saved earlier but commits later does not raise Max(updated_at).
VENDOR_NAMES_GENERATION_KEY = "vendors:names:generation"


def vendor_get_by_code(code: str) -> Vendor | None:
    return Vendor.objects.filter(code=code).first()


def vendor_names_revision() -> str:
    """A cheap token that changes whenever any vendor's name, aliases or active flag may have changed.

    One aggregate query (count and latest `updated_at`; every vendor save goes through the ORM, which sets
    `updated_at`) plus the write generation from the shared cache. Caches of vendor names key on it.
    """
    row = Vendor.objects.aggregate(count=Count("id"), last_updated=Max("updated_at"))
    last_updated = row["last_updated"].isoformat() if row["last_updated"] else "-"
    generation = cache.get(VENDOR_NAMES_GENERATION_KEY, 0)
    return f"{row['count']}:{last_updated}:{generation}"


def vendor_names_all() -> list[tuple[str, list[str]]]:
    """Every active vendor as (code, [name, *aliases]), ordered by code. Names are as stored, not normalised."""
    return [
        (code, [name, *aliases])
        for code, name, aliases in Vendor.objects.filter(is_active=True)
        .order_by("code")
        .values_list("code", "name", "aliases")
    ]


def vendor_ids_by_alias(term: str) -> list[int]:
    """Ids of vendors with an alias containing `term`, compared normalised (`대한 물산` finds `대한물산`).

    Aliases are a JSON list, and SQLite stores non-ASCII JSON escaped, so the match runs here rather than in SQL.
    """
    needle = normalize_name(term)
    if not needle:
        return []
    return [
        pk
        for pk, aliases in Vendor.objects.exclude(aliases=[]).values_list("pk", "aliases")
        if any(needle in normalize_name(alias) for alias in aliases)
    ]


@dataclass(frozen=True)
class _CachedIndex:
    revision: str
    index: VendorIndex


_cached_index: _CachedIndex | None = None
_index_build_lock = threading.Lock()


def vendor_index_get() -> VendorIndex:
    """The resolution index of active vendors, built once per process and rebuilt when the revision changes.

    The revision is checked on every call rather than every few seconds: resolution runs only when a room
    is new, renamed or re-resolved by staff, so one aggregate query is cheap there, and a vendor change is
    never missed by a stale index (a wrong vendor is the worst outcome).
    """
    global _cached_index
    # Read the revision before the rows: a change in between makes the next call rebuild, never the reverse.
    revision = vendor_names_revision()
    cached = _cached_index
    if cached is not None and cached.revision == revision:
        return cached.index
    with _index_build_lock:
        cached = _cached_index
        if cached is not None and cached.revision == revision:
            return cached.index
        index = VendorIndex.build((code, names[0], names[1:]) for code, names in vendor_names_all())
        _cached_index = _CachedIndex(revision=revision, index=index)
        return index


def room_name_resolve(room_name: str) -> Resolution:
    """Resolve a room name against the current vendors with the configured threshold and candidate limit."""
    return vendor_index_get().resolve(
        room_name,
        typo_threshold=settings.RESOLUTION_TYPO_THRESHOLD,
        candidate_limit=settings.RESOLUTION_CANDIDATE_LIMIT,
    )
