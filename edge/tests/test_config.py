import json
from pathlib import Path

import pytest

from edge.config import DEFAULT_LOGS_SQL, load_config, require
from edge.errors import ConfigError

TOML = """
server_url = "https://cs.example.test"
device_name = "cs-pc-03"
state_dir = "state"

[client_db]
path = "kakao/chat.db"
utc_offset = "+09:00"

[client_db.types]
text = ["1"]
photo = ["2", "27"]
file = ["18"]

[upload]
batch_size = 150

[send]
text_command = ["kmsg", "send", "--room", "{room}", "--text-file", "{file}"]
photo_grace_seconds = 90
"""

INI = """
[edge]
server_url = https://cs.example.test
device_name = cs-pc-03
state_dir = state

[client_db]
path = kakao/chat.db
utc_offset = +09:00

[client_db.types]
text = 1
photo = 2, 27
file = 18

[upload]
batch_size = 150

[send]
text_command = kmsg send --room {room} --text-file {file}
photo_grace_seconds = 90
"""

JSON = {
    "server_url": "https://cs.example.test",
    "device_name": "cs-pc-03",
    "state_dir": "state",
    "client_db": {
        "path": "kakao/chat.db",
        "utc_offset": "+09:00",
        "types": {"text": [1], "photo": [2, 27], "file": [18]},
    },
    "upload": {"batch_size": 150},
    "send": {"text_command": "kmsg send --room {room} --text-file {file}", "photo_grace_seconds": 90},
}


@pytest.mark.parametrize("suffix", [".toml", ".ini", ".json"])
def test_the_three_file_formats_read_the_same(tmp_path, suffix):
    """TOML, INI and JSON files with the same settings give the same configuration."""
    path = tmp_path / f"config{suffix}"
    path.write_text({".toml": TOML, ".ini": INI, ".json": json.dumps(JSON)}[suffix], encoding="utf-8")
    config = load_config(path, environ={})

    assert config.server_url == "https://cs.example.test"
    assert config.device_name == "cs-pc-03"
    assert config.state_dir == tmp_path / "state"  # relative to the file
    assert config.client_db.path == tmp_path / "kakao" / "chat.db"
    assert config.client_db.type_map == {"1": "text", "2": "photo", "27": "photo", "18": "file"}
    assert config.client_db.logs_sql == DEFAULT_LOGS_SQL
    assert config.upload.batch_size == 150
    assert config.send.text_command == ("kmsg", "send", "--room", "{room}", "--text-file", "{file}")
    assert config.send.photo_grace_seconds == 90
    assert config.send.text_wait_seconds == 10  # default


def test_environment_variables_win_over_the_file(tmp_path):
    """VCS_EDGE_* override the file; relative paths from the environment are relative to the working dir."""
    path = tmp_path / "config.toml"
    path.write_text(TOML, encoding="utf-8")
    config = load_config(
        path,
        environ={
            "VCS_EDGE_SERVER_URL": "http://127.0.0.1:8000",
            "VCS_EDGE_TOKEN": "tok",
            "VCS_EDGE_CLIENT_DB": str(tmp_path / "other.db"),
            "VCS_EDGE_STATE_DIR": str(tmp_path / "env-state"),
            "VCS_EDGE_SEND_COMMAND": "kmsg send --room {room} --text-file {file}",
            "VCS_EDGE_PHOTO_GRACE_SECONDS": "75",
            "VCS_EDGE_BATCH_SIZE": "20",
        },
    )
    assert config.server_url == "http://127.0.0.1:8000"
    assert config.token == "tok"
    assert config.client_db.path == tmp_path / "other.db"
    assert config.state_dir == tmp_path / "env-state"
    assert config.send.photo_grace_seconds == 75
    assert config.upload.batch_size == 20
    assert config.client_db.type_map["27"] == "photo"  # the rest still comes from the file


def test_environment_alone_is_enough(tmp_path, monkeypatch):
    """Without a config file (the default path missing) the environment configures everything."""
    monkeypatch.setenv("HOME", str(tmp_path))
    config = load_config(None, environ={"VCS_EDGE_SERVER_URL": "https://cs.example.test"})
    assert config.server_url == "https://cs.example.test"
    assert config.state_dir == Path(tmp_path) / ".vcs-edge"
    assert config.source == "environment"


def test_the_config_path_can_come_from_the_environment(tmp_path):
    path = tmp_path / "edge.json"
    path.write_text(json.dumps({"server_url": "https://a.test"}), encoding="utf-8")
    assert load_config(None, environ={"VCS_EDGE_CONFIG": str(path)}).server_url == "https://a.test"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('server_ulr = "https://x.test"', "unknown key server_ulr"),
        ("[send]\ntext_wait = 5", "unknown key send.text_wait"),
        ('[upload]\nbatch_size = "many"', "upload.batch_size"),
        ("[upload]\nbatch_size = 0", "at least 1"),
        ('server_url = "cs.example.test"', "must start with http"),
        ('[client_db.types]\nsticker = ["20"]', "unknown message kind"),
        ("server_url = ", "config.toml"),
    ],
)
def test_mistakes_in_the_file_are_config_errors(tmp_path, content, message):
    """A typo never falls back to a default silently."""
    path = tmp_path / "config.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(path, environ={})


def test_an_explicit_config_file_must_exist(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml", environ={})


def test_require_names_every_missing_setting_and_its_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    config = load_config(None, environ={})
    with pytest.raises(ConfigError) as raised:
        require(config, "server_url", "client_db.path", "send.text_command")
    text = str(raised.value)
    assert "server_url (or VCS_EDGE_SERVER_URL)" in text
    assert "client_db.path (or VCS_EDGE_CLIENT_DB)" in text
    assert "send.text_command (or VCS_EDGE_SEND_COMMAND)" in text
