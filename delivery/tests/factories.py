"""Factories for delivery models. `active_device` gives a paired device and its token for API tests."""

import factory
from django.contrib.auth import get_user_model

from delivery.models import Device
from delivery.services import device_pair, device_pairing_code_issue, device_register


class StaffUserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"staff{n}")
    is_staff = True


class DeviceFactory(factory.django.DjangoModelFactory):
    """A pending device row without a code or token; use the services or `active_device` to pair it."""

    class Meta:
        model = Device

    name = factory.Sequence(lambda n: f"기기 {n}")
    role = Device.Role.UPLOADER
    created_by = factory.SubFactory(StaffUserFactory)


def active_device(role: str = Device.Role.UPLOADER, name: str | None = None) -> tuple[Device, str]:
    """Register, issue a code and pair through the real services; returns (device, plain token).

    Send the token as `Authorization: Bearer <token>`.
    """
    staff = StaffUserFactory()
    device = device_register(name=name or f"{role} 기기", role=role, actor=staff)
    code = device_pairing_code_issue(device=device, actor=staff)
    return device_pair(code=code, client_name=f"{device.name} client")
