import json

import pytest

from edge import simulator
from edge.api import EdgeApi
from edge.client_db import SqliteChatDbReader
from edge.config import UploadConfig
from edge.errors import AuthRefused, ExitCode
from edge.tests.conftest import OTHER_ROOM_KEY, ROOM_KEY
from edge.tests.helpers import DROP_CONNECTION
from edge.uploader import DEAD_LETTER_FILE, UploadCheckpoint, Uploader, batch_id_for

UPLOADS = "/api/v1/uploads"


def _uploader(fake_server, client_db_config, state_dir, clock, config, token="upload-token"):
    api = EdgeApi(server_url=fake_server.url, token=token)
    return Uploader(
        api=api,
        reader=SqliteChatDbReader(client_db_config),
        state_dir=state_dir,
        label="cs-pc-03",
        config=config,
        clock=clock,
    )


def _add_texts(client_db, count, *, room_key=ROOM_KEY, prefix="메시지"):
    return [
        simulator.append_message(client_db, room_key=room_key, sender="김대리", text=f"{prefix} {n}", unread_count=3)
        for n in range(1, count + 1)
    ]


def test_uploads_everything_in_batches_with_deterministic_batch_ids(
    fake_server, client_db, client_db_config, state_dir, clock, upload_config
):
    """Seven messages with batch_size 3 go up as 3 + 3 + 1, each batch named by device and log id range."""
    ids = _add_texts(client_db, 7)
    result = _uploader(fake_server, client_db_config, state_dir, clock, upload_config).run_once()

    assert result.exit_code == ExitCode.OK
    assert [post["batch_id"] for post in fake_server.upload_posts] == [
        batch_id_for("cs-pc-03", ids[0], ids[2]),
        batch_id_for("cs-pc-03", ids[3], ids[5]),
        batch_id_for("cs-pc-03", ids[6], ids[6]),
    ]
    assert fake_server.upload_posts[0]["batch_id"] == f"cs-pc-03:{ids[0]:09d}-{ids[2]:09d}"
    assert sorted(fake_server.stored_texts()) == sorted(f"메시지 {n}" for n in range(1, 8))
    assert UploadCheckpoint(state_dir).load().last_log_id == ids[-1]


def test_messages_have_the_contract_shape(fake_server, client_db, client_db_config, state_dir, clock, upload_config):
    """Texts carry their text; photos and files go as attachment counts; mine is flagged; times have an offset."""
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="@봇 단가 얼마예요?", unread_count=3)
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="나", text="a.jpg", kind="photo", is_mine=True)
    simulator.append_message(client_db, room_key=OTHER_ROOM_KEY, sender="박과장", text="견적.pdf", kind="file")
    _uploader(fake_server, client_db_config, state_dir, clock, upload_config).run_once()

    text, photo, file = fake_server.upload_posts[0]["messages"]
    assert text["room_key"] == ROOM_KEY
    assert text["room_name"] == "(1234) 대한물산"
    assert text["sender_name"] == "김대리"
    assert text["sent_by_me"] is False
    assert text["text"] == "@봇 단가 얼마예요?"
    assert text["unread_count"] == 3
    assert text["sent_at"].endswith("+09:00")
    assert text["client_message_id"].startswith("sim-")
    assert text["attachments"] == {"photos": 0, "files": 0}
    assert photo["sent_by_me"] is True
    assert (photo["text"], photo["attachments"]) == ("", {"photos": 1, "files": 0})
    assert (file["room_key"], file["text"], file["attachments"]) == (OTHER_ROOM_KEY, "", {"photos": 0, "files": 1})


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_server_error_keeps_the_checkpoint_and_the_same_batch_arrives_next_run(
    status, fake_server, client_db, client_db_config, state_dir, clock, upload_config
):
    """On 5xx the run stops without moving; the next run posts the same batch_id with the same messages."""
    ids = _add_texts(client_db, 2)
    fake_server.fail_next(UPLOADS, status)
    uploader = _uploader(fake_server, client_db_config, state_dir, clock, upload_config)

    first = uploader.run_once()
    assert first.exit_code == ExitCode.UNAVAILABLE
    assert UploadCheckpoint(state_dir).load().last_log_id == 0
    assert fake_server.stored == {}

    second = uploader.run_once()
    assert second.exit_code == ExitCode.OK
    failed_call, retried_call = [body for method, path, body in fake_server.calls if path == UPLOADS]
    assert failed_call == retried_call
    assert retried_call["batch_id"] == batch_id_for("cs-pc-03", ids[0], ids[1])
    assert sorted(fake_server.stored_texts()) == ["메시지 1", "메시지 2"]
    assert UploadCheckpoint(state_dir).load().last_log_id == ids[1]


