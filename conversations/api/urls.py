from django.urls import path

from conversations.api.views import UploadApi

urlpatterns = [
    path("uploads", UploadApi.as_view(), name="uploads"),
]
