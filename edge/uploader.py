"""The uploader (PRODUCT.md 3.8): new client DB messages past a checkpoint go to the server in batches.

- The checkpoint (the last uploaded `log_id`) moves only after a 2xx, and is written atomically.
- Before a batch is posted its range is recorded as pending, so after any failure the next run posts exactly the
  same messages under exactly the same `batch_id` (device + range), which the server answers from its first result.
- 200 with `rejections`: the server stored the batch but refused some messages one by one (it keeps them in its
  quarantine for staff); they are logged, the checkpoint moves on and the run reports something set aside.
- 413/422: the batch can never succeed; it is appended to dead-letters.jsonl (fsynced) and the checkpoint moves past.
- 5xx, 429 and network errors: stop, keep the checkpoint, try again next run (not before `Retry-After`).
"""

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from edge.api import EdgeApi
from edge.client_db import ChatDbReader, ChatLog
from edge.clock import Clock
from edge.config import UploadConfig
from edge.errors import BatchRejected, ExitCode, ServerUnavailable
from edge.statefiles import append_jsonl, atomic_write_json, read_json

logger = logging.getLogger("edge.uploader")

CHECKPOINT_FILE = "upload-checkpoint.json"
DEAD_LETTER_FILE = "dead-letters.jsonl"
_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class CheckpointState:
    last_log_id: int = 0
    pending_upto: int | None = None  # a posted range without a 2xx yet: post exactly this range again
    not_before: float | None = None  # epoch seconds from the server's Retry-After


class UploadCheckpoint:
    def __init__(self, state_dir: Path):
        self.path = state_dir / CHECKPOINT_FILE

    def load(self) -> CheckpointState:
        data = read_json(self.path) or {}
        return CheckpointState(
            last_log_id=int(data.get("last_log_id", 0)),
            pending_upto=data.get("pending_upto"),
            not_before=data.get("not_before"),
        )

    def save(self, state: CheckpointState) -> None:
        atomic_write_json(
            self.path,
            {
                "last_log_id": state.last_log_id,
                "pending_upto": state.pending_upto,
                "not_before": state.not_before,
                "updated_at": datetime.now(tz=UTC).isoformat(),
            },
        )


@dataclass
class UploadRunResult:
    batches_uploaded: int = 0
    messages_uploaded: int = 0
    batches_dead_lettered: int = 0
    messages_rejected: int = 0  # refused one by one by the server (kept in its quarantine), batch stored
    stopped_by: str = ""  # why the run stopped before catching up ("" when it caught up or hit its batch limit)
    retry_after: float | None = None
    last_log_id: int = 0
    server_counts: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> ExitCode:
        if self.stopped_by:
            return ExitCode.UNAVAILABLE
        return ExitCode.PARTIAL if self.batches_dead_lettered or self.messages_rejected else ExitCode.OK


def device_label(name: str, device_id: int | None = None) -> str:
    """The batch_id prefix: stable, short and safe for any server field."""
    label = _LABEL_UNSAFE.sub("-", name).strip("-")[:60]
    return label or (f"device-{device_id}" if device_id is not None else "device")


def batch_id_for(label: str, first_log_id: int, last_log_id: int) -> str:
    return f"{label}:{first_log_id:09d}-{last_log_id:09d}"


def to_contract_message(log: ChatLog) -> dict | None:
    """The contract's message shape, or None for types that are not uploaded."""
    if log.kind is None:
        return None
    return {
        "room_key": log.room_key,
        "room_name": log.room_name,
        "sender_name": log.sender,
        "sent_by_me": log.is_mine,
        "text": log.text,
        "sent_at": log.sent_at.isoformat(),
        "unread_count": log.unread_count,
        "client_message_id": log.client_log_id or f"log-{log.log_id}",
        "attachments": {"photos": int(log.kind == "photo"), "files": int(log.kind == "file")},
    }


