"""Configuration of the edge programs: a TOML, JSON or INI file, overridden by `VCS_EDGE_*` environment variables.

Unknown keys are errors (a typo must not silently fall back to a default). Relative paths in a file are relative
to that file; relative paths in the environment are relative to the working directory.
"""

import configparser
import json
import os
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from edge.errors import ConfigError

DEFAULT_STATE_DIR = Path("~/.vcs-edge")
DEFAULT_CONFIG_PATH = DEFAULT_STATE_DIR / "config.toml"

# The simulated client DB's schema (edge/simulator.py). A real client DB is mapped by replacing these queries;
# they must return the same column names. `:after_id`, `:upto_id` and `:limit` are bound by the reader.
DEFAULT_LOGS_SQL = """
SELECT l.id AS log_id, r.chat_key AS room_key, r.name AS room_name, l.sender AS sender,
       l.is_mine AS is_mine, l.type AS type, l.message AS message, l.created_at AS created_at,
       l.unread_count AS unread_count, l.client_log_id AS client_log_id
FROM chat_logs AS l JOIN chat_rooms AS r ON r.id = l.chat_id
WHERE l.id > :after_id AND l.id <= :upto_id
ORDER BY l.id
LIMIT :limit
"""
DEFAULT_LATEST_ID_SQL = "SELECT COALESCE(MAX(id), 0) FROM chat_logs"
DEFAULT_ROOMS_SQL = "SELECT chat_key AS room_key, name AS room_name FROM chat_rooms ORDER BY id"
DEFAULT_TYPES = {"text": ["text"], "photo": ["photo"], "file": ["file"]}
MESSAGE_KINDS = ("text", "photo", "file")


@dataclass(frozen=True)
class ClientDbConfig:
    path: Path | None = None
    logs_sql: str = DEFAULT_LOGS_SQL
    latest_id_sql: str = DEFAULT_LATEST_ID_SQL
    rooms_sql: str = DEFAULT_ROOMS_SQL
    # raw `type` value (as text) -> "text" | "photo" | "file"; other values are neither uploaded nor counted
    type_map: dict[str, str] = field(default_factory=lambda: {v: k for k, vs in DEFAULT_TYPES.items() for v in vs})
    utc_offset: str = "+09:00"  # for naive timestamps and epoch numbers; Korea has no DST
    # Only when the client DB records the file name we sent (the simulator does). Off: photos are counted.
    match_attachments_by_name: bool = False
    busy_timeout_seconds: float = 5.0


@dataclass(frozen=True)
class UploadConfig:
    batch_size: int = 200
    max_batch_bytes: int = 1_000_000
    max_batches_per_run: int = 50


@dataclass(frozen=True)
class SendConfig:
    text_command: tuple[str, ...] = ()
    photo_command: tuple[str, ...] = ()
    file_command: tuple[str, ...] = ()
    command_timeout_seconds: float = 60.0
    text_wait_seconds: float = 10.0
    photo_grace_seconds: float = 60.0
    poll_interval_seconds: float = 1.0
    max_resends_per_item: int = 1
    lease_heartbeat_seconds: float = 15.0
    max_jobs_per_run: int = 20


@dataclass(frozen=True)
class EdgeConfig:
    server_url: str = ""
    token: str = ""  # normally empty: `pair` stores the token in <state_dir>/device.json
    state_dir: Path = field(default_factory=lambda: DEFAULT_STATE_DIR.expanduser())
    device_name: str = ""
    connect_timeout_seconds: float = 5.0
    http_timeout_seconds: float = 15.0
    download_timeout_seconds: float = 60.0
    client_db: ClientDbConfig = field(default_factory=ClientDbConfig)
    upload: UploadConfig = field(default_factory=UploadConfig)
    send: SendConfig = field(default_factory=SendConfig)
    source: str = "defaults"  # where it was loaded from, for log lines


