"""`python -m edge replay-dead-letters`: post again the batches the uploader set aside in dead-letters.jsonl.

A batch was dead-lettered because the server refused it whole (413: too big; 422 from servers that refused a
batch for one bad message). Each record goes up again under its own batch id — cut into parts by the upload
limits of the config when it is too big, each part named `<batch id>/<k>of<n>` — so the server stores it once
however often it is replayed (the same batch id answers the first result, and client message ids are stored once
per room even when a changed config cuts the parts differently). The file is left as it is: it is the record of
what was set aside.
"""

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from edge.api import EdgeApi
from edge.config import UploadConfig
from edge.errors import BatchRejected, ExitCode, ServerUnavailable
from edge.uploader import DEAD_LETTER_FILE, add_server_counts, log_upload_answer

logger = logging.getLogger("edge.replay")


@dataclass
class ReplayResult:
    records: int = 0  # dead-lettered batches found in the file
    batches_posted: int = 0  # batches (or parts) the server accepted, replayed answers included
    batches_replayed: int = 0  # of those, answered from an earlier replay
    messages_sent: int = 0
    batches_refused: int = 0  # refused whole again (413/422): still only in the file
    messages_rejected: int = 0  # refused one by one, kept in the server's quarantine
    damaged_lines: int = 0
    stopped_by: str = ""
    server_counts: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> ExitCode:
        if self.stopped_by:
            return ExitCode.UNAVAILABLE
        set_aside = self.batches_refused or self.messages_rejected or self.damaged_lines
        return ExitCode.PARTIAL if set_aside else ExitCode.OK


def dead_letters_replay(*, api: EdgeApi, state_dir: Path, config: UploadConfig) -> ReplayResult:
    result = ReplayResult()
    path = state_dir / DEAD_LETTER_FILE
    try:
        for record in _records(path, result):
            result.records += 1
            for batch_id, messages in replay_parts(record, config):
                _post(api, batch_id, messages, result)
    except ServerUnavailable as exc:
        result.stopped_by = str(exc)
        logger.warning("replay stopped (nothing lost, run it again later): %s", exc)
    return result


def _records(path: Path, result: ReplayResult):
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            if not line.endswith(b"\n"):
                # The uploader writes each line whole, newline included: this one is being written or was torn.
                result.damaged_lines += 1
                logger.warning("%s line %d is incomplete; skipped", path, number)
                continue
            try:
                record = json.loads(line.decode("utf-8"))
                valid = isinstance(record.get("batch_id"), str) and isinstance(record.get("messages"), list)
            except (UnicodeDecodeError, ValueError, AttributeError):
                valid = False
            if not valid:
                result.damaged_lines += 1
                logger.error("%s line %d is damaged; skipped (inspect it by hand)", path, number)
                continue
            yield record


def replay_parts(record: dict, config: UploadConfig) -> list[tuple[str, list[dict]]]:
    """The record's messages in parts within batch_size and max_batch_bytes; one part keeps the batch id."""
    parts: list[list[dict]] = []
    current: list[dict] = []
    size = 0
    for message in record["messages"]:
        message_size = len(json.dumps(message, ensure_ascii=False).encode("utf-8")) + 1
        if current and (len(current) >= config.batch_size or size + message_size > config.max_batch_bytes):
            parts.append(current)
            current, size = [], 0
        current.append(message)
        size += message_size
    if current:
        parts.append(current)
    batch_id = record["batch_id"]
    if len(parts) == 1:
        return [(batch_id, parts[0])]
    return [(f"{batch_id}/{k}of{len(parts)}", part) for k, part in enumerate(parts, start=1)]


def _post(api: EdgeApi, batch_id: str, messages: list[dict], result: ReplayResult) -> None:
    try:
        counts = api.upload(batch_id=batch_id, messages=messages)
    except BatchRejected as exc:
        result.batches_refused += 1
        logger.error(
            "batch %s (%d messages) refused again with %s %s; it stays in %s",
            batch_id,
            len(messages),
            exc.status,
            exc.body.get("error", ""),
            DEAD_LETTER_FILE,
        )
        return
    result.batches_posted += 1
    result.batches_replayed += bool(counts.get("replayed"))
    result.messages_sent += len(messages)
    add_server_counts(result.server_counts, counts)
    result.messages_rejected += log_upload_answer(batch_id, messages, counts)
