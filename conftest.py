"""Test-wide guards: no test may reach the network beyond this machine's own services, and no property test fails
on how long an example took."""

import ipaddress
import socket

import pytest
from hypothesis import settings as hypothesis_settings

# Hypothesis' default 200 ms deadline per example is a timing assertion: on a loaded 2-core machine a correct
# example can exceed it. Speed is measured by the benchmarks in bench/, not here.
hypothesis_settings.register_profile("project", deadline=None)
hypothesis_settings.load_profile("project")

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo
_LOCAL_NAMES = {"localhost", "testserver", "", None}


class NetworkAccessBlocked(RuntimeError):
    pass


def _is_local(host) -> bool:
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_address(sock, address):
    if sock.family == socket.AF_UNIX:
        return
    host = address[0] if isinstance(address, tuple) else address
    if not _is_local(host):
        raise NetworkAccessBlocked(f"Outbound network call to {address!r} attempted in a test.")


def _guarded_connect(self, address):
    _check_address(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    _check_address(self, address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host, *args, **kwargs):
    if isinstance(host, bytes):
        host = host.decode()
    if not _is_local(host):
        raise NetworkAccessBlocked(f"Name lookup of {host!r} attempted in a test.")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _block_outbound_network(monkeypatch):
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)


@pytest.fixture(autouse=True)
def _fresh_redis_database(request):
    """Every test starts with this worker's own, empty Redis database."""
    from django.conf import settings

    if "redis" not in settings.CACHES["default"]["BACKEND"].lower():
        return
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL)
    client.flushdb()
    client.close()


@pytest.fixture
def knowledge_stores(settings, tmp_path):
    """Empty FAQ index (Qdrant local mode) and knowledge hub (LightRAG files) in a temporary folder."""
    from agent.knowledge.faq_index import faq_index_reset
    from agent.knowledge.hub_runtime import runtime_reset

    settings.QDRANT_URL = ""
    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    settings.LIGHTRAG_WORKING_DIR = str(tmp_path / "lightrag")
    faq_index_reset()
    runtime_reset()
    yield tmp_path
    faq_index_reset()
    runtime_reset()
