"""The resend window: drop a message whose key `(room, text, unread count, sent-by-me)` was seen within N seconds.

The KakaoTalk client re-sends the latest message of an unread room every 2 s; one message arrived 51 times.
The window slides: every repeat refreshes it, so a storm of any length keeps one copy. Time is the message's own
`sent_at` (not arrival), so a batch uploaded late after an outage is judged on when things were said, and a vendor
repeating "네" a minute later is a new message.

Within one batch the decision is made locally; only the first occurrence of each key is checked against the
shared window (Redis when configured — one atomic script call for all the batch's keys — else a database table
in the ingest transaction). The shared entry remembers which upload stored it — device and batch id, since batch
ids are unique per device only: if that batch's transaction failed and the uploader posts the same batch again,
its own mark must not make it drop its own messages.

A Redis restart forgets the window (one extra storm copy per key otherwise), so the database keeps what it needs
to rebuild it: the stored copy of every key is a message row already, and for keys whose later copies were dropped
as resends (the window slid past the stored copy) the ingest transaction writes the window's last-seen time to the
table — storms only, so an ordinary batch writes nothing more. Redis keeps a marker of when it started
remembering; until that is older than the key TTL, keys Redis does not know are looked up in the table and among
the stored messages before they are judged.
"""

import hashlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from config.redis import redis_client
from conversations.models import Message, ResendWindowEntry

_MARKER_KEY = "vcs:resend:since"
_DEGRADED = -1
# The owner of a key found among the stored messages: never equal to a "<device id>:<batch id>" owner, since the
# batch that stored the message was committed and is answered from its first result if it comes again.
_STORED_OWNER = "stored-message"

# KEYS = one window key per distinct key of the batch, then the marker key. ARGV = window_ms, owner, ttl_ms,
# now_ms, with_fallback (0|1), then for each window key: first_ms, last_ms and, with fallback, fallback_seen_ms
# ("" if none) and fallback_owner. Each stored value is "<last_seen_ms>|<owner that stored the key>".
# Without fallback, while the marker is missing or younger than the TTL (Redis may have forgotten keys),
# nothing is marked and the answer is {-1}: the caller reads the database and calls again with fallback.
# Otherwise returns, per key, the verdict (1 when its first occurrence in this batch is a resend), the last
# seen time and the owner now stored. One call per batch, atomic.
_CHECK_AND_MARK = """
local count = #KEYS - 1
local marker = KEYS[#KEYS]
local window = tonumber(ARGV[1])
local batch = ARGV[2]
local ttl = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if ARGV[5] ~= '1' then
  local since = redis.call('GET', marker)
  if not since then
    redis.call('SET', marker, now)
    return {-1}
  end
  if now - tonumber(since) < ttl then return {-1} end
end
local stride = 2
if ARGV[5] == '1' then stride = 4 end
local answer = {}
for i = 1, count do
  local base = 5 + stride * (i - 1)
  local first = tonumber(ARGV[base + 1])
  local last = tonumber(ARGV[base + 2])
  local prev_seen = nil
  local prev_owner = nil
  local prev = redis.call('GET', KEYS[i])
  if prev then
    local sep = string.find(prev, '|', 1, true)
    prev_seen = tonumber(string.sub(prev, 1, sep - 1))
    prev_owner = string.sub(prev, sep + 1)
  elseif stride == 4 and ARGV[base + 3] ~= '' then
    prev_seen = tonumber(ARGV[base + 3])
    prev_owner = ARGV[base + 4]
  end
  local seen = last
  local owner = batch
  local resend = 0
  if prev_seen then
    if prev_owner ~= batch and math.abs(first - prev_seen) <= window then
      resend = 1
      owner = prev_owner
    end
    if prev_seen > seen then seen = prev_seen end
  end
  redis.call('SET', KEYS[i], seen .. '|' .. owner, 'PX', ttl)
  answer[3 * i - 2] = resend
  answer[3 * i - 1] = seen
  answer[3 * i] = owner
end
return answer
"""


