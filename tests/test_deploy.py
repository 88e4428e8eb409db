"""The deployment files: `deploy/compose.yaml` is a valid Compose file once interpolated (checked with the Compose
specification's parser, as `docker compose config` would — no Docker engine or compose plugin here), and the
compose file and the systemd units run every queue, one beat, and health checks, restarts and limits everywhere."""

import configparser
import copy
import re
from pathlib import Path

import pytest
import yaml
from compose_spec import PyCompose
from django.conf import settings

import agent.tasks
import delivery.tasks
import monitoring.tasks
from config.celery import TASK_QUEUES

DEPLOY = Path(settings.BASE_DIR) / "deploy"
_VARIABLE = re.compile(r"\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}")
LONG_RUNNING = ("postgres", "redis", "qdrant", "web", "worker-agent", "worker-delivery", "worker-default", "beat")


def declared_queues() -> list[str]:
    """The queues the apps' tasks are declared on (the task modules fill `TASK_QUEUES` when imported)."""
    assert agent.tasks and delivery.tasks and monitoring.tasks
    return list(TASK_QUEUES.values())


def compose_interpolate(text: str, environment: dict) -> str:
    """Compose's variable interpolation: `${X}`, `${X:-default}`, `${X:?error}` (an error when X is empty)."""

    def value(match):
        name, operator, argument = match.groups()
        if environment.get(name):
            return environment[name]
        if operator == ":?":
            raise ValueError(f"required variable {name} is missing a value: {argument}")
        return argument or ""

    return _VARIABLE.sub(value, text).replace("$$", "$")


def compose_validate(text: str, environment: dict) -> dict:
    """The resolved document (anchors and merge keys applied, `x-` extensions dropped), validated by compose-spec."""
    document = yaml.safe_load(compose_interpolate(text, environment))
    resolved = {key: value for key, value in document.items() if not key.startswith("x-")}
    PyCompose.from_yaml(yaml.safe_dump(resolved, allow_unicode=True))
    return resolved


@pytest.fixture
def environment():
    values = {}
    for line in (DEPLOY / "env.example").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name] = value
    return {**values, "DJANGO_SECRET_KEY": "a-real-secret", "POSTGRES_PASSWORD": "a-password"}


@pytest.fixture
def compose(environment):
    return compose_validate((DEPLOY / "compose.yaml").read_text(), environment)


def test_the_compose_file_is_valid_and_needs_its_secrets(compose, environment):
    text = (DEPLOY / "compose.yaml").read_text()
    with pytest.raises(ValueError, match="DJANGO_SECRET_KEY"):
        compose_validate(text, {**environment, "DJANGO_SECRET_KEY": ""})


def test_the_validation_catches_a_broken_file(compose):
    """The parser is a real check: a wrong restart policy, memory unit or misspelt key is refused."""
    for break_it in (
        lambda services: services["web"].update(restart="whenever"),
        lambda services: services["beat"]["deploy"]["resources"]["limits"].update(memory="lots"),
        lambda services: services["web"].update(helthcheck={}),
    ):
        broken = copy.deepcopy(compose)
        break_it(broken["services"])
        with pytest.raises(ValueError):
            PyCompose.from_yaml(yaml.safe_dump(broken, allow_unicode=True))


def test_every_long_running_service_has_a_health_check_a_restart_policy_and_a_memory_limit(compose):
    services = compose["services"]
    for name in LONG_RUNNING:
        service = services[name]
        assert service["healthcheck"]["test"], name
        assert service["restart"] in ("always", "unless-stopped"), name
        assert service["deploy"]["resources"]["limits"]["memory"], name
    assert services["migrate"]["restart"] == "no"
    assert services["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_every_queue_has_a_worker_and_beat_runs_once(compose):
    services = compose["services"]
    queues = set()
    for service in services.values():
        command = service.get("command") or []
        if command[:4] == ["celery", "-A", "config", "worker"]:
            queues |= set(command[command.index("-Q") + 1].split(","))
    routed = set(declared_queues()) | {settings.CELERY_TASK_DEFAULT_QUEUE}
    assert queues == routed
    beats = [name for name, service in services.items() if "beat" in (service.get("command") or [])]
    assert beats == ["beat"] and services["beat"]["deploy"]["replicas"] == 1


def test_every_app_process_uses_the_shared_stores(compose):
    """Several processes and hosts: the hub on PostgreSQL, the FAQ and hub vectors on the Qdrant server."""
    for name in ("web", "worker-agent", "worker-delivery", "worker-default", "beat", "migrate"):
        environment = compose["services"][name]["environment"]
        assert environment["KNOWLEDGE_HUB_STORAGE"] == "postgres", name
        assert environment["QDRANT_URL"] == "http://qdrant:6333", name
        assert environment["DJANGO_SETTINGS_MODULE"] == "config.settings.production", name


def _unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read_string((DEPLOY / "systemd" / name).read_text())
    return parser


def test_the_systemd_units_restart_and_cover_every_queue_with_one_beat():
    units = sorted(path.name for path in (DEPLOY / "systemd").glob("*.service"))
    assert units == ["vcs-beat.service", "vcs-migrate.service", "vcs-web.service", "vcs-worker@.service"]
    for name in ("vcs-beat.service", "vcs-web.service", "vcs-worker@.service"):
        service = _unit(name)["Service"]
        assert service["Restart"] == "always" and service["MemoryMax"], name
    worker = _unit("vcs-worker@.service")["Service"]
    queues = {
        queue for assignment in worker["Environment"].split() for queue in assignment.partition("=")[2].split(",")
    }
    assert queues == set(declared_queues()) | {settings.CELERY_TASK_DEFAULT_QUEUE}
    assert "celery -A config beat" in _unit("vcs-beat.service")["Service"]["ExecStart"]
    assert _unit("vcs-migrate.service")["Service"]["Type"] == "oneshot"
