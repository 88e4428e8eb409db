"""The sender against the fake server and the simulated client (the real fake send command, run as a process).

The clock is the simulator's: simulated time kept in the client DB, shared with the fake send commands. Waits cost
nothing, a slow send tool advances the clock by the time it takes, and delayed deliveries are written when the
clock passes their due time.
"""

import json
from dataclasses import replace

import pytest

from edge import simulator
from edge.api import EdgeApi
from edge.client_db import SqliteChatDbReader
from edge.config import ClientDbConfig
from edge.errors import ExitCode
from edge.message_sender import CommandMessageSender
from edge.sender import SEND_LOG_FILE, JobOutcome, SendJobRunner
from edge.tests.conftest import OTHER_ROOM_KEY, ROOM_KEY, ROOM_NAME
from edge.tests.helpers import (
    ANSWER_LOST,
    CrashingSender,
    FakeJob,
    KilledDuringSend,
    SimulatedCrash,
    simulator_command,
)

TEXT = "안녕하세요. 이번 달 단가는 30,000원입니다."


@pytest.fixture
def faults_file(tmp_path):
    path = tmp_path / "faults.json"

    def write(**faults):
        path.write_text(json.dumps({"delayed_delivery": "on_poll", **faults}), encoding="utf-8")
        return path

    write()
    return write


@pytest.fixture
def sim_clock(client_db):
    """Simulated time in the client DB; each sleep delivers the simulator's delayed messages due by then."""
    return simulator.SimulatedClock(client_db)


@pytest.fixture
def make_runner(fake_server, client_db, state_dir, send_config, sim_clock, tmp_path, subprocess_env, faults_file):
    def make(*, sender=None, clock=None, config=None, by_name=False):
        faults = tmp_path / "faults.json"
        command_sender = CommandMessageSender(
            text_command=simulator_command(client_db, "--text-file", "{file}", faults),
            photo_command=simulator_command(client_db, "--photo", "{path}", faults),
            file_command=simulator_command(client_db, "--file", "{path}", faults),
            timeout_seconds=30,
            env=subprocess_env,
        )
        return SendJobRunner(
            api=EdgeApi(server_url=fake_server.url, token="send-token"),
            reader=SqliteChatDbReader(ClientDbConfig(path=client_db, match_attachments_by_name=by_name)),
            sender=sender or command_sender,
            state_dir=state_dir,
            config=config or send_config,
            clock=clock or sim_clock,
            match_attachments_by_name=by_name,
        )

    return make


def _job(job_id=1, *items):
    return FakeJob(id=job_id, room_key=ROOM_KEY, room_name=ROOM_NAME, items=list(items))


def _text(index, text=TEXT):
    return {"index": index, "kind": "text", "text": text}


def _photo(index, name="price.jpg"):
    return {"index": index, "kind": "photo", "name": name}


def _my_logs(client_db, kind):
    with simulator.connect(client_db) as connection:
        return connection.execute(
            "SELECT message FROM chat_logs l JOIN chat_rooms r ON r.id = l.chat_id"
            " WHERE r.chat_key = ? AND l.is_mine = 1 AND l.type = ? ORDER BY l.id",
            (ROOM_KEY, kind),
        ).fetchall()


def _send_count(client_db, kind):
    with simulator.connect(client_db) as connection:
        row = connection.execute("SELECT value FROM sim_counters WHERE name = ?", (kind,)).fetchone()
    return row[0] if row else 0


def test_a_delivered_job_is_reported_sent_with_observed_counts(fake_server, client_db, make_runner):
    """Text and photo arrive at once: reported sent with what was counted, nothing resent, progress reported."""
    fake_server.add_job(_job(1, _text(0), _photo(1)))
    result = make_runner().run_once()

    assert result.outcomes == {1: JobOutcome.SENT}
    assert result.exit_code == ExitCode.OK
    report = fake_server.results[1]
    assert report["outcome"] == "sent"
    assert report["observed"] == {"texts": 1, "photos": 1, "files": 0}
    assert report["resent"] == {"texts": 0, "photos": 0, "files": 0}
    assert [state for _, state in fake_server.progress] == ["sending"]
    assert [row["message"] for row in _my_logs(client_db, "text")] == [TEXT]
    assert [row["message"] for row in _my_logs(client_db, "photo")] == ["price.jpg"]


