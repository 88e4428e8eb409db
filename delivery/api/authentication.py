"""Device token authentication for the edge API: `Authorization: Bearer <token>`, request.user is the Device."""

from drf_spectacular.authentication import SessionScheme
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from delivery.services import device_authenticate, device_touch

DEVICE_TOKEN_INVALID = "DEVICE_TOKEN_INVALID"


class DeviceTokenAuthentication(authentication.BaseAuthentication):
    """Accepts an active device's token; a bad, unknown or revoked token is a 401 `DEVICE_TOKEN_INVALID`.

    A request without a Bearer header is left unauthenticated; the device permissions answer it with the
    same 401. Each authenticated request refreshes the device's last-seen time (throttled in `device_touch`).
    """

    keyword = "Bearer"

    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed({"error": DEVICE_TOKEN_INVALID})
        try:
            token = parts[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed({"error": DEVICE_TOKEN_INVALID}) from exc
        device = device_authenticate(token)
        if device is None:
            raise exceptions.AuthenticationFailed({"error": DEVICE_TOKEN_INVALID})
        device_touch(device=device)
        return device, token

    def authenticate_header(self, request):
        # A WWW-Authenticate value makes DRF answer 401 instead of 403 for missing or bad credentials.
        return self.keyword


class StaffSessionAuthentication(authentication.SessionAuthentication):
    """A staff member's admin session, with Django's CSRF check (DRF enforces it for session-authenticated writes).

    The only way staff reach the staff endpoints: HTTP Basic is not offered, because every Basic request costs a
    full password hash and a few connections sending passwords would starve the workers the uploads need. The
    agent submits send requests in process, not over HTTP.
    """

    def authenticate_header(self, request):
        # A challenge makes DRF answer an anonymous caller 401 (not 403): log in to the admin first.
        return 'Session realm="admin"'


class DeviceTokenAuthenticationScheme(OpenApiAuthenticationExtension):
    """Describes the device token to drf-spectacular as an HTTP Bearer scheme."""

    target_class = DeviceTokenAuthentication
    name = "deviceToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "Device token returned once by /devices/pair."}


class StaffSessionAuthenticationScheme(SessionScheme):
    """Describes the staff session to drf-spectacular as the session cookie."""

    target_class = StaffSessionAuthentication
