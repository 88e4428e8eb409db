"""The resend window: drop a message whose key `(room, text, unread count, sent-by-me)` was seen within N seconds.

The KakaoTalk client re-sends the latest message of an unread room every 2 s; one message arrived 51 times.
The window slides: every repeat refreshes it, so a storm of any length keeps one copy. Time is the message's own
`sent_at` (not arrival), so a batch uploaded late after an outage is judged on when things were said, and a vendor
repeating "네" a minute later is a new message.

Within one batch the decision is made locally; only the first occurrence of each key is checked against the
shared window (Redis when configured — one atomic script call for all the batch's keys — else a database table
in the ingest transaction). The shared entry remembers which batch stored it: if that batch's transaction failed and the
uploader posts the same batch again, its own mark must not make it drop its own messages.
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from config.redis import redis_client
from conversations.models import ResendWindowEntry

# KEYS = one window key per distinct key of the batch; ARGV = window_ms, batch_id, ttl_ms, then first_ms and
# last_ms for each key in KEYS order. Each stored value is "<last_seen_ms>|<batch_id that stored the key>".
# Returns one flag per key: 1 when its first occurrence in this batch is a resend. One call per batch, atomic.
_CHECK_AND_MARK = """
local window = tonumber(ARGV[1])
local batch = ARGV[2]
local ttl = tonumber(ARGV[3])
local verdicts = {}
for i, key in ipairs(KEYS) do
  local first = tonumber(ARGV[2 + 2 * i])
  local last = tonumber(ARGV[3 + 2 * i])
  local prev = redis.call('GET', key)
  local seen = last
  local owner = batch
  local resend = 0
  if prev then
    local sep = string.find(prev, '|', 1, true)
    local prev_seen = tonumber(string.sub(prev, 1, sep - 1))
    local prev_owner = string.sub(prev, sep + 1)
    if prev_owner ~= batch and math.abs(first - prev_seen) <= window then
      resend = 1
      owner = prev_owner
    end
    if prev_seen > seen then seen = prev_seen end
  end
  redis.call('SET', key, seen .. '|' .. owner, 'PX', ttl)
  verdicts[i] = resend
end
return verdicts
"""


@dataclass(frozen=True)
class KeyOccurrences:
    """All occurrences of one resend key within a batch, in upload order."""

    room_id: int
    key_hash: str
    first_at: datetime
    last_at: datetime


def resend_key_hash(*, text: str, unread_count: int, sent_by_me: bool) -> str:
    raw = f"{text}\x1f{unread_count}\x1f{int(sent_by_me)}"
    return hashlib.sha256(raw.encode()).hexdigest()


def _window() -> timedelta:
    return timedelta(seconds=settings.RESEND_WINDOW_SECONDS)


def first_occurrences_resent(*, batch_id: str, occurrences: list[KeyOccurrences]) -> set[tuple[int, str]]:
    """Check the first occurrence of each key against the shared window and mark the window.

    Returns the (room_id, key_hash) pairs whose first occurrence in this batch is a resend.
    """
    if not occurrences:
        return set()
    if settings.REDIS_URL:
        return _redis_check_and_mark(batch_id, occurrences)
    return _database_check_and_mark(batch_id, occurrences)


def _redis_check_and_mark(batch_id: str, occurrences: list[KeyOccurrences]) -> set[tuple[int, str]]:
    client = redis_client()
    window_ms = int(_window().total_seconds() * 1000)
    # The entry must outlive the window by the longest upload delay we still want to catch.
    ttl_ms = max(window_ms, settings.RESEND_KEY_TTL_SECONDS * 1000)
    keys = [f"vcs:resend:{occ.room_id}:{occ.key_hash}" for occ in occurrences]
    times = [value for occ in occurrences for value in (_ms(occ.first_at), _ms(occ.last_at))]
    verdicts = client.register_script(_CHECK_AND_MARK)(keys=keys, args=[window_ms, batch_id, ttl_ms, *times])
    return {(occ.room_id, occ.key_hash) for occ, resent in zip(occurrences, verdicts, strict=True) if resent}


def _database_check_and_mark(batch_id: str, occurrences: list[KeyOccurrences]) -> set[tuple[int, str]]:
    """Runs inside the ingest transaction, so a failed batch leaves no marks behind."""
    window = _window()
    resent: set[tuple[int, str]] = set()
    for occ in sorted(occurrences, key=lambda o: (o.room_id, o.key_hash)):
        entry = ResendWindowEntry.objects.select_for_update().filter(room_id=occ.room_id, key_hash=occ.key_hash).first()
        if entry is None:
            ResendWindowEntry.objects.create(
                room_id=occ.room_id, key_hash=occ.key_hash, last_seen_at=occ.last_at, batch_id=batch_id
            )
            continue
        is_resend = entry.batch_id != batch_id and abs(occ.first_at - entry.last_seen_at) <= window
        if is_resend:
            resent.add((occ.room_id, occ.key_hash))
        else:
            entry.batch_id = batch_id
        entry.last_seen_at = max(entry.last_seen_at, occ.last_at)
        entry.save(update_fields=["last_seen_at", "batch_id"])
    return resent


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