def test_the_device_reports_the_rooms_of_its_client_db(fake_server, make_runner):
    """The heartbeat before claiming lists the rooms the client DB holds (which rooms this sender serves)."""
    make_runner().run_once()
    assert fake_server.device_heartbeats[0]["rooms"] == [
        {"room_key": ROOM_KEY, "room_name": ROOM_NAME},
        {"room_key": OTHER_ROOM_KEY, "room_name": "(2002) 가온상사"},
    ]


def test_a_dropped_text_is_resent_once(fake_server, client_db, make_runner, faults_file, sim_clock):
    """The tool says it sent, the text never shows up: after the text wait it is resent once, then counted."""
    faults_file(drop={"text": [1]})
    fake_server.add_job(_job(1, _text(0)))
    start = sim_clock.now()
    make_runner().run_once()

    report = fake_server.results[1]
    assert report["outcome"] == "sent"
    assert report["resent"] == {"texts": 1, "photos": 0, "files": 0}
    assert report["observed"]["texts"] == 1
    assert _send_count(client_db, "text") == 2
    assert len(_my_logs(client_db, "text")) == 1
    assert sim_clock.now() - start >= 10
    assert [state for _, state in fake_server.progress] == ["sending", "verifying"]


def test_a_late_photo_within_the_grace_is_not_resent(fake_server, client_db, make_runner, faults_file, sim_clock):
    """A photo that shows up 40 s late (inside 10 s + 60 s) is counted; it is never sent a second time."""
    faults_file(delay={"photo": {"1": 40}})
    fake_server.add_job(_job(1, _text(0), _photo(1)))
    start = sim_clock.now()
    make_runner().run_once()

    report = fake_server.results[1]
    assert report["outcome"] == "sent"
    assert report["resent"] == {"texts": 0, "photos": 0, "files": 0}
    assert report["observed"] == {"texts": 1, "photos": 1, "files": 0}
    assert _send_count(client_db, "photo") == 1
    assert len(_my_logs(client_db, "photo")) == 1
    assert 40 <= sim_clock.now() - start < 70


def test_a_photo_missing_after_the_grace_is_resent_once(
    fake_server, client_db, make_runner, faults_file, sim_clock, state_dir
):
    """No photo after 10 s + 60 s: resent once, and only then; the job ends sent with one photo in the room."""
    faults_file(drop={"photo": [1]})
    fake_server.add_job(_job(1, _photo(0)))
    start = sim_clock.now()
    make_runner().run_once()

    report = fake_server.results[1]
    assert report["outcome"] == "sent"
    assert report["resent"] == {"texts": 0, "photos": 1, "files": 0}
    assert _send_count(client_db, "photo") == 2
    assert len(_my_logs(client_db, "photo")) == 1
    assert sim_clock.now() - start >= 70
    (record,) = [json.loads(line) for line in (state_dir / SEND_LOG_FILE).open(encoding="utf-8")]
    first_send, resend = record["sends"]["0"]
    assert resend - first_send >= 70


def test_a_photo_later_than_the_grace_is_resent_once_and_never_again(
    fake_server, client_db, make_runner, faults_file, sim_clock
):
    """The original arriving after the resend makes two photos; the sender never adds a third and says so."""
    faults_file(delay={"photo": {"1": 100}})
    fake_server.add_job(_job(1, _photo(0)))
    make_runner().run_once()
    sim_clock.advance(60)  # the late original lands after the job was reported

    report = fake_server.results[1]
    assert report["outcome"] == "sent"
    assert report["resent"]["photos"] == 1
    assert _send_count(client_db, "photo") == 2
    assert len(_my_logs(client_db, "photo")) == 2


