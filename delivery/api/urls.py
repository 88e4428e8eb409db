from django.urls import path

from delivery.api.views import DeviceHeartbeatApi, DevicePairApi

urlpatterns = [
    path("devices/pair", DevicePairApi.as_view(), name="device-pair"),
    path("devices/heartbeat", DeviceHeartbeatApi.as_view(), name="device-heartbeat"),
]
