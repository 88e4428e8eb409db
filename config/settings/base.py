"""Settings shared by every environment.

Everything comes from one `environ.Env()`. Each integration is switched on by its URL; when the URL is unset
the embedded default is used (SQLite file, in-process tasks, local Qdrant folder, file-based LightRAG, the
local deterministic answerer), so `make demo` needs nothing installed.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# --- core ---
SECRET_KEY = env("DJANGO_SECRET_KEY", default="dev-only-insecure-key-change-me")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "django_celery_beat",
    "vendors",
    "conversations",
    "agent",
    "delivery",
    "monitoring",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database: PostgreSQL when DATABASE_URL is set, a SQLite file otherwise ---
DATABASE_URL = env("DATABASE_URL", default="") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
DATABASES = {"default": environ.Env.db_url_config(DATABASE_URL)}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the dev server and management commands share the file.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- cache and tasks: Redis when REDIS_URL is set, in-process otherwise ---
REDIS_URL = env("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=300)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
CELERY_TASK_ACKS_LATE = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Above the longest task run so a late-acked task is not redelivered while it still runs.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = "Asia/Seoul"

# --- i18n ---
LANGUAGE_CODE = "ko-kr"
TIME_ZONE = "Asia/Seoul"
USE_I18N = True
USE_TZ = True

# --- static ---
STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- API ---
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Vendor CS Agent API",
    "DESCRIPTION": "Edge device API: pairing, conversation upload, send jobs.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        # LightRAG prints at INFO on its own handler; keep it quiet.
        "lightrag": {"level": "WARNING"},
        "nano-vectordb": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}

# --- edge devices and pairing ---
PAIRING_CODE_TTL_MINUTES = env.int("PAIRING_CODE_TTL_MINUTES", default=10)
PAIRING_CODE_MAX_ATTEMPTS = env.int("PAIRING_CODE_MAX_ATTEMPTS", default=5)

# --- conversation upload ---
UPLOAD_MAX_MESSAGES = env.int("UPLOAD_MAX_MESSAGES", default=1000)
UPLOAD_MAX_BYTES = env.int("UPLOAD_MAX_BYTES", default=2 * 1024 * 1024)
UPLOAD_RATE_PER_MINUTE = env.int("UPLOAD_RATE_PER_MINUTE", default=120)
RESEND_WINDOW_SECONDS = env.int("RESEND_WINDOW_SECONDS", default=15)
# How long a resend key is remembered (covers uploads that arrive late after an outage).
RESEND_KEY_TTL_SECONDS = env.int("RESEND_KEY_TTL_SECONDS", default=6 * 3600)
BOT_TAGS = env.list("BOT_TAGS", default=["@봇"])

# --- counterpart resolution ---
RESOLUTION_TYPO_THRESHOLD = env.float("RESOLUTION_TYPO_THRESHOLD", default=0.80)
RESOLUTION_CANDIDATE_LIMIT = env.int("RESOLUTION_CANDIDATE_LIMIT", default=5)

# --- agent: verification ---
VERIFICATION_MIN_FUZZY_BRAND_LENGTH = env.int("VERIFICATION_MIN_FUZZY_BRAND_LENGTH", default=3)

# --- knowledge ---
# records & evidence
# Items each source may contribute to one question's evidence.
EVIDENCE_BUDGET_RECORDS = env.int("EVIDENCE_BUDGET_RECORDS", default=5)
EVIDENCE_BUDGET_HUB = env.int("EVIDENCE_BUDGET_HUB", default=6)
EVIDENCE_BUDGET_FAQ = env.int("EVIDENCE_BUDGET_FAQ", default=5)
# Two items whose normalised texts are this similar (0..1) and carry the same numbers are one item.
EVIDENCE_DEDUP_SIMILARITY = env.float("EVIDENCE_DEDUP_SIMILARITY", default=0.95)
# pg_trgm word_similarity at or above which a record matches even when no query token is a substring of it.
RECORDS_TRGM_WORD_SIMILARITY = env.float("RECORDS_TRGM_WORD_SIMILARITY", default=0.5)

# --- agent ---

# --- delivery ---
# Photos and files of send jobs; private: served to sender devices only through the sender API.
MEDIA_ROOT = env("MEDIA_ROOT", default=str(VAR_DIR / "media"))
MEDIA_URL = "/media/"
SEND_LEASE_SECONDS = env.int("SEND_LEASE_SECONDS", default=120)
SEND_REQUEST_MAX_ITEMS = env.int("SEND_REQUEST_MAX_ITEMS", default=20)
SEND_ITEM_MAX_BYTES = env.int("SEND_ITEM_MAX_BYTES", default=10 * 1024 * 1024)
SEND_TEXT_MAX_CHARS = env.int("SEND_TEXT_MAX_CHARS", default=5000)

# --- monitoring ---

# --- beat schedules (one place; DatabaseScheduler syncs them so staff can pause them in admin) ---
CELERY_BEAT_SCHEDULE = {}
