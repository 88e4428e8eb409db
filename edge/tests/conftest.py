"""Fixtures of the edge tests: a simulated client DB, a fake edge API server, a state dir and a fake clock.

None of them needs the Django test database; the project's root conftest still applies (network guard).
"""

import os

import pytest

from edge import simulator
from edge.config import ClientDbConfig, SendConfig, UploadConfig
from edge.tests.helpers import REPO_ROOT, FakeClock, FakeEdgeServer

ROOM_KEY = "chat-9912"
ROOM_NAME = "(1234) 대한물산"
OTHER_ROOM_KEY = "chat-7001"


@pytest.fixture
def client_db(tmp_path):
    return simulator.create_client_db(
        tmp_path / "client.db", rooms=[(ROOM_KEY, ROOM_NAME), (OTHER_ROOM_KEY, "(2002) 가온상사")]
    )


@pytest.fixture
def client_db_config(client_db):
    return ClientDbConfig(path=client_db)


@pytest.fixture
def state_dir(tmp_path):
    path = tmp_path / "state"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def fake_server():
    server = FakeEdgeServer().start()
    yield server
    server.stop()


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def upload_config():
    return UploadConfig(batch_size=3)


@pytest.fixture
def send_config():
    return SendConfig(text_wait_seconds=10, photo_grace_seconds=60, poll_interval_seconds=1, lease_heartbeat_seconds=15)


@pytest.fixture
def subprocess_env():
    """The fake send command is `python -m edge.simulator`: make `edge` importable from any working directory."""
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
