"""Developer machine and `make demo`: the embedded default unless URLs are set."""

from config.settings.base import *  # noqa: F403
from config.settings.base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
WHITENOISE_AUTOREFRESH = True  # serve static files without collectstatic
