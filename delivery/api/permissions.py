"""Role checks for device endpoints. Use with `DeviceTokenAuthentication`.

No device → 401 `{"error": "DEVICE_TOKEN_INVALID"}`; a device of the wrong role → 403
`{"error": "DEVICE_ROLE_FORBIDDEN"}` (docs/edge-api.md).
"""

from rest_framework import exceptions, permissions

from delivery.api.authentication import DEVICE_TOKEN_INVALID
from delivery.models import Device

DEVICE_ROLE_FORBIDDEN = "DEVICE_ROLE_FORBIDDEN"


class IsDevice(permissions.BasePermission):
    """Any active device, whatever its role."""

    allowed_roles = frozenset(Device.Role.values)

    def has_permission(self, request, view):
        device = request.user
        if not isinstance(device, Device):
            raise exceptions.NotAuthenticated({"error": DEVICE_TOKEN_INVALID})
        if device.role not in self.allowed_roles:
            raise exceptions.PermissionDenied({"error": DEVICE_ROLE_FORBIDDEN})
        return True


class IsUploaderDevice(IsDevice):
    """Only uploader devices (staff PCs that upload chats)."""

    allowed_roles = frozenset({Device.Role.UPLOADER.value})


class IsSenderDevice(IsDevice):
    """Only sender devices (staff Macs that send replies)."""

    allowed_roles = frozenset({Device.Role.SENDER.value})
