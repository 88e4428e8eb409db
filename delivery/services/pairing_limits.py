"""Failed pairing redeems, counted per client address and in total in the shared cache (Redis when configured).

A pairing code is short, so guessing is bounded by counting failures: at most `PAIRING_FAILURES_PER_ADDRESS` per
client address and `PAIRING_FAILURES_GLOBAL` in total within `PAIRING_FAILURE_WINDOW_MINUTES`. Past a limit the
redeem is refused before the code is looked at, so a refusal says nothing about any code.

The window slides in one-minute buckets. An attempt is allowed while the failures of the current bucket and of the
`window` buckets before it stay within the limit, so no span of `window` minutes ever holds more failures than the
limit (an address may wait up to one minute longer than the window). Each attempt first takes its place with one
atomic increment, then reads the other buckets, so concurrent requests cannot overrun a limit; a success gives its
place back. The bucket after the current one is read too: at a minute's turn a request whose clock still reads the
old minute must see the places already taken in the new one (without it, five late requests of the old minute and
five of the new would all be looked at).
"""

import contextlib
import ipaddress
import math
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

BUCKET_SECONDS = 60
_KEY_PREFIX = "vcs:pair:fail"
# Addresses of one IPv6 /64 belong to one customer line: counting them apart would give one client 2^64 tries.
_IPV6_PREFIX_LENGTH = 64


class PairingRateLimited(Exception):
    """Too many failed redeems from this address, or in total; `retry_after` is in whole seconds."""

    def __init__(self, retry_after: int):
        super().__init__(f"Pairing refused for {retry_after} s: too many failed redeems.")
        self.retry_after = retry_after


@dataclass(frozen=True)
class _Place:
    """One taken place in a limit's current bucket."""

    key: str

    def give_back(self) -> None:
        with contextlib.suppress(ValueError):  # the bucket already expired: nothing left to give back
            cache.decr(self.key)


@dataclass
class PairingAttempt:
    """The places one redeem took; `succeeded()` gives them back, a failure keeps them counted."""

    places: list[_Place]

    def succeeded(self) -> None:
        for place in self.places:
            place.give_back()


def pairing_attempt_begin(*, client_address: str) -> PairingAttempt:
    """Take a place under the address's limit and the global one, or raise `PairingRateLimited`."""
    now = timezone.now().timestamp()
    address_place = _take_place(
        f"{_KEY_PREFIX}:addr:{client_address_scope(client_address)}",
        limit=settings.PAIRING_FAILURES_PER_ADDRESS,
        now=now,
    )
    try:
        global_place = _take_place(f"{_KEY_PREFIX}:all", limit=settings.PAIRING_FAILURES_GLOBAL, now=now)
    except PairingRateLimited:
        address_place.give_back()
        raise
    return PairingAttempt(places=[address_place, global_place])


def client_address_scope(client_address: str) -> str:
    """What one client's failures are counted under: its IPv4 address, or the /64 of its IPv6 address."""
    try:
        address = ipaddress.ip_address(client_address.strip())
    except ValueError:
        return client_address.strip()[:100] or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/{_IPV6_PREFIX_LENGTH}", strict=False))
    return str(address)


def _take_place(prefix: str, *, limit: int, now: float) -> _Place:
    window_buckets = settings.PAIRING_FAILURE_WINDOW_MINUTES * 60 // BUCKET_SECONDS
    bucket = int(now // BUCKET_SECONDS)
    key = f"{prefix}:{bucket}"
    timeout = (window_buckets + 2) * BUCKET_SECONDS
    cache.add(key, 0, timeout=timeout)
    try:
        taken = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 0, timeout=timeout)
        taken = cache.incr(key)
    other_keys = {f"{prefix}:{b}": b for b in (*range(bucket - window_buckets, bucket), bucket + 1)}
    counts = {other_keys[k]: int(v) for k, v in cache.get_many(list(other_keys)).items()}
    if taken + sum(counts.values()) <= limit:
        return _Place(key)
    place = _Place(key)
    place.give_back()
    counts[bucket] = taken - 1
    raise PairingRateLimited(_retry_after(counts, bucket=bucket, window_buckets=window_buckets, limit=limit, now=now))


def _retry_after(counts: dict[int, int], *, bucket: int, window_buckets: int, limit: int, now: float) -> int:
    """Seconds until the failures still inside the window leave room for one more."""
    for ahead in range(1, window_buckets + 2):
        oldest_counted = bucket + ahead - window_buckets
        if sum(n for b, n in counts.items() if b >= oldest_counted) < limit:
            return max(math.ceil((bucket + ahead) * BUCKET_SECONDS - now), 1)
    return (window_buckets + 1) * BUCKET_SECONDS
