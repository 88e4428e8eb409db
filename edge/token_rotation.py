"""Rotating this device's token, crash-safe (docs/edge-api.md, "The device's token").

The server keeps the current token working until the new one is first used. So the rotation asks for a new token,
stores it in device.json (atomically), then makes one call with it, which makes it the device's only token. Killed
before the store, the device still has its working token (the next check rotates again and the unused token is
replaced); killed after it, the new token is stored and its first use on the next run completes the switch.
"""

import logging
from datetime import UTC, datetime
from pathlib import Path

from edge.api import EdgeApi
from edge.clock import Clock
from edge.errors import AlreadyRunning, ServerUnavailable, UnexpectedResponse
from edge.statefiles import RunLock, atomic_write_json, read_json

logger = logging.getLogger("edge.token")

TOKEN_LOCK_FILE = "token.lock"
# How often a long-running loop asks whether a rotation is due (every run of a cron pass asks once).
CHECK_INTERVAL_SECONDS = 3600.0


class TokenRotator:
    def __init__(
        self, *, api: EdgeApi, device_file: Path, clock: Clock, check_interval: float = CHECK_INTERVAL_SECONDS
    ):
        self.api, self.device_file, self.clock, self.check_interval = api, device_file, clock, check_interval
        self._last_check: float | None = None

    def rotate_if_due(self) -> bool:
        """Ask the server (at most once per `check_interval`) and rotate when it says a rotation is due.

        Never stops the program: an unavailable server, a server without the token endpoints or another
        rotation in progress only skips the check (the pass itself reports an unavailable server). A refused
        token (`AuthRefused`) is raised: nothing else can work either.
        """
        now = self.clock.now()
        if self._last_check is not None and now - self._last_check < self.check_interval:
            return False
        try:
            status = self.api.token_status()
            self._last_check = now
            self._remember_expiry(status)
            if not status.get("rotation_due"):
                return False
            self.rotate()
        except (ServerUnavailable, UnexpectedResponse, AlreadyRunning) as exc:
            logger.warning("token rotation check skipped: %s", exc)
            return False
        return True

    def rotate(self) -> str | None:
        """Rotate now; returns the new token's expiry (ISO 8601) or None when it does not expire."""
        with RunLock(self.device_file.parent / TOKEN_LOCK_FILE):
            token = self.api.token_rotate()
            stored = read_json(self.device_file) or {}
            atomic_write_json(
                self.device_file, {**stored, "token": token, "token_rotated_at": datetime.now(tz=UTC).isoformat()}
            )
            self.api.use_token(token)
            status = self.api.token_status()  # the first use: from now on only the new token works
            self._remember_expiry(status)
        expires_at = status.get("expires_at")
        logger.info(
            "device token rotated; the new token %s", f"expires at {expires_at}" if expires_at else "does not expire"
        )
        return expires_at

    def _remember_expiry(self, status: dict) -> None:
        stored = read_json(self.device_file) or {}
        expires_at = status.get("expires_at")
        if stored and stored.get("token_expires_at") != expires_at:
            atomic_write_json(self.device_file, {**stored, "token_expires_at": expires_at})