def test_a_duplicate_already_present_is_never_added_to(fake_server, client_db, make_runner, faults_file):
    """The client shows the text twice: the count is satisfied, nothing is resent, the duplicate is reported."""
    faults_file(duplicate={"text": [1]})
    fake_server.add_job(_job(1, _text(0), _photo(1)))
    make_runner().run_once()

    report = fake_server.results[1]
    assert report["outcome"] == "sent"
    assert report["observed"] == {"texts": 2, "photos": 1, "files": 0}
    assert report["resent"] == {"texts": 0, "photos": 0, "files": 0}
    assert "text +1" in report["reason"]
    assert _send_count(client_db, "text") == 1


def test_texts_are_matched_by_content_not_just_counted(fake_server, client_db, make_runner, faults_file):
    """Of two different texts the dropped one is resent; the one that arrived is not."""
    faults_file(drop={"text": [2]})
    fake_server.add_job(_job(1, _text(0, "첫 번째 안내"), _text(1, "두 번째 안내")))
    make_runner().run_once()

    assert fake_server.results[1]["resent"]["texts"] == 1
    assert [row["message"] for row in _my_logs(client_db, "text")] == ["첫 번째 안내", "두 번째 안내"]


def test_messages_of_others_and_other_rooms_do_not_count(fake_server, client_db, make_runner, faults_file):
    """The same text from the vendor, or mine in another room, is not proof of delivery."""
    faults_file(drop={"text": [1]})
    fake_server.add_job(_job(1, _text(0, "네 확인했습니다")))
    runner = make_runner()

    class _NoiseThenSend:
        """The room fills with look-alikes right as the first send is made."""

        def __init__(self, inner):
            self.inner = inner

        def send_text(self, **kwargs):
            simulator.append_message(client_db, room_key=ROOM_KEY, sender="김대리", text="네 확인했습니다")
            simulator.append_message(
                client_db, room_key=OTHER_ROOM_KEY, sender="나", text="네 확인했습니다", is_mine=True
            )
            return self.inner.send_text(**kwargs)

    runner.sender = _NoiseThenSend(runner.sender)
    runner.run_once()

    assert fake_server.results[1]["resent"]["texts"] == 1
    assert len(_my_logs(client_db, "text")) == 1


def test_a_failing_send_command_with_nothing_arriving_is_reported_failed(
    fake_server, client_db, make_runner, faults_file
):
    """The tool fails on the send and on the one resend, nothing shows up: failed, with the tool's error."""
    faults_file(fail={"text": [1, 2]})
    fake_server.add_job(_job(1, _text(0)))
    result = make_runner().run_once()

    report = fake_server.results[1]
    assert report["outcome"] == "failed"
    assert "simulated failure" in report["reason"]
    assert report["observed"] == {"texts": 0, "photos": 0, "files": 0}
    assert result.exit_code == ExitCode.PARTIAL
    assert _send_count(client_db, "text") == 2


def test_a_tool_that_says_sent_while_nothing_arrives_is_unknown(fake_server, client_db, make_runner, faults_file):
    """Success from the tool but no row in the client DB after the resend: unknown, never sent or failed."""
    faults_file(drop={"text": [1, 2]})
    fake_server.add_job(_job(1, _text(0)))
    make_runner().run_once()

    report = fake_server.results[1]
    assert report["outcome"] == "unknown"
    assert "text #0" in report["reason"]
    assert _send_count(client_db, "text") == 2


def test_when_a_count_cannot_tell_which_photo_is_missing_none_is_resent(
    fake_server, client_db, make_runner, faults_file
):
    """Two photos sent, one counted, names not recorded: resending either could duplicate one, so none is."""
    faults_file(drop={"photo": [2]})
    fake_server.add_job(_job(1, _photo(0, "a.jpg"), _photo(1, "b.jpg")))
    make_runner().run_once()

    report = fake_server.results[1]
    assert report["outcome"] == "unknown"
    assert report["observed"]["photos"] == 1
    assert report["resent"]["photos"] == 0
    assert "count cannot tell which" in report["reason"]
    assert _send_count(client_db, "photo") == 2


