"""`python -m edge pair|upload|send|rotate-token|replay-dead-letters`: the command line of the edge programs.

Exit codes: edge.errors.ExitCode."""

import argparse
import logging
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from edge import __version__
from edge.api import EdgeApi, HttpTimeouts
from edge.client_db import SqliteChatDbReader
from edge.clock import Clock, SystemClock
from edge.config import EdgeConfig, load_config, require
from edge.errors import ClientDbError, ConfigError, EdgeError, ExitCode
from edge.message_sender import CommandMessageSender
from edge.replay import dead_letters_replay
from edge.sender import JOBS_DIR, SendJobRunner
from edge.statefiles import RunLock, atomic_write_json, ensure_private_dir, read_json, remove_stale_temp_files
from edge.token_rotation import TokenRotator
from edge.uploader import CHECKPOINT_FILE, Uploader, device_label

logger = logging.getLogger("edge")

DEVICE_FILE = "device.json"
# In --loop mode these end the loop: running again cannot fix them without a person.
_FATAL_IN_LOOP = {
    ExitCode.INTERNAL_ERROR,
    ExitCode.CONFIG_ERROR,
    ExitCode.AUTH_REFUSED,
    ExitCode.LOCAL_STATE_ERROR,
    ExitCode.UNEXPECTED_RESPONSE,
}


@dataclass(frozen=True)
class DeviceCredentials:
    token: str
    server_url: str
    device_id: int | None = None
    role: str = ""
    client_name: str = ""


def main(argv: list[str] | None = None, *, clock: Clock | None = None, environ=None) -> int:
    args = _parser().parse_args(argv)
    _configure_logging(args.verbose, args.quiet)
    clock = clock or SystemClock()
    try:
        config = load_config(args.config, environ=environ)
        if args.command == "pair":
            return _pair(config, code=args.code, name=args.name, force=args.force)
        if args.command == "rotate-token":
            return _rotate_token(config, clock=clock)
        if args.command == "replay-dead-letters":
            return _replay_dead_letters(config)
        return _run_program(args.command, config, loop_seconds=args.loop, clock=clock)
    except EdgeError as exc:
        logger.error("%s", exc)
        return exc.exit_code
    except KeyboardInterrupt:
        logger.warning("interrupted")
        return 130
    except Exception:
        logger.exception("internal error")
        return ExitCode.INTERNAL_ERROR


class _KoreanHelpFormatter(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, prefix="사용법: " if prefix is None else prefix)


def _korean_parser(add_parser: Callable[..., argparse.ArgumentParser], *args, **kwargs) -> argparse.ArgumentParser:
    """A parser whose help reads in Korean for the staff who run these programs: headings and `-h` included."""
    parser = add_parser(*args, formatter_class=_KoreanHelpFormatter, add_help=False, **kwargs)
    # argparse has no public way to retitle its default groups.
    parser._positionals.title = "위치 인자"
    parser._optionals.title = "옵션"
    parser.add_argument("-h", "--help", action="help", help="이 도움말을 보여 주고 끝냅니다")
    return parser