def test_a_network_error_keeps_the_checkpoint(
    fake_server, client_db, client_db_config, state_dir, clock, upload_config
):
    """A dropped connection is like a 5xx: nothing moves, the next run uploads the same messages."""
    ids = _add_texts(client_db, 1)
    fake_server.fail_next(UPLOADS, DROP_CONNECTION)
    uploader = _uploader(fake_server, client_db_config, state_dir, clock, upload_config)

    assert uploader.run_once().exit_code == ExitCode.UNAVAILABLE
    assert UploadCheckpoint(state_dir).load().last_log_id == 0
    assert uploader.run_once().exit_code == ExitCode.OK
    assert fake_server.stored_texts() == ["메시지 1"]
    assert UploadCheckpoint(state_dir).load().last_log_id == ids[0]


def test_an_unreachable_server_keeps_the_checkpoint(client_db, client_db_config, state_dir, clock, upload_config):
    """Connection refused (nothing listens on the port) stops the run with 'unavailable'."""
    _add_texts(client_db, 1)
    api = EdgeApi(server_url="http://127.0.0.1:9", token="upload-token")
    uploader = Uploader(
        api=api,
        reader=SqliteChatDbReader(client_db_config),
        state_dir=state_dir,
        label="cs-pc-03",
        config=upload_config,
        clock=clock,
    )
    assert uploader.run_once().exit_code == ExitCode.UNAVAILABLE
    assert UploadCheckpoint(state_dir).load().last_log_id == 0


def test_429_is_honoured_until_retry_after_has_passed(
    fake_server, client_db, client_db_config, state_dir, clock, upload_config
):
    """A 429 stops the run; runs before Retry-After do not post at all; the run after it uploads."""
    ids = _add_texts(client_db, 2)
    fake_server.fail_next(UPLOADS, 429, body={"error": "RATE_LIMITED"}, headers={"Retry-After": "30"})
    uploader = _uploader(fake_server, client_db_config, state_dir, clock, upload_config)

    first = uploader.run_once()
    assert (first.exit_code, first.retry_after) == (ExitCode.UNAVAILABLE, 30)
    posts_after_429 = len(fake_server.calls)

    clock.advance(10)
    early = uploader.run_once()
    assert early.exit_code == ExitCode.UNAVAILABLE
    assert early.retry_after == pytest.approx(20)
    assert len(fake_server.calls) == posts_after_429  # not even a heartbeat
    assert UploadCheckpoint(state_dir).load().last_log_id == 0

    clock.advance(21)
    assert uploader.run_once().exit_code == ExitCode.OK
    assert sorted(fake_server.stored_texts()) == ["메시지 1", "메시지 2"]
    assert UploadCheckpoint(state_dir).load().last_log_id == ids[1]


def test_a_retry_posts_exactly_the_failed_range_even_when_more_messages_arrived(
    fake_server, client_db, client_db_config, state_dir, clock
):
    """The range is fixed once posted: the retry carries the same batch_id and messages; new ones follow."""
    first_ids = _add_texts(client_db, 2, prefix="먼저")
    fake_server.fail_next(UPLOADS, 503)
    uploader = _uploader(fake_server, client_db_config, state_dir, clock, UploadConfig(batch_size=10))
    uploader.run_once()

    later_ids = _add_texts(client_db, 3, prefix="나중")
    uploader.run_once()

    batch_ids = [post["batch_id"] for post in fake_server.upload_posts]
    assert batch_ids == [
        batch_id_for("cs-pc-03", first_ids[0], first_ids[1]),
        batch_id_for("cs-pc-03", later_ids[0], later_ids[2]),
    ]
    assert [m["text"] for m in fake_server.upload_posts[0]["messages"]] == ["먼저 1", "먼저 2"]
    assert len(fake_server.stored) == 5


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (422, {"error": "INVALID_BATCH", "items": [{"index": 0, "field": "sent_at", "message": "bad"}]}),
        (413, {"error": "PAYLOAD_TOO_LARGE", "limit_messages": 2, "limit_bytes": 1000}),
    ],
)
def test_a_rejected_batch_is_dead_lettered_and_the_upload_moves_on(
    status, body, fake_server, client_db, client_db_config, state_dir, clock, upload_config
):
    """413/422 cannot succeed on retry: the batch goes to dead-letters.jsonl and the next batches still upload."""
    ids = _add_texts(client_db, 5)
    fake_server.fail_next(UPLOADS, status, body=body)
    result = _uploader(fake_server, client_db_config, state_dir, clock, upload_config).run_once()

    assert result.exit_code == ExitCode.PARTIAL
    assert (result.batches_dead_lettered, result.batches_uploaded) == (1, 1)
    assert UploadCheckpoint(state_dir).load().last_log_id == ids[-1]
    assert sorted(fake_server.stored_texts()) == ["메시지 4", "메시지 5"]
    (record,) = [json.loads(line) for line in (state_dir / DEAD_LETTER_FILE).read_text(encoding="utf-8").splitlines()]
    assert record["batch_id"] == batch_id_for("cs-pc-03", ids[0], ids[2])
    assert (record["status"], record["response"]) == (status, body)
    assert [message["text"] for message in record["messages"]] == ["메시지 1", "메시지 2", "메시지 3"]


