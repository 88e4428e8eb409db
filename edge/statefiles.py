"""Durable local files: atomic JSON writes, an fsynced JSON Lines append, and a per-program run lock.

A crash (power loss, kill -9) at any point leaves every state file either in its old or its new version:
the new content goes to a temp file in the same directory, which is flushed and fsynced, then renamed over
the old file with `os.replace` (atomic on POSIX and Windows), and finally the directory itself is fsynced so
the rename survives a power loss.
"""

import json
import os
import secrets
import sys
from pathlib import Path

from edge.errors import AlreadyRunning, LocalStateError

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
_TEMP_SUFFIX = ".tmp"


def ensure_private_dir(path: Path) -> Path:
    try:
        path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalStateError(f"cannot create state directory {path}: {exc}") from exc
    return path


def fsync_dir(path: Path) -> None:
    # Windows cannot open a directory for fsync; NTFS journals the rename itself.
    if sys.platform == "win32":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = PRIVATE_FILE_MODE) -> None:
    temp_path = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{_TEMP_SUFFIX}")
    try:
        fd = os.open(temp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_path, path)
        fsync_dir(path.parent)
    except OSError as exc:
        temp_path.unlink(missing_ok=True)
        raise LocalStateError(f"cannot write {path}: {exc}") from exc


def atomic_write_json(path: Path, data: dict, *, mode: int = PRIVATE_FILE_MODE) -> None:
    encoded = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8")
    atomic_write_bytes(path, encoded, mode=mode)


def read_json(path: Path) -> dict | None:
    """The file's object, or None when it does not exist. A damaged file is an error, never silently reset."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LocalStateError(f"cannot read {path}: {exc}") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LocalStateError(f"{path} is damaged ({exc}); inspect it before running again") from exc
    if not isinstance(data, dict):
        raise LocalStateError(f"{path} does not hold a JSON object")
    return data


def append_jsonl(path: Path, record: dict) -> None:
    """Append one line and fsync it before returning, so a caller may act on the record being on disk."""
    line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0), PRIVATE_FILE_MODE)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise LocalStateError(f"cannot append to {path}: {exc}") from exc


def remove_stale_temp_files(directory: Path, *, of: str = "*", recursive: bool = False) -> int:
    """Delete temp files of `of` (a file name pattern) left by a crash mid-write. Call only while holding the run
    lock of the program that owns those files."""
    if not directory.is_dir():
        return 0
    pattern = f".{of}.*{_TEMP_SUFFIX}"
    removed = 0
    for temp_path in directory.rglob(pattern) if recursive else directory.glob(pattern):
        temp_path.unlink(missing_ok=True)
        removed += 1
    return removed


class RunLock:
    """An exclusive, non-blocking lock file: two runs of one program on one state dir never overlap.

    The operating system releases it when the process dies, so a crash never leaves it stuck.
    """

    def __init__(self, path: Path):
        self.path = path
        self._handle = None

    def __enter__(self) -> "RunLock":
        handle = open(self.path, "a+b")  # held open for the lifetime of the lock
        try:
            _lock_exclusive(handle)
        except OSError as exc:
            handle.close()
            raise AlreadyRunning(f"another run holds {self.path}; not starting a second one") from exc
        self._handle = handle
        return self

    def __exit__(self, *exc_info) -> None:
        if self._handle is not None:
            _unlock(self._handle)
            self._handle.close()
            self._handle = None


if sys.platform == "win32":
    import msvcrt

    def _lock_exclusive(handle) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)

    def _unlock(handle) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock_exclusive(handle) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(handle) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
