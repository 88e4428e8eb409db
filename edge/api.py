"""HTTP client of the edge device API (docs/edge-api.md). Every call has explicit timeouts.

Responses are sorted into the errors of `edge.errors`: 5xx, 429 and transport failures are `ServerUnavailable`
(repeat later), 401/403 `AuthRefused`, 409 LEASE_NOT_HELD and 404 SEND_JOB_NOT_FOUND on a job call `LeaseLost`,
upload 413/422 `BatchRejected`, and anything else outside the contract `UnexpectedResponse`.
"""

import email.utils
import hashlib
import logging
import time
from dataclasses import dataclass

import httpx

from edge import __version__
from edge.errors import AuthRefused, BatchRejected, LeaseLost, ServerUnavailable, UnexpectedResponse

logger = logging.getLogger("edge.api")

MAX_RETRY_AFTER_SECONDS = 3600.0


@dataclass(frozen=True)
class HttpTimeouts:
    connect: float = 5.0
    read: float = 15.0
    download: float = 60.0


@dataclass(frozen=True)
class PairingResult:
    device_id: int
    token: str
    role: str
    name: str


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or an HTTP date), capped at an hour."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = moment.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


class EdgeApi:
    def __init__(
        self,
        *,
        server_url: str,
        token: str = "",
        timeouts: HttpTimeouts | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        self.timeouts = timeouts or HttpTimeouts()
        headers = {"User-Agent": f"vcs-edge/{__version__}", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.Client(
            base_url=server_url.rstrip("/"),
            headers=headers,
            timeout=self._timeout(self.timeouts.read),
            transport=transport,
            follow_redirects=False,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "EdgeApi":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # --- devices ---

    def pair(self, *, code: str, name: str) -> PairingResult:
        response = self._request("POST", "/api/v1/devices/pair", json={"code": code, "name": name})
        if response.status_code == 201:
            body = self._json(response)
            try:
                return PairingResult(
                    device_id=int(body["device_id"]), token=str(body["token"]), role=body["role"], name=body["name"]
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise UnexpectedResponse(f"pairing answer misses fields: {body}", status=201) from exc
        if response.status_code == 400:
            raise AuthRefused("pairing code refused (unknown, expired, used or too many attempts): ask for a new one")
        raise self._unexpected(response)

    def device_heartbeat(self, *, rooms: list[dict] | None = None) -> dict:
        body = {} if rooms is None else {"rooms": rooms}
        response = self._request("POST", "/api/v1/devices/heartbeat", json=body)
        if response.status_code == 200:
            return self._json(response)
        raise self._unexpected(response)

    def token_status(self) -> dict:
        """`{"device_id", "role", "expires_at", "rotation_due"}` of the token this client sends."""
        response = self._request("GET", "/api/v1/devices/token")
        if response.status_code == 200:
            return self._json(response)
        raise self._unexpected(response)

    def token_rotate(self) -> str:
        """A new token for this device; the current one keeps working until the new one is first used."""
        response = self._request("POST", "/api/v1/devices/token/rotate", json={})
        if response.status_code == 200:
            token = self._json(response).get("token")
            if isinstance(token, str) and token:
                return token
            raise UnexpectedResponse("token rotation answer has no token", status=200)
        raise self._unexpected(response)

    def use_token(self, token: str) -> None:
        """Send `token` from the next request on."""
        self._client.headers["Authorization"] = f"Bearer {token}"

    # --- upload ---

    def upload(self, *, batch_id: str, messages: list[dict]) -> dict:
        response = self._request("POST", "/api/v1/uploads", json={"batch_id": batch_id, "messages": messages})
        if response.status_code in (200, 201):
            return self._json(response)
        if response.status_code in (413, 422):
            body = self._json(response, strict=False)
            raise BatchRejected(
                f"batch {batch_id} rejected with {response.status_code}: {body.get('error', '')}",
                status=response.status_code,
                body=body,
            )
        raise self._unexpected(response)

    # --- sending ---

    def claim(self) -> dict | None:
        response = self._request("POST", "/api/v1/sender/claim", json={})
        if response.status_code == 204:
            return None
        if response.status_code == 200:
            job = self._json(response).get("job")
            if not isinstance(job, dict) or "id" not in job:
                raise UnexpectedResponse("claim answer has no job", status=200)
            return job
        raise self._unexpected(response)

    def job_heartbeat(self, job_id: int) -> dict:
        return self._job_call(job_id, "heartbeat", {})

    def job_progress(self, job_id: int, *, state: str, note: str = "") -> dict:
        return self._job_call(job_id, "progress", {"state": state, "note": note})

    def job_result(self, job_id: int, *, outcome: str, observed: dict, resent: dict, reason: str = "") -> dict:
        body = {"outcome": outcome, "observed": observed, "resent": resent, "reason": reason}
        return self._job_call(job_id, "result", body)

    def item_content(self, job_id: int, *, index: int, content_url: str = "", sha256: str = "") -> bytes:
        """The item's bytes, checked against the job's sha256 when one is given."""
        path = content_url or f"/api/v1/sender/jobs/{job_id}/items/{index}/content"
        response = self._request("GET", path, timeout=self._timeout(self.timeouts.download))
        if response.status_code in (404, 409):
            self._raise_if_lease_lost(response, job_id)
        if response.status_code != 200:
            raise self._unexpected(response)
        content = response.content
        if sha256 and hashlib.sha256(content).hexdigest() != sha256.lower():
            raise UnexpectedResponse(f"job {job_id} item {index}: content does not match its sha256", status=200)
        return content

    # --- plumbing ---

    def _job_call(self, job_id: int, action: str, body: dict) -> dict:
        response = self._request("POST", f"/api/v1/sender/jobs/{job_id}/{action}", json=body)
        if response.status_code == 200:
            return self._json(response)
        if response.status_code in (404, 409):
            self._raise_if_lease_lost(response, job_id)
        raise self._unexpected(response)

    def _raise_if_lease_lost(self, response: httpx.Response, job_id: int) -> None:
        # The server answers a job that went to another device exactly like a missing one (404): either way it
        # is no longer this device's to send or report.
        error = self._json(response, strict=False).get("error")
        if error == "LEASE_NOT_HELD":
            raise LeaseLost(f"job {job_id}: this device no longer holds the lease")
        if error == "SEND_JOB_NOT_FOUND":
            raise LeaseLost(f"job {job_id}: the server no longer knows it as this device's job")

    def _timeout(self, read: float) -> httpx.Timeout:
        return httpx.Timeout(read, connect=self.timeouts.connect, write=read, pool=self.timeouts.connect)

    def _request(self, method: str, path: str, *, json=None, timeout=None) -> httpx.Response:
        try:
            response = self._client.request(method, path, json=json, timeout=timeout or httpx.USE_CLIENT_DEFAULT)
        except httpx.TransportError as exc:  # timeouts, refused connections, DNS, TLS
            raise ServerUnavailable(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        status = response.status_code
        if status >= 500:
            raise ServerUnavailable(f"{method} {path}: server error {status}")
        if status == 429:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            raise ServerUnavailable(
                f"{method} {path}: rate limited (Retry-After {retry_after})", retry_after=retry_after
            )
        if status in (401, 403):
            error = self._json(response, strict=False).get("error", "")
            hint = "this device's token is not valid: pair it again" if status == 401 else "wrong device role"
            raise AuthRefused(f"{method} {path}: {status} {error}: {hint}")
        return response

    @staticmethod
    def _json(response: httpx.Response, *, strict: bool = True) -> dict:
        try:
            body = response.json()
        except ValueError as exc:
            if not strict:
                return {}
            raise UnexpectedResponse(f"answer is not JSON (status {response.status_code})") from exc
        if not isinstance(body, dict):
            if not strict:
                return {}
            raise UnexpectedResponse(f"answer is not a JSON object (status {response.status_code})")
        return body

    def _unexpected(self, response: httpx.Response) -> UnexpectedResponse:
        body = self._json(response, strict=False)
        request = response.request
        return UnexpectedResponse(
            f"{request.method} {request.url.path}: unexpected {response.status_code} {body.get('error', '')}".strip(),
            status=response.status_code,
            body=body,
        )