def test_with_names_recorded_only_the_missing_photo_is_resent(fake_server, client_db, make_runner, faults_file):
    """Where the client DB records file names, the missing photo is known and resent once."""
    faults_file(drop={"photo": [2]})
    fake_server.add_job(_job(1, _photo(0, "a.jpg"), _photo(1, "b.jpg")))
    make_runner(by_name=True).run_once()

    report = fake_server.results[1]
    assert report["outcome"] == "sent"
    assert report["resent"]["photos"] == 1
    assert [row["message"] for row in _my_logs(client_db, "photo")] == ["a.jpg", "b.jpg"]


def test_a_crash_between_send_and_report_is_verified_by_counting_not_resent(
    fake_server, client_db, make_runner, state_dir
):
    """The process dies right after the photo command; on restart the room is counted, nothing is sent again."""
    fake_server.add_job(_job(1, _text(0), _photo(1)))
    first = make_runner()
    first.sender = CrashingSender(first.sender, crash_after=2)
    with pytest.raises(SimulatedCrash):
        first.run_once()
    assert 1 not in fake_server.results
    assert list((state_dir / "jobs").glob("job-1-*.json"))

    result = make_runner().run_once()

    assert result.outcomes == {1: JobOutcome.SENT}
    assert fake_server.results[1]["resent"] == {"texts": 0, "photos": 0, "files": 0}
    assert (_send_count(client_db, "text"), _send_count(client_db, "photo")) == (1, 1)
    assert not list((state_dir / "jobs").glob("job-*.json"))


def test_a_crash_after_persisting_an_attempt_waits_and_counts_before_sending(
    fake_server, client_db, make_runner, sim_clock
):
    """Killed before the command ran: the restart does not send at once; only after the wait shows nothing."""
    fake_server.add_job(_job(1, _text(0)))
    first = make_runner()
    first.sender = CrashingSender(first.sender, crash_before=1)
    with pytest.raises(SimulatedCrash):
        first.run_once()
    crashed_at = sim_clock.now()
    assert _send_count(client_db, "text") == 0

    make_runner().run_once()

    assert fake_server.results[1]["outcome"] == "sent"
    assert fake_server.results[1]["resent"]["texts"] == 1  # the persisted attempt counts as the first send
    assert _send_count(client_db, "text") == 1
    assert len(_my_logs(client_db, "text")) == 1
    assert sim_clock.now() - crashed_at >= 10


def test_a_crash_with_a_late_photo_on_the_way_waits_out_the_grace_instead_of_resending(
    fake_server, client_db, make_runner, faults_file, sim_clock
):
    """Restarted while the photo is still in flight: the remaining grace is waited, the photo arrives, no resend."""
    faults_file(delay={"photo": {"1": 50}})
    fake_server.add_job(_job(1, _photo(0)))
    first = make_runner()
    first.sender = CrashingSender(first.sender, crash_after=1)
    with pytest.raises(SimulatedCrash):
        first.run_once()

    make_runner().run_once()

    assert fake_server.results[1]["outcome"] == "sent"
    assert fake_server.results[1]["resent"]["photos"] == 0
    assert _send_count(client_db, "photo") == 1


def test_a_slow_send_tool_is_waited_for_from_when_it_exits_not_when_it_started(
    fake_server, client_db, make_runner, faults_file, sim_clock, state_dir
):
    """The tool takes 11 s (past the 10 s text wait) and its text lands 1.5 s after it exits: the wait starts at
    the exit, the text is counted, nothing is resent and the room shows one copy."""
    faults_file(slow={"text": {"1": 11}}, delay={"text": {"1": 1.5}})
    fake_server.add_job(_job(1, _text(0)))
    start = sim_clock.now()
    make_runner().run_once()

    report = fake_server.results[1]
    assert report["outcome"] == "sent"
    assert report["resent"] == {"texts": 0, "photos": 0, "files": 0}
    assert _send_count(client_db, "text") == 1
    assert len(_my_logs(client_db, "text")) == 1
    assert 12.5 <= sim_clock.now() - start < 21
    (record,) = [json.loads(line) for line in (state_dir / SEND_LOG_FILE).open(encoding="utf-8")]
    assert record["sends"]["0"] == [start]


