from django.urls import path

from delivery.api import sender_views
from delivery.api.views import DeviceHeartbeatApi, DevicePairApi, DeviceTokenApi, DeviceTokenRotateApi

urlpatterns = [
    path("devices/pair", DevicePairApi.as_view(), name="device-pair"),
    path("devices/heartbeat", DeviceHeartbeatApi.as_view(), name="device-heartbeat"),
    path("devices/token", DeviceTokenApi.as_view(), name="device-token"),
    path("devices/token/rotate", DeviceTokenRotateApi.as_view(), name="device-token-rotate"),
    path("send-requests", sender_views.SendRequestApi.as_view(), name="send-requests"),
    path("sender/claim", sender_views.SenderClaimApi.as_view(), name="sender-claim"),
    path(
        "sender/jobs/<int:job_id>/heartbeat", sender_views.SenderJobHeartbeatApi.as_view(), name="sender-job-heartbeat"
    ),
    path("sender/jobs/<int:job_id>/progress", sender_views.SenderJobProgressApi.as_view(), name="sender-job-progress"),
    path("sender/jobs/<int:job_id>/result", sender_views.SenderJobResultApi.as_view(), name="sender-job-result"),
    path(
        "sender/jobs/<int:job_id>/items/<int:index>/content",
        sender_views.SenderJobItemContentApi.as_view(),
        name="sender-job-item-content",
    ),
]
