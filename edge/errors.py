"""Exit codes of the edge programs and the errors that map onto them."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    INTERNAL_ERROR = 1  # a bug: the traceback is logged
    CONFIG_ERROR = 2  # bad or missing configuration, bad command line
    AUTH_REFUSED = 3  # token refused (401/403) or pairing code refused: pair again
    UNAVAILABLE = 4  # server or network unavailable, 5xx or 429: nothing was lost, run again later
    PARTIAL = 5  # finished, but something was set aside: dead-lettered batches, a job not confirmed sent
    LOCAL_STATE_ERROR = 6  # the state dir or the client DB could not be read or written
    UNEXPECTED_RESPONSE = 7  # the server answered outside the contract (wrong URL, version mismatch)
    ALREADY_RUNNING = 8  # another run of the same program holds the lock on the state dir


class EdgeError(Exception):
    exit_code = ExitCode.INTERNAL_ERROR


class ConfigError(EdgeError):
    exit_code = ExitCode.CONFIG_ERROR


class AuthRefused(EdgeError):
    exit_code = ExitCode.AUTH_REFUSED


class ServerUnavailable(EdgeError):
    """5xx, 429, timeouts and connection errors: transient, the same request may be repeated later."""

    exit_code = ExitCode.UNAVAILABLE

    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class UnexpectedResponse(EdgeError):
    exit_code = ExitCode.UNEXPECTED_RESPONSE

    def __init__(self, message: str, *, status: int | None = None, body: dict | None = None):
        super().__init__(message)
        self.status = status
        self.body = body or {}


class LocalStateError(EdgeError):
    exit_code = ExitCode.LOCAL_STATE_ERROR


class ClientDbError(LocalStateError):
    """The KakaoTalk client DB could not be read (missing, locked past the timeout, mapping SQL failed)."""


class AlreadyRunning(EdgeError):
    exit_code = ExitCode.ALREADY_RUNNING


class LeaseLost(EdgeError):
    """The server says this device no longer holds the job's lease (409 LEASE_NOT_HELD)."""

    exit_code = ExitCode.PARTIAL


class BatchRejected(EdgeError):
    """413 or 422 for an upload batch: sending it again cannot succeed, so it is set aside."""

    exit_code = ExitCode.PARTIAL

    def __init__(self, message: str, *, status: int, body: dict):
        super().__init__(message)
        self.status = status
        self.body = body