@dataclass(frozen=True)
class KeyOccurrences:
    """All occurrences of one resend key within a batch, in upload order."""

    room_id: int
    key_hash: str
    first_at: datetime
    last_at: datetime
    repeats_dropped: bool = False  # a later occurrence in the batch is a resend of an earlier one


def resend_key_hash(*, text: str, unread_count: int, sent_by_me: bool) -> str:
    raw = f"{text}\x1f{unread_count}\x1f{int(sent_by_me)}"
    return hashlib.sha256(raw.encode()).hexdigest()


def resend_owner(*, device_id: int, batch_id: str) -> str:
    """Who stored a key: a batch id names a batch only together with its device."""
    return f"{device_id}:{batch_id}"


def _window() -> timedelta:
    return timedelta(seconds=settings.RESEND_WINDOW_SECONDS)


def _ttl_ms() -> int:
    # The entry must outlive the window by the longest upload delay we still want to catch.
    return max(int(_window().total_seconds() * 1000), settings.RESEND_KEY_TTL_SECONDS * 1000)


def first_occurrences_resent(*, owner: str, occurrences: list[KeyOccurrences]) -> set[tuple[int, str]]:
    """Check the first occurrence of each key against the shared window and mark the window.

    Runs inside the ingest transaction. Returns the (room_id, key_hash) pairs whose first occurrence in this
    batch is a resend.
    """
    if not occurrences:
        return set()
    if settings.REDIS_URL:
        return _redis_check_and_mark(owner, occurrences)
    return _database_check_and_mark(owner, occurrences)


def _redis_check_and_mark(owner: str, occurrences: list[KeyOccurrences]) -> set[tuple[int, str]]:
    script = redis_client().register_script(_CHECK_AND_MARK)
    keys = [f"vcs:resend:{occ.room_id}:{occ.key_hash}" for occ in occurrences] + [_MARKER_KEY]
    window_ms, ttl_ms, now_ms = int(_window().total_seconds() * 1000), _ttl_ms(), int(time.time() * 1000)
    times = [(_ms(occ.first_at), _ms(occ.last_at)) for occ in occurrences]

    args = [value for first, last in times for value in (first, last)]
    answer = script(keys=keys, args=[window_ms, owner, ttl_ms, now_ms, 0, *args])
    if answer == [_DEGRADED]:
        known = _database_window(occurrences)
        args = []
        for occ, (first, last) in zip(occurrences, times, strict=True):
            seen, seen_owner = known.get((occ.room_id, occ.key_hash), (None, ""))
            args += [first, last, "" if seen is None else _ms(seen), seen_owner]
        answer = script(keys=keys, args=[window_ms, owner, ttl_ms, now_ms, 1, *args])

    resent, marks = set(), []
    for position, occ in enumerate(occurrences):
        verdict, seen_ms, seen_owner = answer[3 * position : 3 * position + 3]
        if verdict:
            resent.add((occ.room_id, occ.key_hash))
        if verdict or occ.repeats_dropped:  # the window slid past the stored copy: keep it for a restart
            marks.append((occ.room_id, occ.key_hash, datetime.fromtimestamp(int(seen_ms) / 1000, tz=UTC), seen_owner))
    if marks:
        _database_marks_write(marks)
    return resent


def _database_window(occurrences: list[KeyOccurrences]) -> dict[tuple[int, str], tuple[datetime, str]]:
    """What the database knows of the batch's keys: (last seen, owner) from the table of slid windows and from the
    stored messages near each key's first occurrence, whichever was seen last."""
    wanted = {(occ.room_id, occ.key_hash): occ for occ in occurrences}
    room_ids = {room_id for room_id, _ in wanted}
    known: dict[tuple[int, str], tuple[datetime, str]] = {}
    entries = ResendWindowEntry.objects.filter(room_id__in=room_ids, key_hash__in={key for _, key in wanted})
    for entry in entries:
        if (entry.room_id, entry.key_hash) in wanted:
            known[(entry.room_id, entry.key_hash)] = (entry.last_seen_at, entry.owner)
    window = _window()
    stored = Message.objects.filter(
        room_id__in=room_ids,
        sent_at__gte=min(occ.first_at for occ in occurrences) - window,
        sent_at__lte=max(occ.first_at for occ in occurrences) + window,
    ).values_list("room_id", "text", "unread_count", "sent_by_me", "sent_at")
    for room_id, text, unread_count, sent_by_me, sent_at in stored:
        ident = (room_id, resend_key_hash(text=text, unread_count=unread_count, sent_by_me=sent_by_me))
        occ = wanted.get(ident)
        if occ is None or abs(sent_at - occ.first_at) > window:
            continue
        if ident not in known or sent_at > known[ident][0]:
            known[ident] = (sent_at, _STORED_OWNER)
    return known