# key -> kind; kinds: str, path, float, int, bool, command, types
_TOP_KEYS = {
    "server_url": "str",
    "token": "str",
    "state_dir": "path",
    "device_name": "str",
    "connect_timeout_seconds": "float",
    "http_timeout_seconds": "float",
    "download_timeout_seconds": "float",
}
_SECTION_KEYS = {
    "client_db": {
        "path": "path",
        "logs_sql": "str",
        "latest_id_sql": "str",
        "rooms_sql": "str",
        "types": "types",
        "utc_offset": "str",
        "match_attachments_by_name": "bool",
        "busy_timeout_seconds": "float",
    },
    "upload": {"batch_size": "int", "max_batch_bytes": "int", "max_batches_per_run": "int"},
    "send": {
        "text_command": "command",
        "photo_command": "command",
        "file_command": "command",
        "command_timeout_seconds": "float",
        "text_wait_seconds": "float",
        "photo_grace_seconds": "float",
        "poll_interval_seconds": "float",
        "max_resends_per_item": "int",
        "lease_heartbeat_seconds": "float",
        "max_jobs_per_run": "int",
    },
}
ENVIRONMENT_VARIABLES = {
    "VCS_EDGE_SERVER_URL": (None, "server_url"),
    "VCS_EDGE_TOKEN": (None, "token"),
    "VCS_EDGE_STATE_DIR": (None, "state_dir"),
    "VCS_EDGE_DEVICE_NAME": (None, "device_name"),
    "VCS_EDGE_HTTP_TIMEOUT_SECONDS": (None, "http_timeout_seconds"),
    "VCS_EDGE_CLIENT_DB": ("client_db", "path"),
    "VCS_EDGE_UTC_OFFSET": ("client_db", "utc_offset"),
    "VCS_EDGE_BATCH_SIZE": ("upload", "batch_size"),
    "VCS_EDGE_SEND_COMMAND": ("send", "text_command"),
    "VCS_EDGE_SEND_PHOTO_COMMAND": ("send", "photo_command"),
    "VCS_EDGE_SEND_FILE_COMMAND": ("send", "file_command"),
    "VCS_EDGE_TEXT_WAIT_SECONDS": ("send", "text_wait_seconds"),
    "VCS_EDGE_PHOTO_GRACE_SECONDS": ("send", "photo_grace_seconds"),
    "VCS_EDGE_POLL_INTERVAL_SECONDS": ("send", "poll_interval_seconds"),
}
CONFIG_PATH_VARIABLE = "VCS_EDGE_CONFIG"


def load_config(path: str | Path | None = None, *, environ: Mapping[str, str] | None = None) -> EdgeConfig:
    """Read the file (explicit path, else `VCS_EDGE_CONFIG`, else ~/.vcs-edge/config.toml if it exists) and
    apply the environment on top."""
    environ = os.environ if environ is None else environ
    explicit = path or environ.get(CONFIG_PATH_VARIABLE)
    config_path = Path(explicit).expanduser() if explicit else DEFAULT_CONFIG_PATH.expanduser()
    if config_path.is_file():
        raw = _read_file(config_path)
        base_dir = config_path.parent
        source = str(config_path)
    elif explicit:
        raise ConfigError(f"config file {config_path} does not exist")
    else:
        raw, base_dir, source = {}, Path.cwd(), "environment"

    values = _validated(raw, base_dir=base_dir, origin=str(config_path))
    for variable, (section, key) in ENVIRONMENT_VARIABLES.items():
        if environ.get(variable, "") == "":
            continue
        kinds = _TOP_KEYS if section is None else _SECTION_KEYS[section]
        value = _coerce(environ[variable], kinds[key], where=variable, base_dir=Path.cwd())
        (values if section is None else values.setdefault(section, {}))[key] = value
    return _build(values, source=source)


