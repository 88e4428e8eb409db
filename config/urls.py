from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from agent.admin_health import health_view
from conversations.api.views import UploadApi
from delivery.api.authentication import DeviceTokenAuthentication
from delivery.api.permissions import IsUploaderDevice

api_v1 = [
    path("", include("delivery.api.urls")),
    # Conversations' upload view, with delivery's device token and uploader role joined to it here: conversations
    # sits below delivery and does not import it.
    path(
        "uploads",
        UploadApi.as_view(authentication_classes=[DeviceTokenAuthentication], permission_classes=[IsUploaderDevice]),
        name="uploads",
    ),
    path("", include("agent.api.urls")),
]

urlpatterns = [
    path("admin/agent/", include("agent.admin_questions")),  # attention list and statistics
    path("admin/health/", admin.site.admin_view(health_view), name="admin_health"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
]

# Under /api/ these answer the JSON error body; elsewhere they are Django's own pages (config.api).
handler400 = "config.api.bad_request"
handler403 = "config.api.permission_denied"
handler404 = "config.api.not_found"
handler500 = "config.api.server_error"