def _database_marks_write(marks: list[tuple[int, str, datetime, bytes | str]]) -> None:
    """Copy what Redis now holds for the keys whose window slid past their stored copy into the table: one
    statement on PostgreSQL, rows in key order so concurrent batches lock them in the same order."""
    marks = sorted((room_id, key_hash, seen, _text(owner)) for room_id, key_hash, seen, owner in marks)
    if connection.vendor != "postgresql":
        ResendWindowEntry.objects.bulk_create(
            [ResendWindowEntry(room_id=r, key_hash=k, last_seen_at=s, owner=o) for r, k, s, o in marks],
            update_conflicts=True,
            unique_fields=["room", "key_hash"],
            update_fields=["last_seen_at", "owner", "updated_at"],
        )
    else:
        table = ResendWindowEntry._meta.db_table
        room_ids, key_hashes, seen, owners = (list(column) for column in zip(*marks, strict=True))
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (room_id, key_hash, last_seen_at, owner, updated_at)"
                " SELECT room_id, key_hash, last_seen_at, owner, now()"
                " FROM unnest(%s::bigint[], %s::text[], %s::timestamptz[], %s::text[])"
                " AS marks(room_id, key_hash, last_seen_at, owner)"
                " ON CONFLICT (room_id, key_hash) DO UPDATE SET"
                f" last_seen_at = GREATEST({table}.last_seen_at, EXCLUDED.last_seen_at),"
                " owner = EXCLUDED.owner, updated_at = EXCLUDED.updated_at",
                [room_ids, key_hashes, seen, owners],
            )
    _database_window_prune()


def _database_window_prune() -> None:
    """Drop entries not touched for the key TTL (Redis forgets them then too): a few per batch, skipping rows
    another ingest holds, so the table stays about as large as one TTL of distinct messages."""
    expired_before = timezone.now() - timedelta(milliseconds=_ttl_ms())
    if connection.vendor != "postgresql":
        ResendWindowEntry.objects.filter(updated_at__lt=expired_before).delete()
        return
    table = ResendWindowEntry._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE updated_at < %s"
            " ORDER BY updated_at LIMIT 500 FOR UPDATE SKIP LOCKED)",
            [expired_before],
        )


def _database_check_and_mark(owner: str, occurrences: list[KeyOccurrences]) -> set[tuple[int, str]]:
    """Runs inside the ingest transaction, so a failed batch leaves no marks behind."""
    window = _window()
    resent: set[tuple[int, str]] = set()
    for occ in sorted(occurrences, key=lambda o: (o.room_id, o.key_hash)):
        entry = ResendWindowEntry.objects.select_for_update().filter(room_id=occ.room_id, key_hash=occ.key_hash).first()
        if entry is None:
            ResendWindowEntry.objects.create(
                room_id=occ.room_id, key_hash=occ.key_hash, last_seen_at=occ.last_at, owner=owner
            )
            continue
        is_resend = entry.owner != owner and abs(occ.first_at - entry.last_seen_at) <= window
        if is_resend:
            resent.add((occ.room_id, occ.key_hash))
        else:
            entry.owner = owner
        entry.last_seen_at = max(entry.last_seen_at, occ.last_at)
        entry.save(update_fields=["last_seen_at", "owner", "updated_at"])
    _database_window_prune()
    return resent


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
