import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from edge import simulator
from edge.client_db import SqliteChatDbReader
from edge.config import ClientDbConfig
from edge.errors import ClientDbError, ConfigError
from edge.tests.conftest import ROOM_KEY, ROOM_NAME

KST = timezone(timedelta(hours=9))

# A client DB of another shape: camelCase tables, integer types, epoch-millisecond times, names in a JSON column.
REAL_LIKE_SCHEMA = """
CREATE TABLE chatRooms (chatId INTEGER PRIMARY KEY, roomTitle TEXT);
CREATE TABLE chatLogs (logId INTEGER PRIMARY KEY, chatId INTEGER, authorName TEXT, isMine INTEGER,
                       message TEXT, attachment TEXT, type INTEGER, sendAt INTEGER, unread INTEGER, clientId TEXT);
"""
REAL_LIKE_LOGS_SQL = """
SELECT l.logId AS log_id, CAST(l.chatId AS TEXT) AS room_key, r.roomTitle AS room_name, l.authorName AS sender,
       l.isMine AS is_mine, l.type AS type,
       CASE WHEN l.type = 1 THEN l.message ELSE json_extract(l.attachment, '$.name') END AS message,
       l.sendAt AS created_at, l.unread AS unread_count, l.clientId AS client_log_id
FROM chatLogs AS l JOIN chatRooms AS r ON r.chatId = l.chatId
WHERE l.logId > :after_id AND l.logId <= :upto_id ORDER BY l.logId LIMIT :limit
"""


def test_reads_the_simulated_db_past_a_checkpoint(client_db, client_db_config):
    """logs_after returns the rows past the id, oldest first, mapped to text / photo / file."""
    first = simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="안녕하세요", unread_count=2)
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="나", text="a.jpg", kind="photo", is_mine=True)
    reader = SqliteChatDbReader(client_db_config)
    reader.check_mapping()

    text, photo = reader.logs_after(0)
    assert (text.log_id, text.room_key, text.room_name, text.sender) == (first, ROOM_KEY, ROOM_NAME, "김대리")
    assert (text.kind, text.text, text.unread_count, text.is_mine) == ("text", "안녕하세요", 2, False)
    assert text.sent_at.utcoffset() == timedelta(hours=9)
    assert (photo.kind, photo.text, photo.attachment_name, photo.is_mine) == ("photo", "", "a.jpg", True)
    assert reader.logs_after(first) == [photo]
    assert reader.logs_after(0, limit=1) == [text]
    assert reader.logs_after(0, upto_id=first) == [text]
    assert reader.latest_log_id() == photo.log_id


def test_a_real_client_db_shape_is_mapped_by_configuration(tmp_path):
    """Other table names, integer types, epoch milliseconds and names inside JSON are handled by the mapping SQL."""
    path = tmp_path / "real.db"
    connection = sqlite3.connect(path)
    connection.executescript(REAL_LIKE_SCHEMA)
    sent = datetime(2026, 11, 30, 10, 15, 2, tzinfo=KST)
    connection.execute("INSERT INTO chatRooms VALUES (9912, '(1234) 대한물산')")
    connection.execute(
        "INSERT INTO chatLogs VALUES (5, 9912, '김대리', 0, '@봇 단가?', NULL, 1, ?, 3, 'c-1')",
        (int(sent.timestamp() * 1000),),
    )
    connection.execute(
        "INSERT INTO chatLogs VALUES (6, 9912, '나', 1, '', '{\"name\": \"p.jpg\"}', 27, ?, 0, 'c-2')",
        (int(sent.timestamp() * 1000),),
    )
    connection.execute("INSERT INTO chatLogs VALUES (7, 9912, '', 0, 'feed', NULL, 0, ?, 0, NULL)", (0,))
    connection.commit()
    connection.close()
    config = ClientDbConfig(
        path=path,
        logs_sql=REAL_LIKE_LOGS_SQL,
        latest_id_sql="SELECT MAX(logId) FROM chatLogs",
        rooms_sql="SELECT CAST(chatId AS TEXT) AS room_key, roomTitle AS room_name FROM chatRooms",
        type_map={"1": "text", "2": "photo", "27": "photo", "18": "file"},
    )
    reader = SqliteChatDbReader(config)
    reader.check_mapping()

    text, photo, feed = reader.logs_after(0)
    assert (text.room_key, text.text, text.client_log_id, text.sent_at) == ("9912", "@봇 단가?", "c-1", sent)
    assert (photo.kind, photo.attachment_name, photo.is_mine) == ("photo", "p.jpg", True)
    assert feed.kind is None
    assert reader.latest_log_id() == 7
    assert [room.room_name for room in reader.rooms()] == ["(1234) 대한물산"]


def test_a_mapping_missing_columns_is_a_config_error(client_db):
    """check_mapping names what the query does not return."""
    config = ClientDbConfig(
        path=client_db,
        logs_sql="SELECT id AS log_id FROM chat_logs WHERE id > :after_id AND id <= :upto_id LIMIT :limit",
    )
    with pytest.raises(ConfigError, match="room_key"):
        SqliteChatDbReader(config).check_mapping()


def test_a_missing_client_db_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        SqliteChatDbReader(ClientDbConfig(path=tmp_path / "nope.db"))


def test_the_reader_never_writes(client_db, client_db_config):
    """The client DB is opened read-only: a mapping that tries to write fails instead of touching it."""
    config = ClientDbConfig(path=client_db, latest_id_sql="DELETE FROM chat_logs RETURNING 0")
    with pytest.raises(ClientDbError, match="readonly"):
        SqliteChatDbReader(config).latest_log_id()


def test_naive_timestamps_get_the_configured_offset(client_db):
    simulator.append_message(
        client_db, room_key=ROOM_KEY, sender="김대리", text="x", created_at=datetime(2026, 11, 30, 10, 0, tzinfo=KST)
    )
    with sqlite3.connect(client_db) as connection:
        connection.execute("UPDATE chat_logs SET created_at = '2026-11-30 10:00:00'")
    connection.close()
    (log,) = SqliteChatDbReader(ClientDbConfig(path=client_db, utc_offset="+09:00")).logs_after(0)
    assert log.sent_at == datetime(2026, 11, 30, 10, 0, tzinfo=KST)
