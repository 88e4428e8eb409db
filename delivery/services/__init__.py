"""Writes of the delivery app. Device functions live in `devices`; import them from here."""

from delivery.services.devices import (
    DeviceRevoked,
    PairingCodeInvalid,
    device_authenticate,
    device_heartbeat,
    device_pair,
    device_pairing_code_issue,
    device_register,
    device_revoke,
    device_touch,
)

__all__ = [
    "DeviceRevoked",
    "PairingCodeInvalid",
    "device_authenticate",
    "device_heartbeat",
    "device_pair",
    "device_pairing_code_issue",
    "device_register",
    "device_revoke",
    "device_touch",
]
