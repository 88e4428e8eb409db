"""Reading the local KakaoTalk client DB through configurable SQL (the `ChatDbReader` adapter).

The default queries read the simulated schema of edge/simulator.py. A real client DB is mapped by giving
queries that return the same columns (see docs/edge.md, "Mapping a real client DB"):

    log_id        integer, strictly increasing with arrival (the uploader's checkpoint)
    room_key      stable id of the room        room_name   its display name
    sender        display name                 is_mine     1 when sent from this client
    type          raw type, mapped by `client_db.types` to text / photo / file (other types are skipped)
    message       the text; for a photo or file, its file name when the client records one ('' otherwise)
    created_at    ISO 8601 text (naive = `utc_offset`) or epoch seconds / milliseconds
    unread_count  the client's unread counter of that message
    client_log_id the client's own message id, or NULL
"""

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Protocol

from edge.config import ClientDbConfig
from edge.errors import ClientDbError, ConfigError

REQUIRED_COLUMNS = (
    "log_id",
    "room_key",
    "room_name",
    "sender",
    "is_mine",
    "type",
    "message",
    "created_at",
    "unread_count",
    "client_log_id",
)
_NO_UPPER_BOUND = 2**62
_EPOCH_MILLISECONDS_FROM = 10**11  # epoch seconds stay below this until the year 5138


@dataclass(frozen=True)
class ChatLog:
    log_id: int
    room_key: str
    room_name: str
    sender: str
    is_mine: bool
    kind: str | None  # "text" | "photo" | "file"; None for types that are neither uploaded nor counted
    text: str  # "" for photos and files
    attachment_name: str  # "" for texts, or when the client does not record the name
    sent_at: datetime
    unread_count: int
    client_log_id: str


@dataclass(frozen=True)
class ChatRoom:
    room_key: str
    room_name: str


class ChatDbReader(Protocol):
    def logs_after(self, after_id: int, *, limit: int | None = None, upto_id: int | None = None) -> list[ChatLog]:
        """Logs with after_id < log_id <= upto_id, oldest first, at most `limit`."""

    def latest_log_id(self) -> int: ...

    def rooms(self) -> list[ChatRoom]: ...


def parse_utc_offset(text: str) -> timezone:
    sign = -1 if text.startswith("-") else 1
    try:
        hours, minutes = text.lstrip("+-").split(":")
        return timezone(sign * timedelta(hours=int(hours), minutes=int(minutes)))
    except ValueError as exc:
        raise ConfigError(f"client_db.utc_offset must look like +09:00 (got {text!r})") from exc


class SqliteChatDbReader:
    """Reads a SQLite client DB read-only, with a short-lived connection per call (never holds a lock)."""

    def __init__(self, config: ClientDbConfig):
        if config.path is None:
            raise ConfigError("client_db.path is not set (or VCS_EDGE_CLIENT_DB)")
        if not config.path.is_file():
            raise ConfigError(f"client DB {config.path} does not exist")
        self.config = config
        self._zone = parse_utc_offset(config.utc_offset)

    def check_mapping(self) -> None:
        """Fail early with a config error when the mapping queries do not return the columns the reader needs."""
        with self._connect() as connection:
            try:
                cursor = connection.execute(self.config.logs_sql, {"after_id": 0, "upto_id": 0, "limit": 0})
                columns = {description[0] for description in cursor.description or ()}
                connection.execute(self.config.latest_id_sql).fetchone()
                rooms_cursor = connection.execute(self.config.rooms_sql)
                room_columns = {description[0] for description in rooms_cursor.description or ()}
            except sqlite3.Error as exc:
                raise ConfigError(f"client DB mapping SQL fails: {exc}") from exc
        missing = [column for column in REQUIRED_COLUMNS if column not in columns]
        missing += [f"rooms.{column}" for column in ("room_key", "room_name") if column not in room_columns]
        if missing:
            raise ConfigError(f"client DB mapping SQL does not return: {', '.join(missing)}")

    def logs_after(self, after_id: int, *, limit: int | None = None, upto_id: int | None = None) -> list[ChatLog]:
        params = {
            "after_id": after_id,
            "upto_id": _NO_UPPER_BOUND if upto_id is None else upto_id,
            "limit": -1 if limit is None else limit,
        }
        rows = self._fetch(self.config.logs_sql, params)
        return [self._to_log(row) for row in rows]

    def latest_log_id(self) -> int:
        rows = self._fetch(self.config.latest_id_sql, {})
        return int(rows[0][0] or 0) if rows else 0

    def rooms(self) -> list[ChatRoom]:
        return [
            ChatRoom(room_key=str(row["room_key"]), room_name=str(row["room_name"]))
            for row in self._fetch(self.config.rooms_sql, {})
        ]

    def _connect(self) -> sqlite3.Connection:
        uri = f"{Path(self.config.path).resolve().as_uri()}?mode=ro"
        try:
            connection = sqlite3.connect(uri, uri=True, timeout=self.config.busy_timeout_seconds)
        except sqlite3.Error as exc:
            raise ClientDbError(f"cannot open client DB {self.config.path}: {exc}") from exc
        connection.row_factory = sqlite3.Row
        return connection

    def _fetch(self, sql: str, params: dict) -> list[sqlite3.Row]:
        connection = self._connect()
        try:
            return connection.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise ClientDbError(f"reading client DB {self.config.path} failed: {exc}") from exc
        finally:
            connection.close()

    def _to_log(self, row: sqlite3.Row) -> ChatLog:
        kind = self.config.type_map.get(str(row["type"]))
        message = "" if row["message"] is None else str(row["message"])
        return ChatLog(
            log_id=int(row["log_id"]),
            room_key=str(row["room_key"]),
            room_name=str(row["room_name"] or ""),
            sender=str(row["sender"] or ""),
            is_mine=_truthy(row["is_mine"]),
            kind=kind,
            text=message if kind == "text" else "",
            attachment_name=message if kind in ("photo", "file") else "",
            sent_at=self._to_datetime(row["created_at"]),
            unread_count=max(int(row["unread_count"] or 0), 0),
            client_log_id="" if row["client_log_id"] is None else str(row["client_log_id"]),
        )

    def _to_datetime(self, value) -> datetime:
        if isinstance(value, int | float) or (isinstance(value, str) and value.strip().isdigit()):
            number = float(value)
            if number >= _EPOCH_MILLISECONDS_FROM:
                number /= 1000
            return datetime.fromtimestamp(number, tz=UTC).astimezone(self._zone)
        try:
            moment = datetime.fromisoformat(str(value).strip())
        except ValueError as exc:
            raise ClientDbError(f"client DB created_at {value!r} is neither ISO 8601 nor epoch") from exc
        return moment if moment.tzinfo else moment.replace(tzinfo=self._zone)


def _truthy(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "y")
    return bool(value)
