"""The local FAQ index across processes: one process owns the folder and serves it; the others ask it, never
building a client that would fail (slowly) on the lock, never answering from a silent keyword fallback."""

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from agent.knowledge import faq_index
from agent.knowledge.faq import faq_search
from agent.knowledge.faq_index import FaqIndexUnavailable, faq_index_owner, faq_index_reset, faq_index_vector_count
from agent.knowledge.faq_services import faq_entry_create, faq_entry_update

PROJECT_DIR = Path(django_settings.BASE_DIR)

OWNER_SCRIPT = """
import sys
from agent.knowledge.embeddings import embedder_get
from agent.knowledge.faq_index import faq_index_sync, faq_index_owner
faq_index_sync()
embedder_get().embed_documents(["준비"])  # the model loaded before serving: the test is about routing, not cold start
print("owner", faq_index_owner()["this_process"], flush=True)
sys.stdin.read()  # serve until the test closes stdin
"""


@pytest.fixture
def local_index(settings, tmp_path):
    settings.QDRANT_URL = ""
    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    settings.FAQ_HYBRID_SEARCH = False
    faq_index_reset()
    yield tmp_path / "qdrant"
    faq_index_reset()


def _child_env(local_index) -> dict:
    """The environment of a `manage.py shell` child on this test's database and local index folder."""
    database = connection.settings_dict
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_DIR),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "QDRANT_PATH": str(local_index),
        "QDRANT_URL": "",
        "FAQ_HYBRID_SEARCH": "false",
    }
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


