"""The sender (PRODUCT.md 3.7): delivery is counted in the client DB, never assumed.

For each claimed job:
1. Record a baseline (the client DB's latest log id) in a local job state file before anything is sent.
2. Send every item, persisting "about to send item N at T" before each command runs.
3. Count my messages in the room past the baseline: texts by exact content, photos and files by count (or by
   file name where the client DB records it). Texts get `text_wait_seconds`, photos and files that plus
   `photo_grace_seconds`, counted from when the send command *ended*; the lease is extended while waiting.
4. Resend only what is still missing after its wait, at most `max_resends_per_item` times, and only while the
   server confirms the lease. An item counted as arrived is never sent again; when a count cannot tell which
   photo of several is missing, none is resent (a duplicate photo in a 70-person room is worse than a gap).
5. Report `sent` with the observed counts only after this check; otherwise `failed` (every command failed and
   nothing arrived) or `unknown` (something may have gone out) with what was seen.

A job state file left by a crash is resumed before any new claim: the lease is confirmed, then the room is counted
against the persisted baseline and attempts, and only items still missing after their wait are sent. An attempt
whose start is recorded but whose end is not may still be running: it is waited out for `command_timeout_seconds`
plus the item's wait from its start before it counts as missing.
"""

import logging
import re
import shutil
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from edge.api import EdgeApi
from edge.client_db import ChatDbReader, ChatLog
from edge.clock import Clock
from edge.config import SendConfig
from edge.errors import ExitCode, LeaseLost, ServerUnavailable, UnexpectedResponse
from edge.message_sender import MessageSender
from edge.statefiles import append_jsonl, atomic_write_bytes, atomic_write_json, ensure_private_dir, read_json

logger = logging.getLogger("edge.sender")

JOBS_DIR = "jobs"
SEND_LOG_FILE = "send-log.jsonl"
STATE_VERSION = 1
_UNSAFE_FILE_CHARS = re.compile(r'[\\/:*?"<>|\x00-\x1f]+')


class JobOutcome:
    SENT = "sent"
    FAILED = "failed"
    UNKNOWN = "unknown"
    LEASE_LOST = "lease_lost"  # the server took the job away; nothing more was sent or reported


@dataclass
class Observation:
    texts: int = 0  # my texts past the baseline whose content is one of the job's texts (duplicates included)
    photos: int = 0  # my photos past the baseline
    files: int = 0
    arrived: set[int] = field(default_factory=set)  # item indexes counted as arrived
    ambiguous: set[int] = field(default_factory=set)  # sent items of a kind whose count cannot say which arrived

    def as_counts(self) -> dict:
        return {"texts": self.texts, "photos": self.photos, "files": self.files}


@dataclass
class SendRunResult:
    outcomes: dict[int, str] = field(default_factory=dict)  # job id -> JobOutcome
    stopped_by: str = ""

    @property
    def exit_code(self) -> ExitCode:
        if self.stopped_by:
            return ExitCode.UNAVAILABLE
        if any(outcome != JobOutcome.SENT for outcome in self.outcomes.values()):
            return ExitCode.PARTIAL
        return ExitCode.OK