def test_a_sender_killed_during_a_slow_send_waits_out_the_command_before_resending(
    fake_server, client_db, make_runner, faults_file, sim_clock, tmp_path, send_config
):
    """Killed 5 s into a 12 s send and restarted 6 s later (past the text wait): the recorded start without an
    end means the command may still run, so the restart waits command timeout + text wait; the tool's own text
    lands at 12 s and is counted; one copy in the room."""
    faults_file(slow={"text": {"1": 12}})
    fake_server.add_job(_job(1, _text(0)))
    start = sim_clock.now()
    first = make_runner()
    first.sender = KilledDuringSend(
        first.sender, db_path=client_db, faults_path=tmp_path / "faults.json", clock=sim_clock, after_seconds=5
    )
    with pytest.raises(SimulatedCrash):
        first.run_once()
    sim_clock.advance(6)
    assert len(_my_logs(client_db, "text")) == 0

    result = make_runner().run_once()

    assert result.outcomes == {1: JobOutcome.SENT}
    assert fake_server.results[1]["resent"] == {"texts": 0, "photos": 0, "files": 0}
    assert _send_count(client_db, "text") == 1
    assert len(_my_logs(client_db, "text")) == 1
    assert 12 <= sim_clock.now() - start < send_config.command_timeout_seconds + send_config.text_wait_seconds


def test_a_command_that_never_ended_counts_as_missing_only_after_timeout_and_wait(
    fake_server, client_db, make_runner, faults_file, sim_clock, tmp_path, send_config, state_dir
):
    """Killed during a send whose text never lands: after the restart the text is resent once, but only when
    command timeout + text wait have passed since the recorded start."""
    faults_file(drop={"text": [1]})
    fake_server.add_job(_job(1, _text(0)))
    start = sim_clock.now()
    first = make_runner()
    first.sender = KilledDuringSend(
        first.sender, db_path=client_db, faults_path=tmp_path / "faults.json", clock=sim_clock, after_seconds=1
    )
    with pytest.raises(SimulatedCrash):
        first.run_once()

    make_runner().run_once()

    assert fake_server.results[1]["outcome"] == "sent"
    assert fake_server.results[1]["resent"]["texts"] == 1
    assert _send_count(client_db, "text") == 2
    assert len(_my_logs(client_db, "text")) == 1
    (record,) = [json.loads(line) for line in (state_dir / SEND_LOG_FILE).open(encoding="utf-8")]
    first_send, resend = record["sends"]["0"]
    assert first_send == start
    assert resend - start >= send_config.command_timeout_seconds + send_config.text_wait_seconds


def test_a_job_whose_lease_was_lost_during_the_crash_is_not_touched(
    fake_server, client_db, make_runner, faults_file, state_dir
):
    """The server moved the job to unknown while the sender was down: nothing is sent or reported."""
    faults_file(drop={"text": [1]})
    fake_server.add_job(_job(1, _text(0)))
    first = make_runner()
    first.sender = CrashingSender(first.sender, crash_after=1)
    with pytest.raises(SimulatedCrash):
        first.run_once()
    fake_server.take_lease_away(1)

    result = make_runner().run_once()

    assert result.outcomes == {1: JobOutcome.LEASE_LOST}
    assert result.exit_code == ExitCode.PARTIAL
    assert 1 not in fake_server.results
    assert _send_count(client_db, "text") == 1
    (record,) = [json.loads(line) for line in (state_dir / SEND_LOG_FILE).open(encoding="utf-8")]
    assert record["outcome"] == "lease_lost"
    assert not list((state_dir / "jobs").glob("job-*.json"))


def test_a_job_given_to_another_device_during_the_crash_is_not_touched(
    fake_server, client_db, make_runner, faults_file, state_dir
):
    """Staff re-queued the job and another sender claimed it: the server answers it as not found; the restart
    closes it locally as a lost lease and sends nothing."""
    faults_file(drop={"text": [1]})
    fake_server.add_job(_job(1, _text(0)))
    first = make_runner()
    first.sender = CrashingSender(first.sender, crash_after=1)
    with pytest.raises(SimulatedCrash):
        first.run_once()
    fake_server.give_to_another_device(1)

    result = make_runner().run_once()

    assert result.outcomes == {1: JobOutcome.LEASE_LOST}
    assert 1 not in fake_server.results
    assert _send_count(client_db, "text") == 1
    assert not list((state_dir / "jobs").glob("job-*.json"))


