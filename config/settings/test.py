"""Tests: real PostgreSQL and Redis (never mocked), fast password hashing, quiet logs."""

import environ

from config.settings.base import *  # noqa: F403
from config.settings.base import BASE_DIR, env

_database_url = env("DATABASE_URL", default="") or "postgres://postgres@127.0.0.1:5432/vcs"
DATABASES = {"default": environ.Env.db_url_config(_database_url)}
DATABASES["default"]["CONN_MAX_AGE"] = 0
DATABASES["default"]["TEST"] = {"NAME": env("TEST_DATABASE_NAME", default="test_vcs")}

# Each pytest-xdist worker gets its own test database (pytest-django adds a suffix) and its own Redis
# database, so keys derived from row ids never collide between workers.
_worker_index = int(env("PYTEST_XDIST_WORKER", default="gw0").removeprefix("gw") or 0)
_redis_db = env.int("TEST_REDIS_DB", default=15) - _worker_index
REDIS_URL = env("TEST_REDIS_URL", default="") or f"redis://127.0.0.1:6379/{_redis_db}"
CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
CELERY_BROKER_URL = REDIS_URL
# Tasks run in the test process unless a test starts a real worker.
CELERY_TASK_ALWAYS_EAGER = True

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
SECRET_KEY = "test-secret-key"
DEBUG = False
LOGGING["root"]["level"] = "WARNING"
TEST_VAR_DIR = BASE_DIR / "var" / "test"
WHITENOISE_AUTOREFRESH = True  # no collectstatic in tests: files come from the apps through the finders
WHITENOISE_USE_FINDERS = True