def normalize_text(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def match_arrivals(items: list[dict], mine: list[ChatLog], *, by_name: bool = False) -> Observation:
    """Which job items the client DB shows as arrived, from my logs in the room past the baseline.

    Items already counted as arrived stay arrived. Among equal texts (or names), items already arrived and then
    items already sent take the arrivals first; in count mode only sent items can have arrived.
    """
    observation = Observation(arrived={item["index"] for item in items if item.get("arrived")})
    text_logs = Counter(normalize_text(log.text) for log in mine if log.kind == "text")
    text_groups = _group(items, "text", key=lambda item: normalize_text(item["text"]))
    observation.texts = sum(text_logs[content] for content in text_groups)
    _assign_by_key(text_groups, text_logs, observation)
    for kind in ("photo", "file"):
        logs = [log for log in mine if log.kind == kind]
        setattr(observation, f"{kind}s", len(logs))
        kind_items = [item for item in items if item["kind"] == kind]
        if by_name and logs and all(log.attachment_name for log in logs):
            names = Counter(log.attachment_name for log in logs)
            _assign_by_key(_group(items, kind, key=lambda item: item.get("sent_name", "")), names, observation)
            continue
        already = [item for item in kind_items if item["index"] in observation.arrived]
        open_sent = [item for item in kind_items if item["index"] not in observation.arrived and item["sends"]]
        unexplained = len(logs) - len(already)
        if unexplained >= len(open_sent):
            observation.arrived.update(item["index"] for item in open_sent)
        elif unexplained > 0:
            observation.ambiguous.update(item["index"] for item in open_sent)
    return observation


def _group(items: list[dict], kind: str, *, key) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        if item["kind"] == kind:
            groups[key(item)].append(item)
    return groups


def _assign_by_key(groups: dict[str, list[dict]], available: Counter, observation: Observation) -> None:
    for content, group in groups.items():
        ordered = sorted(group, key=lambda item: (item["index"] not in observation.arrived, not item["sends"]))
        observation.arrived.update(item["index"] for item in ordered[: available[content]])


class JobStateStore:
    """One JSON file per (job, attempt) in <state_dir>/jobs, plus the files downloaded for it."""

    def __init__(self, state_dir: Path):
        self.state_dir = state_dir
        self.directory = state_dir / JOBS_DIR

    def path(self, state: dict) -> Path:
        return self.directory / f"job-{state['job_id']}-{state['attempt']}.json"

    def files_dir(self, state: dict) -> Path:
        return ensure_private_dir(self.directory / f"job-{state['job_id']}-{state['attempt']}.files")

    def unfinished(self) -> list[dict]:
        if not self.directory.is_dir():
            return []
        states = [read_json(path) for path in sorted(self.directory.glob("job-*.json"))]
        return [state for state in states if state]

    def save(self, state: dict) -> None:
        ensure_private_dir(self.directory)
        atomic_write_json(self.path(state), state)

    def close(self, state: dict, *, outcome: str) -> None:
        """Record the job in send-log.jsonl, then drop its state and files: it needs nothing more from here."""
        append_jsonl(
            self.state_dir / SEND_LOG_FILE,
            {
                "closed_at": datetime.now(tz=UTC).isoformat(),
                "job_id": state["job_id"],
                "attempt": state["attempt"],
                "room_key": state["room_key"],
                "outcome": outcome,
                "observed": state.get("observed"),
                "resent": state.get("resent"),
                "reason": state.get("reason", ""),
                "sends": {str(item["index"]): [send["at"] for send in item["sends"]] for item in state["items"]},
            },
        )
        self.path(state).unlink(missing_ok=True)
        shutil.rmtree(self.directory / f"job-{state['job_id']}-{state['attempt']}.files", ignore_errors=True)


class _LeaseKeeper:
    def __init__(self, *, api: EdgeApi, job_id: int, clock: Clock, interval: float):
        self.api, self.job_id, self.clock, self.interval = api, job_id, clock, interval
        self.last = clock.now()

    def confirm(self) -> None:
        """Extend the lease now; raises LeaseLost or ServerUnavailable. Called before anything is sent."""
        self.api.job_heartbeat(self.job_id)
        self.last = self.clock.now()

    def keep_alive(self) -> None:
        if self.clock.now() - self.last < self.interval:
            return
        try:
            self.confirm()
        except ServerUnavailable as exc:
            # Waiting and counting go on; nothing is sent until a heartbeat succeeds again.
            logger.warning("job %s: lease heartbeat failed: %s", self.job_id, exc)


class SendJobRunner:
    def __init__(
        self,
        *,
        api: EdgeApi,
        reader: ChatDbReader,
        sender: MessageSender,
        state_dir: Path,
        config: SendConfig,
        clock: Clock,
        match_attachments_by_name: bool = False,
    ):
        self.api = api
        self.reader = reader
        self.sender = sender
        self.config = config
        self.clock = clock
        self.match_attachments_by_name = match_attachments_by_name
        self.store = JobStateStore(state_dir)

    def run_once(self) -> SendRunResult:
        """Resume jobs left by a crash, then claim and deliver jobs until none is queued (or the run limit)."""
        result = SendRunResult()
        try:
            rooms = [{"room_key": room.room_key, "room_name": room.room_name} for room in self.reader.rooms()]
            self.api.device_heartbeat(rooms=rooms)
            for state in self.store.unfinished():
                result.outcomes[state["job_id"]] = self._resume(state)
            for _ in range(self.config.max_jobs_per_run):
                job = self.api.claim()
                if job is None:
                    break
                result.outcomes[int(job["id"])] = self._start(job)
        except ServerUnavailable as exc:
            result.stopped_by = str(exc)
            logger.warning("send run stopped (local job state kept, resumed next run): %s", exc)
        return result

    # --- one job ---

    def _start(self, job: dict) -> str:
        state = {
            "version": STATE_VERSION,
            "job_id": int(job["id"]),
            "attempt": int(job.get("attempt") or 1),
            "room_key": job["room_key"],
            "room_name": job.get("room_name", ""),
            "claimed_at": self.clock.now(),
            "baseline_log_id": self.reader.latest_log_id(),
            "progress_reported": [],
            "items": [
                {
                    "index": int(item["index"]),
                    "kind": item["kind"],
                    "text": item.get("text", ""),
                    "name": item.get("name", ""),
                    "sha256": item.get("sha256", ""),
                    "content_url": item.get("content_url", ""),
                    "local_path": "",
                    "sent_name": "",
                    "arrived": False,
                    "sends": [],
                }
                for item in sorted(job.get("items", []), key=lambda item: int(item["index"]))
            ],
        }
        self.store.save(state)
        logger.info(
            "job %s claimed: room %s, %d items, baseline log %s",
            state["job_id"],
            state["room_key"],
            len(state["items"]),
            state["baseline_log_id"],
        )
        return self._deliver(state)

    def _resume(self, state: dict) -> str:
        try:
            if state.get("outcome"):
                # Checked and decided, but the server's answer to the report was lost: the same report again
                # (the server accepts a repeat of it after the lease ended).
                logger.warning("job %s: repeating its unacknowledged %s report", state["job_id"], state["outcome"])
                return self._send_report(state)
            logger.warning("job %s found mid-flight: counting the room before anything is sent", state["job_id"])
            self.api.job_heartbeat(state["job_id"])
        except LeaseLost:
            return self._abandon(state)
        return self._deliver(state)

    def _deliver(self, state: dict) -> str:
        try:
            try:
                self._fetch_attachments(state)
            except UnexpectedResponse as exc:
                if any(item["sends"] for item in state["items"]):
                    raise
                # Nothing went out: the job can safely be queued again.
                return self._report(state, self._observe(state), JobOutcome.FAILED, f"content unavailable: {exc}")
            observation = self._send_and_count(state)
            outcome, reason = self._decide(state, observation)
            return self._report(state, observation, outcome, reason)
        except LeaseLost:
            return self._abandon(state)

    def _send_and_count(self, state: dict) -> Observation:
        lease = _LeaseKeeper(
            api=self.api, job_id=state["job_id"], clock=self.clock, interval=self.config.lease_heartbeat_seconds
        )
        self._progress_once(state, "sending")
        while True:
            observation = self._observe(state)
            now = self.clock.now()
            due, deadlines = self._plan(state, observation, now)
            if due:
                lease.confirm()
                for item in due:
                    self._send(state, item)
                continue
            if not deadlines:
                return observation
            self._progress_once(state, "verifying")
            self.clock.sleep(min(self.config.poll_interval_seconds, min(deadlines) - now))
            lease.keep_alive()

    def _plan(self, state: dict, observation: Observation, now: float) -> tuple[list[dict], list[float]]:
        """Items to send now, and the deadlines still being waited for."""
        due, deadlines = [], []
        for item in state["items"]:
            if item["index"] in observation.arrived:
                continue
            if not item["sends"]:
                due.append(item)
                continue
            deadline = self._counted_missing_after(item)
            if now < deadline:
                deadlines.append(deadline)
            elif item["index"] in observation.ambiguous:
                continue  # the count cannot say which one is missing: never guess with a resend
            elif len(item["sends"]) <= self.config.max_resends_per_item:
                logger.warning(
                    "job %s: %s #%s not counted %.0fs after its send command started: resending it",
                    state["job_id"],
                    item["kind"],
                    item["index"],
                    now - item["sends"][-1]["at"],
                )
                due.append(item)
        return due, deadlines

    def _counted_missing_after(self, item: dict) -> float:
        """When the item's last send counts as missing: its wait after the send command ended.

        A message can land only after the tool has handed it over, so the wait starts at the command's end, never
        its start. An attempt with a recorded start and no recorded end (the sender died while the command ran,
        and the command may still be running) is in flight until `command_timeout_seconds` after its start."""
        attempt = item["sends"][-1]
        ended_at = attempt.get("ended_at")
        if ended_at is None:
            ended_at = attempt["at"] + self.config.command_timeout_seconds
        return ended_at + self._wait_for(item["kind"])

    def _wait_for(self, kind: str) -> float:
        if kind == "text":
            return self.config.text_wait_seconds
        return self.config.text_wait_seconds + self.config.photo_grace_seconds

    def _send(self, state: dict, item: dict) -> None:
        text_file = None
        if item["kind"] == "text":
            text_file = self.store.files_dir(state) / f"text-{item['index']}.txt"
            atomic_write_bytes(text_file, item["text"].encode("utf-8"))
        attempt = {
            "at": self.clock.now(),
            "ended_at": None,
            "ok": None,
            "returncode": None,
            "timed_out": False,
            "detail": "",
        }
        item["sends"].append(attempt)
        self.store.save(state)  # on disk before the command runs: a crash from here on is never a blind resend
        if text_file is not None:
            sent = self.sender.send_text(room_key=state["room_key"], room_name=state["room_name"], text_file=text_file)
        else:
            sent = self.sender.send_attachment(
                kind=item["kind"],
                room_key=state["room_key"],
                room_name=state["room_name"],
                path=Path(item["local_path"]),
            )
        attempt.update(
            ended_at=self.clock.now(),
            ok=sent.ok,
            returncode=sent.returncode,
            timed_out=sent.timed_out,
            detail=sent.detail,
        )
        self.store.save(state)
        logger.info(
            "job %s: %s #%s %s (%s)",
            state["job_id"],
            item["kind"],
            item["index"],
            "sent" if len(item["sends"]) == 1 else "resent",
            "command ok" if sent.ok else f"command failed: {sent.detail or sent.returncode}",
        )

    def _fetch_attachments(self, state: dict) -> None:
        for item in state["items"]:
            if item["kind"] == "text" or (item["local_path"] and Path(item["local_path"]).is_file()):
                continue
            content = self.api.item_content(
                state["job_id"], index=item["index"], content_url=item["content_url"], sha256=item["sha256"]
            )
            name = _UNSAFE_FILE_CHARS.sub("_", Path(item["name"] or "").name).strip(". ") or f"item-{item['index']}"
            item_dir = ensure_private_dir(self.store.files_dir(state) / f"item-{item['index']}")
            atomic_write_bytes(item_dir / name, content)
            item["local_path"], item["sent_name"] = str(item_dir / name), name
            self.store.save(state)

    def _observe(self, state: dict) -> Observation:
        mine = [
            log
            for log in self.reader.logs_after(state["baseline_log_id"])
            if log.room_key == state["room_key"] and log.is_mine
        ]
        observation = match_arrivals(state["items"], mine, by_name=self.match_attachments_by_name)
        newly_arrived = [
            item for item in state["items"] if item["index"] in observation.arrived and not item["arrived"]
        ]
        for item in newly_arrived:
            item["arrived"] = True
        if newly_arrived:
            self.store.save(state)
        return observation

    def _decide(self, state: dict, observation: Observation) -> tuple[str, str]:
        items = state["items"]
        missing = [item for item in items if item["index"] not in observation.arrived]
        if not missing:
            extra = _duplicates_note(items, observation)
            return JobOutcome.SENT, extra
        sends = [send for item in items for send in item["sends"]]
        if not observation.arrived and sends and all(send["ok"] is False and not send["timed_out"] for send in sends):
            details = "; ".join(sorted({send["detail"] or f"exit {send['returncode']}" for send in sends}))
            return JobOutcome.FAILED, f"send command failed and nothing arrived: {details}"[:500]
        described = ", ".join(
            f"{item['kind']} #{item['index']} "
            f"({'count cannot tell which' if item['index'] in observation.ambiguous else 'not counted'}, "
            f"sent {len(item['sends'])}x)"
            for item in missing
        )
        return JobOutcome.UNKNOWN, f"not confirmed in the client DB: {described}"[:500]

    def _report(self, state: dict, observation: Observation, outcome: str, reason: str) -> str:
        resent = {f"{kind}s": 0 for kind in ("text", "photo", "file")}
        for item in state["items"]:
            resent[f"{item['kind']}s"] += max(len(item["sends"]) - 1, 0)
        state.update(outcome=outcome, observed=observation.as_counts(), resent=resent, reason=reason)
        self.store.save(state)
        return self._send_report(state)

    def _send_report(self, state: dict) -> str:
        outcome, reason = state["outcome"], state["reason"]
        self.api.job_result(
            state["job_id"], outcome=outcome, observed=state["observed"], resent=state["resent"], reason=reason
        )
        self.store.close(state, outcome=outcome)
        log = logger.info if outcome == JobOutcome.SENT else logger.error
        log(
            "job %s reported %s: observed %s, resent %s%s",
            state["job_id"],
            outcome,
            state["observed"],
            state["resent"],
            f" ({reason})" if reason else "",
        )
        return outcome

    def _abandon(self, state: dict) -> str:
        observation = self._observe(state)
        state.update(observed=observation.as_counts(), reason="lease lost: the server holds the job as unknown")
        self.store.close(state, outcome=JobOutcome.LEASE_LOST)
        logger.error(
            "job %s: lease lost, nothing more is sent or reported; the room shows %s. Staff resolve it in the admin.",
            state["job_id"],
            observation.as_counts(),
        )
        return JobOutcome.LEASE_LOST

    def _progress_once(self, state: dict, progress: str) -> None:
        if progress in state["progress_reported"]:
            return
        try:
            self.api.job_progress(state["job_id"], state=progress)
        except UnexpectedResponse as exc:
            logger.warning("job %s: progress %s not accepted: %s", state["job_id"], progress, exc)
        state["progress_reported"].append(progress)
        self.store.save(state)


def _duplicates_note(items: list[dict], observation: Observation) -> str:
    expected = Counter(item["kind"] for item in items)
    seen = {"text": observation.texts, "photo": observation.photos, "file": observation.files}
    extra = {kind: seen[kind] - expected[kind] for kind in seen if seen[kind] > expected[kind]}
    if not extra:
        return ""
    return "more than expected in the room (not added to): " + ", ".join(f"{kind} +{n}" for kind, n in extra.items())
