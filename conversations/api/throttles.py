import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle


class DeviceUploadRateThrottle(BaseThrottle):
    """Fixed one-minute window per device, counted atomically in the shared cache (Redis when configured)."""

    def allow_request(self, request, view):
        now = time.time()
        window = int(now // 60)
        key = f"vcs:rate:upload:{request.user.pk}:{window}"
        cache.add(key, 0, timeout=120)
        count = cache.incr(key)
        self._wait = 60 - (now % 60)
        return count <= settings.UPLOAD_RATE_PER_MINUTE

    def wait(self):
        return self._wait