def _parser() -> argparse.ArgumentParser:
    parser = _korean_parser(
        argparse.ArgumentParser,
        prog="python -m edge",
        description="Vendor CS Agent 엣지 프로그램: 이 PC를 서버와 페어링하고, 대화를 업로드하고, 답변을 발송합니다.",
        epilog="종료 코드: 0 정상, 2 설정 오류, 3 인증 거부, 4 서버 연결 불가(나중에 다시 시도), 5 일부만 처리"
        "(데드 레터, 서버가 거부한 메시지, 발송 확인이 안 된 작업), 6 로컬 상태·클라이언트 DB 오류, "
        "7 예상하지 못한 서버 응답, 8 이미 실행 중.",
    )
    parser.add_argument(
        "--version", action="version", version=f"vcs-edge {__version__}", help="버전을 보여 주고 끝냅니다"
    )
    parser.add_argument("--config", help="설정 파일(.toml, .json, .ini). 기본값: ~/.vcs-edge/config.toml")
    parser.add_argument("-v", "--verbose", action="store_true", help="디버그 로그까지 출력합니다")
    parser.add_argument("-q", "--quiet", action="store_true", help="경고와 오류만 출력합니다")
    commands = parser.add_subparsers(dest="command", required=True, title="명령", metavar="<명령>")

    pair = _korean_parser(
        commands.add_parser,
        "pair",
        help="관리자 화면에서 받은 페어링 코드로 이 기기를 등록하고 토큰을 저장합니다",
        description="관리자 화면에서 받은 페어링 코드로 이 기기를 등록하고, 토큰을 상태 폴더의 device.json에 "
        "저장합니다.",
    )
    pair.add_argument("code", help="관리자 화면에 표시된 페어링 코드")
    pair.add_argument("--name", help="이 PC가 서버에 알릴 이름(기본값: 호스트 이름)")
    pair.add_argument("--force", action="store_true", help="이미 페어링된 기기의 페어링을 새로 바꿉니다")

    _korean_parser(
        commands.add_parser,
        "rotate-token",
        help="이 기기의 토큰을 지금 새 토큰으로 바꿉니다(서버가 요청하면 upload와 send도 스스로 바꿉니다)",
        description="이 기기의 토큰을 지금 새 토큰으로 바꿉니다. 서버가 교체를 요청하면 upload와 send도 스스로 "
        "바꾸므로 보통은 실행할 필요가 없습니다.",
    )

    for name, help_text in (
        ("upload", "카카오톡 PC 클라이언트의 새 대화 메시지를 서버로 업로드합니다"),
        ("send", "서버의 발송 작업을 받아 카카오톡으로 보내고 도착을 확인합니다"),
    ):
        program = _korean_parser(commands.add_parser, name, help=help_text, description=help_text + ".")
        mode = program.add_mutually_exclusive_group()
        mode.add_argument("--once", action="store_true", help="한 번 처리하고 끝냅니다(기본값)")
        mode.add_argument("--loop", type=float, metavar="SECONDS", help="멈출 때까지 SECONDS초마다 반복합니다")

    _korean_parser(
        commands.add_parser,
        "replay-dead-letters",
        help="dead-letters.jsonl에 보관된(서버가 거부한) 업로드 배치를 다시 보냅니다",
        description="업로더가 dead-letters.jsonl에 보관한 배치를 서버로 다시 보냅니다. 배치 ID가 같으므로 여러 번 "
        "실행해도 한 번만 저장됩니다. 너무 큰 배치는 upload.batch_size / upload.max_batch_bytes에 맞게 나눠 "
        "보냅니다. 파일은 그대로 둡니다. 종료 코드: 0 모두 저장, 5 아직 거부된 배치나 서버가 격리한 메시지가 "
        "있음, 4 서버 연결 불가(나중에 다시 실행), 3 토큰 거부.",
    )
    return parser


def _configure_logging(verbose: bool, quiet: bool) -> None:
    edge_logger = logging.getLogger("edge")
    edge_logger.setLevel(logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO)
    if not any(getattr(handler, "_vcs_edge", False) for handler in edge_logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S"))
        handler._vcs_edge = True
        edge_logger.addHandler(handler)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)


def _timeouts(config: EdgeConfig) -> HttpTimeouts:
    return HttpTimeouts(
        connect=config.connect_timeout_seconds,
        read=config.http_timeout_seconds,
        download=config.download_timeout_seconds,
    )


# --- pair ---


def _pair(config: EdgeConfig, *, code: str, name: str | None, force: bool) -> int:
    require(config, "server_url")
    state_dir = ensure_private_dir(config.state_dir)
    device_file = state_dir / DEVICE_FILE
    existing = read_json(device_file)
    if existing and not force:
        raise ConfigError(
            f"this machine is already paired (device {existing.get('device_id')}, {existing.get('role')}); "
            "use --force to replace the pairing"
        )
    client_name = (name or config.device_name or socket.gethostname())[:100]
    with EdgeApi(server_url=config.server_url, timeouts=_timeouts(config)) as api:
        result = api.pair(code=code.strip().upper(), name=client_name)
    atomic_write_json(
        device_file,
        {
            "device_id": result.device_id,
            "role": result.role,
            "name": result.name,
            "client_name": client_name,
            "server_url": config.server_url,
            "token": result.token,
            "paired_at": datetime.now(tz=UTC).isoformat(),
        },
    )
    logger.info(
        "paired as device %s (%s, %s); token stored in %s", result.device_id, result.role, result.name, device_file
    )
    return ExitCode.OK


def _rotate_token(config: EdgeConfig, *, clock: Clock) -> int:
    credentials = load_credentials(config)
    if config.token:
        raise ConfigError("the token comes from the configuration (token / VCS_EDGE_TOKEN): it cannot be rotated here")
    state_dir = ensure_private_dir(config.state_dir)
    with EdgeApi(server_url=credentials.server_url, token=credentials.token, timeouts=_timeouts(config)) as api:
        TokenRotator(api=api, device_file=state_dir / DEVICE_FILE, clock=clock).rotate()
    return ExitCode.OK


def load_credentials(config: EdgeConfig) -> DeviceCredentials:
    stored = read_json(config.state_dir / DEVICE_FILE) or {}
    token = config.token or stored.get("token", "")
    server_url = config.server_url or stored.get("server_url", "")
    if not token:
        raise ConfigError(f"not paired: run `python -m edge pair CODE` (no token in {config.state_dir / DEVICE_FILE})")
    if not server_url:
        raise ConfigError("server_url is not set (or VCS_EDGE_SERVER_URL)")
    return DeviceCredentials(
        token=token,
        server_url=server_url,
        device_id=stored.get("device_id"),
        role=stored.get("role", ""),
        client_name=stored.get("client_name", ""),
    )


# --- upload and send ---