@pytest.fixture
def owner_process(local_index):
    """Another process (a `manage.py shell`) that opens the folder first and serves it until the test ends."""
    env = _child_env(local_index)
    child = subprocess.Popen(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", OWNER_SCRIPT],
        cwd=PROJECT_DIR,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline()
        if line.strip() != "owner True":
            child.kill()
            pytest.fail(f"the owner process did not start: {line}{child.stderr.read()[-3000:]}")
        yield child
    finally:
        if not child.stdin.closed:
            child.stdin.close()
        child.wait(timeout=60)


@pytest.fixture
def client_constructions(monkeypatch):
    """How many QdrantClient objects this process builds."""
    import qdrant_client

    built = []
    real = qdrant_client.QdrantClient

    def counting(*args, **kwargs):
        built.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(qdrant_client, "QdrantClient", counting)
    return built


@pytest.mark.django_db(transaction=True)
def test_a_process_without_the_folder_is_served_by_its_owner_and_sees_every_edit(owner_process, client_constructions):
    """Writes and searches of this process go to the owner: the entry written here is found, an edit made here is
    what the next search returns, the health count is the owner's, and this process never opened the folder."""
    entry = faq_entry_create(question="반품 접수는 어떻게 하나요?", answer="협력사 포털의 반품 메뉴에서 접수합니다.")

    found = faq_search("반품 접수 방법 알려주세요")
    assert [item.reference for item in found][:1] == [f"faq:{entry.pk}"]
    assert "반품 메뉴" in found[0].text

    faq_entry_update(entry.pk, question=entry.question, answer="고객센터 1588-0000으로 전화해 접수합니다.")
    again = faq_search("반품 접수 방법 알려주세요")
    assert "1588-0000" in again[0].text and "반품 메뉴" not in again[0].text

    assert faq_index_vector_count() == 1
    owner = faq_index_owner()
    assert owner["held"] and not owner["this_process"]
    assert owner["owner"]["pid"] == owner_process.pid and owner["owner"]["host"]
    assert client_constructions == []


@pytest.mark.django_db(transaction=True)
def test_when_the_owner_exits_the_next_caller_takes_the_folder(owner_process):
    entry = faq_entry_create(question="정산일은 언제인가요?", answer="매월 10일입니다.")
    owner_process.stdin.close()
    owner_process.wait(timeout=60)
    assert owner_process.returncode == 0

    assert [item.reference for item in faq_search("정산일 알려주세요")][:1] == [f"faq:{entry.pk}"]
    assert faq_index_owner()["this_process"] is True


@pytest.mark.django_db
def test_a_folder_held_by_a_client_that_does_not_serve_fails_at_once_without_building_a_client(
    local_index, client_constructions
):
    """The measured slowdown: a process without the folder used to build `QdrantClient(path=…)` on every call,
    which reads every collection before it tries the lock (seconds at 20,000 entries). The lock is tested first."""
    from qdrant_client import QdrantClient

    holder = QdrantClient(path=str(local_index))  # built before the counter's view: not counted below
    client_constructions.clear()
    try:
        for _ in range(3):
            with pytest.raises(FaqIndexUnavailable, match="held by another process"):
                faq_index_vector_count()
        assert faq_index_owner() == {
            "backend": "local",
            "folder": str(Path(local_index).resolve()),
            "held": True,
            "owner": None,
            "this_process": False,
        }
    finally:
        holder.close()
    assert client_constructions == []
    assert faq_index_vector_count() == 0  # free again: this process takes it
    assert faq_index_owner()["this_process"] is True
    assert faq_index._state.owner_server is not None


EXIT_SCRIPT = """
from agent.knowledge.faq_index import faq_index_client, faq_index_owner
faq_index_client()
print("owner", faq_index_owner()["this_process"], flush=True)
"""


@pytest.mark.django_db(transaction=True)
def test_a_process_that_opened_the_local_index_exits_cleanly(local_index):
    """The local client is closed while the interpreter still works: left to its finaliser it printed an
    ImportError traceback after every command that had searched the FAQ, and kept the folder's lock."""
    env = _child_env(local_index)
    child = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", EXIT_SCRIPT],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    assert child.stdout.strip() == "owner True"
    assert "Traceback" not in child.stderr and "Exception ignored" not in child.stderr, child.stderr[-3000:]
    assert faq_index_owner()["held"] is False  # the folder was released at exit


def _dropping_owner(folder: str, *, drops: int, on_last_drop=None) -> threading.Thread:
    """A stand-in owner at the folder's socket that reads each request and closes without a reply, as an owner
    does when it exits in the middle of a request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = faq_index._owner_socket_path(folder)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener.bind(path)
    listener.listen(4)

    def serve():
        for number in range(1, drops + 1):
            connection, _ = listener.accept()
            connection.recv(1 << 16)
            if number == drops:
                listener.close()
                os.unlink(path)
                if on_last_drop:
                    on_last_drop()
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.mark.django_db
def test_an_owner_that_exits_during_a_request_is_asked_again_and_the_folder_taken(local_index):
    from qdrant_client import QdrantClient

    folder = faq_index._client_config()[1]
    holder = QdrantClient(path=str(local_index))
    owner = _dropping_owner(folder, drops=1, on_last_drop=holder.close)

    assert faq_index_vector_count() == 0
    owner.join(timeout=10)
    assert faq_index_owner()["this_process"] is True


@pytest.mark.django_db
def test_an_owner_that_drops_the_request_twice_is_reported_unavailable(local_index):
    from qdrant_client import QdrantClient

    folder = faq_index._client_config()[1]
    holder = QdrantClient(path=str(local_index))
    try:
        owner = _dropping_owner(folder, drops=2)
        with pytest.raises(FaqIndexUnavailable, match="did not answer count"):
            faq_index_vector_count()
        owner.join(timeout=10)
        assert faq_index_owner()["this_process"] is False
    finally:
        holder.close()


@pytest.mark.django_db
def test_an_owner_of_ours_that_is_exiting_hands_the_folder_over_instead_of_failing(local_index):
    """Its socket already gone, its `owner.json` still there and the folder still locked for a moment: the caller
    waits for the lock to come free and takes the folder, rather than reporting a holder that does not serve."""
    from qdrant_client import QdrantClient

    folder = Path(faq_index._client_config()[1])
    holder = QdrantClient(path=str(local_index))
    (folder / "owner.json").write_text('{"pid": 1, "host": "elsewhere", "started_at": "now", "socket": "gone"}')

    def exit_soon():
        time.sleep(0.5)
        (folder / "owner.json").unlink()
        holder.close()

    exiting = threading.Thread(target=exit_soon)
    exiting.start()
    try:
        assert faq_index_vector_count() == 0
    finally:
        exiting.join(timeout=10)
    assert faq_index_owner()["this_process"] is True