class Uploader:
    def __init__(
        self,
        *,
        api: EdgeApi,
        reader: ChatDbReader,
        state_dir: Path,
        label: str,
        config: UploadConfig,
        clock: Clock,
    ):
        self.api = api
        self.reader = reader
        self.state_dir = state_dir
        self.label = label
        self.config = config
        self.clock = clock
        self.checkpoint = UploadCheckpoint(state_dir)

    def run_once(self) -> UploadRunResult:
        state = self.checkpoint.load()
        result = UploadRunResult(last_log_id=state.last_log_id)
        now = self.clock.now()
        if state.not_before and now < state.not_before:
            result.stopped_by, result.retry_after = "retry_after", state.not_before - now
            logger.info("server asked to wait: next upload in %.0fs", result.retry_after)
            return result
        try:
            self.api.device_heartbeat()
            for _ in range(self.config.max_batches_per_run):
                if not self._upload_next_batch(state, result):
                    break
        except ServerUnavailable as exc:
            result.stopped_by, result.retry_after = str(exc), exc.retry_after
            if exc.retry_after:
                state.not_before = self.clock.now() + exc.retry_after
                self.checkpoint.save(state)
            logger.warning("upload stopped, checkpoint kept at %s: %s", state.last_log_id, exc)
        result.last_log_id = state.last_log_id
        return result

    def _upload_next_batch(self, state: CheckpointState, result: UploadRunResult) -> bool:
        """Upload one range. False when there is nothing left to upload."""
        if state.pending_upto is not None:
            upto = state.pending_upto
            logs = self.reader.logs_after(state.last_log_id, upto_id=upto)
        else:
            logs = self._cut_to_byte_limit(self.reader.logs_after(state.last_log_id, limit=self.config.batch_size))
            if not logs:
                return False
            upto = logs[-1].log_id
        first = state.last_log_id + 1
        messages = [message for message in map(to_contract_message, logs) if message is not None]
        if not messages:
            self._advance(state, upto)
            return True
        batch_id = batch_id_for(self.label, first, upto)
        if state.pending_upto is None:
            state.pending_upto = upto
            self.checkpoint.save(state)
        try:
            counts = self.api.upload(batch_id=batch_id, messages=messages)
        except BatchRejected as exc:
            self._dead_letter(batch_id, first, upto, messages, exc)
            result.batches_dead_lettered += 1
            self._advance(state, upto)
            return True
        self._advance(state, upto)
        result.batches_uploaded += 1
        result.messages_uploaded += len(messages)
        add_server_counts(result.server_counts, counts)
        result.messages_rejected += log_upload_answer(batch_id, messages, counts)
        return True

    def _advance(self, state: CheckpointState, upto: int) -> None:
        state.last_log_id, state.pending_upto, state.not_before = upto, None, None
        self.checkpoint.save(state)

    def _cut_to_byte_limit(self, logs: list[ChatLog]) -> list[ChatLog]:
        """Stop a new range before its body would pass max_batch_bytes (always at least one log)."""
        total = 0
        for position, log in enumerate(logs):
            message = to_contract_message(log)
            if message is not None:
                total += len(json.dumps(message, ensure_ascii=False).encode("utf-8")) + 1
            if total > self.config.max_batch_bytes and position > 0:
                return logs[:position]
        return logs

    def _dead_letter(self, batch_id: str, first: int, upto: int, messages: list[dict], exc: BatchRejected) -> None:
        append_jsonl(
            self.state_dir / DEAD_LETTER_FILE,
            {
                "dead_lettered_at": datetime.now(tz=UTC).isoformat(),
                "batch_id": batch_id,
                "first_log_id": first,
                "last_log_id": upto,
                "status": exc.status,
                "response": exc.body,
                "messages": messages,
            },
        )
        logger.error(
            "batch %s (%d messages) rejected with %s %s; set aside in %s and skipped%s",
            batch_id,
            len(messages),
            exc.status,
            exc.body.get("error", ""),
            DEAD_LETTER_FILE,
            _limits_hint(exc.body),
        )


SERVER_COUNTS = ("received", "stored", "dropped_resends", "duplicates", "rejected", "cleaned", "questions")


def add_server_counts(totals: dict, counts: dict) -> None:
    for key in SERVER_COUNTS:
        totals[key] = totals.get(key, 0) + int(counts.get(key) or 0)


def log_upload_answer(batch_id: str, messages: list[dict], counts: dict) -> int:
    """Log a 2xx answer to an upload, each message the server refused included. Returns how many it refused."""
    logger.info(
        "batch %s: %d sent, stored %s, resends dropped %s, duplicates %s, refused %s, questions %s%s",
        batch_id,
        len(messages),
        counts.get("stored"),
        counts.get("dropped_resends"),
        counts.get("duplicates"),
        counts.get("rejected", 0),
        counts.get("questions"),
        " (replayed)" if counts.get("replayed") else "",
    )
    rejections = counts.get("rejections") or []
    for rejection in rejections:
        index = rejection.get("index")
        message = messages[index] if isinstance(index, int) and 0 <= index < len(messages) else {}
        errors = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in rejection.get("errors") or [])
        logger.warning(
            "batch %s: message %s (%s) refused by the server (%s: %s); kept in its quarantine for staff",
            batch_id,
            index,
            message.get("client_message_id", "?"),
            rejection.get("reason"),
            errors,
        )
    return len(rejections)


def _limits_hint(body: dict) -> str:
    if "limit_messages" in body or "limit_bytes" in body:
        return (
            f" (server limits: {body.get('limit_messages')} messages, {body.get('limit_bytes')} bytes;"
            " lower upload.batch_size / upload.max_batch_bytes)"
        )
    return ""
