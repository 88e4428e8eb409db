import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

application = get_wsgi_application()

# A web process with an incomplete model configuration refuses to start (Django runs system checks only in
# management commands).
from agent.checks import configuration_require  # noqa: E402

configuration_require()