def test_a_refused_token_stops_without_moving(
    fake_server, client_db, client_db_config, state_dir, clock, upload_config
):
    """401 is an auth error for the operator, and the checkpoint stays where it was."""
    _add_texts(client_db, 1)
    uploader = _uploader(fake_server, client_db_config, state_dir, clock, upload_config, token="revoked")
    with pytest.raises(AuthRefused):
        uploader.run_once()
    assert UploadCheckpoint(state_dir).load().last_log_id == 0


def test_types_that_are_not_uploaded_are_skipped_and_passed(
    fake_server, client_db, client_db_config, state_dir, clock, upload_config
):
    """A range holding only unmapped types (e.g. system notices) moves the checkpoint without a post."""
    notice = simulator.append_message(client_db, room_key=ROOM_KEY, sender="", text="입장했습니다", kind="feed")
    result = _uploader(fake_server, client_db_config, state_dir, clock, upload_config).run_once()
    assert result.exit_code == ExitCode.OK
    assert fake_server.upload_posts == []
    assert UploadCheckpoint(state_dir).load().last_log_id == notice


def test_a_new_range_stops_before_the_byte_limit(fake_server, client_db, client_db_config, state_dir, clock):
    """Big messages are split over several batches by max_batch_bytes, each under the limit."""
    for n in range(4):
        simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text=f"{n}" + "가" * 300)
    uploader = _uploader(
        fake_server, client_db_config, state_dir, clock, UploadConfig(batch_size=100, max_batch_bytes=2000)
    )
    assert uploader.run_once().exit_code == ExitCode.OK
    sizes = [len(post["messages"]) for post in fake_server.upload_posts]
    assert sum(sizes) == 4
    assert len(sizes) >= 2
    for post in fake_server.upload_posts:
        assert len(json.dumps(post["messages"], ensure_ascii=False).encode()) <= 2000


def test_a_resend_storm_is_uploaded_as_the_client_recorded_it(
    fake_server, client_db, client_db_config, state_dir, clock
):
    """The uploader does not judge resends (the server does): every storm row goes up once, same text and unread."""
    simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="확인 부탁드려요", unread_count=5)
    simulator.resend_storm(client_db, room_key=ROOM_KEY, count=5)
    _uploader(fake_server, client_db_config, state_dir, clock, UploadConfig(batch_size=50)).run_once()

    (post,) = fake_server.upload_posts
    assert {(m["text"], m["unread_count"]) for m in post["messages"]} == {("확인 부탁드려요", 5)}
    assert len({m["client_message_id"] for m in post["messages"]}) == 6


def test_messages_the_server_refused_one_by_one_are_logged_and_the_upload_moves_on(
    fake_server, client_db, client_db_config, state_dir, clock, upload_config, caplog
):
    """A 200 with rejections is a stored batch: the checkpoint moves, nothing is dead-lettered, the run says that
    something was set aside (in the server's quarantine) and names each refused message."""
    ids = _add_texts(client_db, 5)
    answer = {
        "batch_id": batch_id_for("cs-pc-03", ids[0], ids[2]),
        "received": 3,
        "stored": 2,
        "dropped_resends": 0,
        "duplicates": 0,
        "rejected": 1,
        "cleaned": 0,
        "questions": 0,
        "replayed": False,
        "rejections": [{"index": 1, "reason": "invalid", "errors": [{"field": "text", "message": "too long"}]}],
    }
    fake_server.fail_next(UPLOADS, 200, body=answer)
    with caplog.at_level("WARNING", logger="edge.uploader"):
        result = _uploader(fake_server, client_db_config, state_dir, clock, upload_config).run_once()

    assert result.exit_code == ExitCode.PARTIAL
    assert (result.batches_uploaded, result.messages_rejected, result.batches_dead_lettered) == (2, 1, 0)
    assert result.server_counts["rejected"] == 1
    assert UploadCheckpoint(state_dir).load().last_log_id == ids[-1]
    assert not (state_dir / DEAD_LETTER_FILE).exists()
    (warning,) = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert "message 1" in warning and "invalid" in warning and "text: too long" in warning