def test_a_lease_lost_while_waiting_stops_the_resend(fake_server, client_db, make_runner, faults_file, sim_clock):
    """The resend needs a confirmed lease; the server says it is gone, so the dropped text is not resent."""
    faults_file(drop={"text": [1]})
    fake_server.add_job(_job(1, _text(0)))
    sim_clock.on_sleep = lambda now: fake_server.take_lease_away(1)

    result = make_runner().run_once()

    assert result.outcomes == {1: JobOutcome.LEASE_LOST}
    assert _send_count(client_db, "text") == 1
    assert 1 not in fake_server.results


def test_the_lease_is_extended_while_waiting_for_a_photo(fake_server, make_runner, faults_file):
    """A 50 s wait with a 15 s heartbeat interval extends the lease several times."""
    faults_file(delay={"photo": {"1": 50}})
    fake_server.add_job(_job(1, _photo(0)))
    make_runner().run_once()
    assert fake_server.job_heartbeats.count(1) >= 4  # 1 before the send + at least 3 while waiting


def test_a_report_lost_to_a_server_error_is_sent_on_the_next_run_without_resending(fake_server, client_db, make_runner):
    """The result call gets a 503: the local state stays; the next run counts again and reports, sends nothing."""
    fake_server.add_job(_job(1, _text(0)))
    fake_server.fail_next("/api/v1/sender/jobs/1/result", 503)

    first = make_runner().run_once()
    assert first.exit_code == ExitCode.UNAVAILABLE
    assert 1 not in fake_server.results

    second = make_runner().run_once()
    assert second.outcomes == {1: JobOutcome.SENT}
    assert fake_server.results[1]["resent"]["texts"] == 0
    assert _send_count(client_db, "text") == 1


def test_a_report_whose_answer_was_lost_is_repeated_and_accepted(fake_server, client_db, make_runner, state_dir):
    """The server recorded the result but the answer never came: the next run repeats the same report (the
    server accepts the repeat after the lease ended) instead of calling it a lost lease; nothing is resent."""
    fake_server.add_job(_job(1, _text(0)))
    fake_server.fail_next("/api/v1/sender/jobs/1/result", ANSWER_LOST)

    first = make_runner().run_once()
    assert first.exit_code == ExitCode.UNAVAILABLE
    assert fake_server.results[1]["outcome"] == "sent"

    second = make_runner().run_once()
    assert second.outcomes == {1: JobOutcome.SENT}
    assert _send_count(client_db, "text") == 1
    (record,) = [json.loads(line) for line in (state_dir / SEND_LOG_FILE).open(encoding="utf-8")]
    assert record["outcome"] == "sent"


def test_content_that_does_not_match_its_sha256_fails_the_job_before_anything_is_sent(
    fake_server, client_db, make_runner
):
    """A corrupted download is never sent; the job is reported failed (safe to queue again)."""
    job = fake_server.add_job(_job(1, _text(0), _photo(1)))
    job.items[1]["sha256"] = "0" * 64
    make_runner().run_once()

    assert fake_server.results[1]["outcome"] == "failed"
    assert "content" in fake_server.results[1]["reason"]
    assert (_send_count(client_db, "text"), _send_count(client_db, "photo")) == (0, 0)


def test_each_queued_job_is_delivered_in_one_run(fake_server, client_db, make_runner, send_config):
    """`send --once` drains the queue up to max_jobs_per_run."""
    for job_id in (1, 2, 3):
        fake_server.add_job(_job(job_id, _text(0, f"안내 {job_id}")))
    result = make_runner(config=replace(send_config, max_jobs_per_run=2)).run_once()
    assert result.outcomes == {1: JobOutcome.SENT, 2: JobOutcome.SENT}
    assert fake_server.jobs[3].state == "queued"
