"""Driving the local sending tool (the `MessageSender` adapter): one configurable command per message kind.

Commands are argument lists; these placeholders are replaced inside each argument:
    {room}       the room key           {room_name}  the room's display name
    {file}       a UTF-8 file holding the text (texts)
    {path}       the photo or file to send (photos, files)
The command runs without a shell, with a timeout. Exit status 0 means the tool says it sent; the sender
still counts the client DB before believing it.
"""

import logging
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

logger = logging.getLogger("edge.message_sender")

_DETAIL_LIMIT = 300


@dataclass(frozen=True)
class SendAttempt:
    ok: bool  # the command exited 0
    returncode: int | None  # None when it could not start or timed out
    timed_out: bool
    detail: str  # the tail of its error output, or why it did not run

    @property
    def failed_cleanly(self) -> bool:
        """The tool ran to completion and said it failed: the message most likely did not go out."""
        return not self.ok and not self.timed_out


class MessageSender(Protocol):
    def send_text(self, *, room_key: str, room_name: str, text_file: Path) -> SendAttempt: ...

    def send_attachment(self, *, kind: str, room_key: str, room_name: str, path: Path) -> SendAttempt: ...


class CommandMessageSender:
    def __init__(
        self,
        *,
        text_command: tuple[str, ...],
        photo_command: tuple[str, ...] = (),
        file_command: tuple[str, ...] = (),
        timeout_seconds: float = 60.0,
        env: dict[str, str] | None = None,
    ):
        self.commands = {"text": text_command, "photo": photo_command, "file": file_command}
        self.timeout_seconds = timeout_seconds
        self.env = env

    def send_text(self, *, room_key: str, room_name: str, text_file: Path) -> SendAttempt:
        return self._run("text", {"{room}": room_key, "{room_name}": room_name, "{file}": str(text_file)})

    def send_attachment(self, *, kind: str, room_key: str, room_name: str, path: Path) -> SendAttempt:
        return self._run(kind, {"{room}": room_key, "{room_name}": room_name, "{path}": str(path)})

    def _run(self, kind: str, values: dict[str, str]) -> SendAttempt:
        template = self.commands.get(kind) or ()
        if not template:
            return SendAttempt(ok=False, returncode=None, timed_out=False, detail=f"no {kind}_command configured")
        argv = [_fill(part, values) for part in template]
        try:
            completed = subprocess.run(  # argv from the operator's own config, no shell
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=self.timeout_seconds,
                check=False,
                env=self.env,
            )
        except subprocess.TimeoutExpired:
            logger.warning("%s command timed out after %.0fs: it may or may not have sent", kind, self.timeout_seconds)
            return SendAttempt(ok=False, returncode=None, timed_out=True, detail="timed out")
        except OSError as exc:
            return SendAttempt(ok=False, returncode=None, timed_out=False, detail=f"cannot start {argv[0]}: {exc}")
        detail = completed.stderr.decode("utf-8", errors="replace").strip()[-_DETAIL_LIMIT:]
        if completed.returncode != 0:
            logger.warning("%s command exited %s: %s", kind, completed.returncode, detail)
        return SendAttempt(
            ok=completed.returncode == 0, returncode=completed.returncode, timed_out=False, detail=detail
        )


def _fill(part: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        part = part.replace(placeholder, value)
    return part
