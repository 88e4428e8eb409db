import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from edge.errors import AlreadyRunning, LocalStateError
from edge.statefiles import (
    RunLock,
    append_jsonl,
    atomic_write_json,
    ensure_private_dir,
    read_json,
    remove_stale_temp_files,
)
from edge.tests.helpers import REPO_ROOT
from edge.uploader import CheckpointState, UploadCheckpoint

_WRITER_SCRIPT = """
import sys
from pathlib import Path
from edge.uploader import CheckpointState, UploadCheckpoint
store = UploadCheckpoint(Path(sys.argv[1]))
n = 0
while True:
    n += 1
    store.save(CheckpointState(last_log_id=n, pending_upto=n + 100))
"""


def test_a_failed_rename_leaves_the_old_checkpoint_and_no_temp_file(state_dir, monkeypatch):
    """A crash between writing the temp file and renaming it keeps the previous checkpoint readable."""
    store = UploadCheckpoint(state_dir)
    store.save(CheckpointState(last_log_id=41))

    def crash(*args):
        raise OSError("simulated power loss before rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(LocalStateError):
        store.save(CheckpointState(last_log_id=99))
    monkeypatch.undo()

    assert store.load().last_log_id == 41
    assert [path.name for path in state_dir.iterdir()] == ["upload-checkpoint.json"]


def test_a_failed_fsync_of_the_temp_file_leaves_the_old_checkpoint(state_dir, monkeypatch):
    """If the new content cannot be made durable, the old file is not replaced by it."""
    store = UploadCheckpoint(state_dir)
    store.save(CheckpointState(last_log_id=7))

    def crash(fd):
        raise OSError("simulated disk failure")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(LocalStateError):
        store.save(CheckpointState(last_log_id=8))
    monkeypatch.undo()

    assert store.load().last_log_id == 7


def test_a_process_killed_mid_write_always_leaves_a_valid_checkpoint(state_dir):
    """kill -9 of a process that rewrites the checkpoint in a tight loop: the file is always whole, old or new."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for _ in range(3):
        writer = subprocess.Popen([sys.executable, "-c", _WRITER_SCRIPT, str(state_dir)], env=env)
        checkpoint = state_dir / "upload-checkpoint.json"
        deadline = time.monotonic() + 30
        while not checkpoint.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)  # let it get well into rewriting
        writer.send_signal(signal.SIGKILL)
        writer.wait()

        state = UploadCheckpoint(state_dir).load()
        assert state.last_log_id >= 1
        assert state.pending_upto == state.last_log_id + 100
        remove_stale_temp_files(state_dir, of="upload-checkpoint.json")
        assert [path.name for path in state_dir.iterdir()] == ["upload-checkpoint.json"]


def test_a_damaged_checkpoint_is_an_error_not_a_silent_restart_from_zero(state_dir):
    """Restarting from log 0 would re-upload the whole history; a damaged file stops the run instead."""
    (state_dir / "upload-checkpoint.json").write_text('{"last_log_id": 12', encoding="utf-8")
    with pytest.raises(LocalStateError, match="damaged"):
        UploadCheckpoint(state_dir).load()


def test_state_files_are_private(tmp_path):
    """Token and state files are readable by the owner only (0600) in a 0700 directory."""
    directory = ensure_private_dir(tmp_path / "vcs-edge")
    atomic_write_json(directory / "device.json", {"token": "secret"})
    append_jsonl(directory / "dead-letters.jsonl", {"batch_id": "x"})

    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "device.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((directory / "dead-letters.jsonl").stat().st_mode) == 0o600
    assert read_json(directory / "device.json") == {"token": "secret"}


def test_jsonl_append_keeps_every_record(tmp_path):
    """Each append adds one whole line; earlier lines are untouched."""
    path = tmp_path / "log.jsonl"
    append_jsonl(path, {"n": 1, "text": "네"})
    append_jsonl(path, {"n": 2})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [{"n": 1, "text": "네"}, {"n": 2}]


def test_a_second_run_on_the_same_state_dir_is_refused(tmp_path):
    """Two uploaders (or senders) on one state dir would race on the checkpoint or send twice."""
    with RunLock(tmp_path / "send.lock"), pytest.raises(AlreadyRunning), RunLock(tmp_path / "send.lock"):
        pass
    with RunLock(tmp_path / "send.lock"):  # released again after the first holder exits
        pass