def _read_file(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            return tomllib.loads(text)
        if suffix == ".json":
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ConfigError(f"{path}: the top level must be an object")
            return data
        if suffix in (".ini", ".cfg"):
            return _ini_to_dict(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, configparser.Error) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    raise ConfigError(f"{path}: unknown config format {suffix!r} (use .toml, .json or .ini)")


def _ini_to_dict(text: str) -> dict:
    """`[edge]` holds the top-level keys; `[client_db]`, `[upload]`, `[send]` and `[client_db.types]` the rest."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keep key case
    parser.read_string(text)
    data: dict = {}
    for section in parser.sections():
        items = dict(parser.items(section))
        if section == "edge":
            data.update(items)
        elif section == "client_db.types":
            data.setdefault("client_db", {})["types"] = items
        else:
            data.setdefault(section, {}).update(items)
    return data


def _validated(raw: dict, *, base_dir: Path, origin: str) -> dict:
    values: dict = {}
    for key, value in raw.items():
        if key in _SECTION_KEYS:
            if not isinstance(value, dict):
                raise ConfigError(f"{origin}: [{key}] must be a section")
            section_values = values.setdefault(key, {})
            for sub_key, sub_value in value.items():
                kind = _SECTION_KEYS[key].get(sub_key)
                if kind is None:
                    raise ConfigError(f"{origin}: unknown key {key}.{sub_key}")
                section_values[sub_key] = _coerce(sub_value, kind, where=f"{key}.{sub_key}", base_dir=base_dir)
        elif key in _TOP_KEYS:
            values[key] = _coerce(value, _TOP_KEYS[key], where=key, base_dir=base_dir)
        else:
            raise ConfigError(f"{origin}: unknown key {key}")
    return values


def _coerce(value, kind: str, *, where: str, base_dir: Path):
    try:
        if kind == "str":
            if not isinstance(value, str):
                raise TypeError("expected text")
            return value.strip()
        if kind == "path":
            path = Path(str(value)).expanduser()
            return path if path.is_absolute() else (base_dir / path)
        if kind == "float":
            number = float(value)
            if number < 0:
                raise ValueError("must not be negative")
            return number
        if kind == "int":
            if isinstance(value, bool):
                raise TypeError("expected a whole number")
            number = int(value)
            if number < 0:
                raise ValueError("must not be negative")
            return number
        if kind == "bool":
            if isinstance(value, bool):
                return value
            lowered = str(value).strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError("expected true or false")
        if kind == "command":
            if isinstance(value, str):
                # A TOML/JSON list is safer on Windows, where shell-style backslashes are ambiguous.
                return tuple(shlex.split(value, posix=os.name != "nt"))
            if isinstance(value, list) and all(isinstance(part, str) for part in value):
                return tuple(value)
            raise TypeError("expected a command line (text) or a list of arguments")
        if kind == "types":
            return _type_map(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"config {where}: {exc} (got {value!r})") from exc
    raise AssertionError(f"unknown config kind {kind}")


def _type_map(value) -> dict[str, str]:
    if not isinstance(value, dict):
        raise TypeError("expected a table of kind = [raw type values]")
    mapping: dict[str, str] = {}
    for kind, raw_values in value.items():
        if kind not in MESSAGE_KINDS:
            raise ValueError(f"unknown message kind {kind!r} (use {', '.join(MESSAGE_KINDS)})")
        if isinstance(raw_values, str):
            raw_values = [part.strip() for part in raw_values.split(",") if part.strip()]
        for raw in raw_values:
            mapping[str(raw)] = kind
    return mapping


def _build(values: dict, *, source: str) -> EdgeConfig:
    client_db_values = dict(values.get("client_db", {}))
    if "types" in client_db_values:
        client_db_values["type_map"] = client_db_values.pop("types")
    top = {key: value for key, value in values.items() if key not in _SECTION_KEYS}
    config = EdgeConfig(
        **top,
        client_db=ClientDbConfig(**client_db_values),
        upload=UploadConfig(**values.get("upload", {})),
        send=SendConfig(**values.get("send", {})),
        source=source,
    )
    if config.server_url and not config.server_url.startswith(("http://", "https://")):
        raise ConfigError(f"server_url must start with http:// or https:// (got {config.server_url!r})")
    if config.upload.batch_size < 1:
        raise ConfigError("upload.batch_size must be at least 1")
    if config.send.poll_interval_seconds <= 0:
        raise ConfigError("send.poll_interval_seconds must be above 0")
    return config


def require(config: EdgeConfig, *names: str) -> None:
    """Fail with a config error naming every missing setting a command needs."""
    missing = []
    for name in names:
        section, _, key = name.rpartition(".")
        holder = getattr(config, section) if section else config
        if not getattr(holder, key):
            env = next((var for var, (s, k) in ENVIRONMENT_VARIABLES.items() if (s or "") == section and k == key), "")
            missing.append(f"{name}" + (f" (or {env})" if env else ""))
    if missing:
        raise ConfigError(f"missing configuration ({config.source}): {', '.join(missing)}")