def _run_program(command: str, config: EdgeConfig, *, loop_seconds: float | None, clock: Clock) -> int:
    credentials = load_credentials(config)
    if credentials.role and credentials.role != {"upload": "uploader", "send": "sender"}[command]:
        logger.warning("this device is paired as %s; the server will refuse %s", credentials.role, command)
    state_dir = ensure_private_dir(config.state_dir)
    reader = SqliteChatDbReader(config.client_db)
    reader.check_mapping()
    with (
        EdgeApi(server_url=credentials.server_url, token=credentials.token, timeouts=_timeouts(config)) as api,
        RunLock(state_dir / f"{command}.lock"),
    ):
        if command == "upload":
            remove_stale_temp_files(state_dir, of=CHECKPOINT_FILE)
            uploader = Uploader(
                api=api,
                reader=reader,
                state_dir=state_dir,
                label=device_label(config.device_name or credentials.client_name, credentials.device_id),
                config=config.upload,
                clock=clock,
            )
            run_once = _upload_pass(uploader)
        else:
            require(config, "send.text_command")
            remove_stale_temp_files(state_dir / JOBS_DIR, recursive=True)
            runner = SendJobRunner(
                api=api,
                reader=reader,
                sender=CommandMessageSender(
                    text_command=config.send.text_command,
                    photo_command=config.send.photo_command,
                    file_command=config.send.file_command,
                    timeout_seconds=config.send.command_timeout_seconds,
                ),
                state_dir=state_dir,
                config=config.send,
                clock=clock,
                match_attachments_by_name=config.client_db.match_attachments_by_name,
            )
            run_once = _send_pass(runner)
        if config.token:
            logger.debug("token from the configuration: not rotated by this program")
        else:
            run_once = _with_token_rotation(
                run_once, TokenRotator(api=api, device_file=state_dir / DEVICE_FILE, clock=clock)
            )
        if loop_seconds is None:
            return run_once()[0]
        return _loop(run_once, interval=loop_seconds, clock=clock)


def _replay_dead_letters(config: EdgeConfig) -> int:
    credentials = load_credentials(config)
    state_dir = ensure_private_dir(config.state_dir)
    # No run lock: an uploader running in --loop holds it for good, and replaying beside it is safe (the server
    # stores a batch id once; the uploader only appends whole lines to the file read here).
    with EdgeApi(server_url=credentials.server_url, token=credentials.token, timeouts=_timeouts(config)) as api:
        result = dead_letters_replay(api=api, state_dir=state_dir, config=config.upload)
    counts = result.server_counts
    logger.info(
        "replay-dead-letters: %d dead-lettered batches; %d posted (%d answered from an earlier replay), "
        "%d messages: stored %d, duplicates %d, resends dropped %d, refused by the server %d; "
        "%d batches refused again, %d damaged lines",
        result.records,
        result.batches_posted,
        result.batches_replayed,
        result.messages_sent,
        counts.get("stored", 0),
        counts.get("duplicates", 0),
        counts.get("dropped_resends", 0),
        counts.get("rejected", 0),
        result.batches_refused,
        result.damaged_lines,
    )
    return result.exit_code


def _with_token_rotation(
    run_once: Callable[[], tuple[int, float | None]], rotator: TokenRotator
) -> Callable[[], tuple[int, float | None]]:
    def run_with_rotation() -> tuple[int, float | None]:
        rotator.rotate_if_due()
        return run_once()

    return run_with_rotation


def _upload_pass(uploader: Uploader) -> Callable[[], tuple[int, float | None]]:
    def run_once() -> tuple[int, float | None]:
        result = uploader.run_once()
        logger.info(
            "upload: %d batches (%d messages) uploaded, %d messages refused by the server, %d batches "
            "dead-lettered, checkpoint at log %d",
            result.batches_uploaded,
            result.messages_uploaded,
            result.messages_rejected,
            result.batches_dead_lettered,
            result.last_log_id,
        )
        return result.exit_code, result.retry_after

    return run_once


def _send_pass(runner: SendJobRunner) -> Callable[[], tuple[int, float | None]]:
    def run_once() -> tuple[int, float | None]:
        result = runner.run_once()
        if result.outcomes:
            logger.info("send: %s", ", ".join(f"job {job} {outcome}" for job, outcome in result.outcomes.items()))
        return result.exit_code, None

    return run_once


def _loop(run_once: Callable[[], tuple[int, float | None]], *, interval: float, clock: Clock) -> int:
    while True:
        retry_after = None
        try:
            _, retry_after = run_once()
        except ClientDbError as exc:  # e.g. the client held its DB locked past the timeout: try again
            logger.warning("%s", exc)
        except EdgeError as exc:
            logger.error("%s", exc)
            if exc.exit_code in _FATAL_IN_LOOP:
                return exc.exit_code
            retry_after = getattr(exc, "retry_after", None)
        try:
            clock.sleep(max(interval, retry_after or 0.0))
        except KeyboardInterrupt:
            logger.info("stopped")
            return ExitCode.OK
