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
    "drf_spectacular_sidecar",  # Swagger UI and ReDoc files served from our static files, so /api/docs/ works offline
    "django_celery_beat",
    "vendors",
    "conversations",
    "agent",
    "delivery",
    "monitoring",
    "demo",
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
CELERY_TASK_DEFAULT_QUEUE = "default"
# Each task's queue is declared with it (`config.celery.task`); this router reads those declarations.
# A worker for everything: celery -A config worker -Q default,agent,delivery,monitoring
CELERY_TASK_ROUTES = ("config.celery.task_route",)
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Above the longest task run so a late-acked task is not redelivered while it still runs.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = "Asia/Seoul"

# --- i18n ---
LANGUAGE_CODE = "ko-kr"
TIME_ZONE = "Asia/Seoul"
USE_I18N = True
# The project catalogue comes first: it corrects Django's and third-party apps' Korean where they are wrong or English.
LOCALE_PATHS = [BASE_DIR / "locale"]
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
    "DEFAULT_PARSER_CLASSES": ["config.api.SafeJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    "UNAUTHENTICATED_USER": None,
    # Reverse proxies in front of the app: 0 takes the client address from the connection and ignores a
    # client-supplied X-Forwarded-For (which would otherwise let anyone pick the address a limit counts against).
    "NUM_PROXIES": env.int("API_NUM_PROXIES", default=0),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Vendor CS Agent API",
    "DESCRIPTION": "Edge device API: pairing, conversation upload, send jobs.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # 3.1: JSON Schema proper, so the pydantic-described upload body (nullable fields as `type: null`) validates.
    "OAS_VERSION": "3.1.0",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.api.schema_document_error_body",
        "delivery.api.schema_links.schema_document_links",
    ],
    # /api/docs/ loads Swagger UI from drf-spectacular-sidecar's static files (whitenoise), never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
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
        "celery": {"level": "WARNING"},
        # In-process tasks have no broker host; kombu warns about that on every dispatch.
        "kombu": {"level": "ERROR"},
        "httpx2": {"level": "WARNING"},  # the openai client's transport logs every request at INFO
    },
}

# --- edge devices and pairing ---
PAIRING_CODE_TTL_MINUTES = env.int("PAIRING_CODE_TTL_MINUTES", default=10)
# Lifetime of a device token from pairing or rotation; 0: tokens do not expire. Devices rotate in the last third.
DEVICE_TOKEN_TTL_DAYS = env.int("DEVICE_TOKEN_TTL_DAYS", default=0)
# Failed redeems of /devices/pair allowed within a sliding window, per client address (an IPv6 /64) and in total;
# past either limit the endpoint answers 429 without looking at the code.
PAIRING_FAILURE_WINDOW_MINUTES = env.int("PAIRING_FAILURE_WINDOW_MINUTES", default=10)
PAIRING_FAILURES_PER_ADDRESS = env.int("PAIRING_FAILURES_PER_ADDRESS", default=5)
PAIRING_FAILURES_GLOBAL = env.int("PAIRING_FAILURES_GLOBAL", default=100)

# --- conversation upload ---
UPLOAD_MAX_MESSAGES = env.int("UPLOAD_MAX_MESSAGES", default=1000)
UPLOAD_MAX_BYTES = env.int("UPLOAD_MAX_BYTES", default=2 * 1024 * 1024)
UPLOAD_RATE_PER_MINUTE = env.int("UPLOAD_RATE_PER_MINUTE", default=120)
# A message time outside these is refused (that message only): UTC years, and the largest UTC offset.
UPLOAD_SENT_AT_EARLIEST_YEAR = env.int("UPLOAD_SENT_AT_EARLIEST_YEAR", default=2000)
UPLOAD_SENT_AT_LATEST_YEAR = env.int("UPLOAD_SENT_AT_LATEST_YEAR", default=2100)
UPLOAD_SENT_AT_MAX_OFFSET_MINUTES = env.int("UPLOAD_SENT_AT_MAX_OFFSET_MINUTES", default=14 * 60)
RESEND_WINDOW_SECONDS = env.int("RESEND_WINDOW_SECONDS", default=15)
# How long a resend key is remembered (covers uploads that arrive late after an outage).
RESEND_KEY_TTL_SECONDS = env.int("RESEND_KEY_TTL_SECONDS", default=6 * 3600)
BOT_TAGS = env.list("BOT_TAGS", default=["@봇"])
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"] = {
    **SPECTACULAR_SETTINGS.get("ENUM_NAME_OVERRIDES", {}),
    "UploadRejectionReasonEnum": "conversations.models.QuarantinedMessage.Reason",
}

# --- counterpart resolution ---
RESOLUTION_TYPO_THRESHOLD = env.float("RESOLUTION_TYPO_THRESHOLD", default=0.80)
RESOLUTION_CANDIDATE_LIMIT = env.int("RESOLUTION_CANDIDATE_LIMIT", default=5)

# --- agent: verification ---
VERIFICATION_MIN_FUZZY_BRAND_LENGTH = env.int("VERIFICATION_MIN_FUZZY_BRAND_LENGTH", default=3)

# --- knowledge ---
# embeddings, rerank, FAQ
# Embeddings: the local USE model (weights inside the package) unless an OpenAI-compatible endpoint is set.
EMBEDDINGS_BASE_URL = env("EMBEDDINGS_BASE_URL", default="")
EMBEDDINGS_API_KEY = env("EMBEDDINGS_API_KEY", default="")
EMBEDDINGS_MODEL = env("EMBEDDINGS_MODEL", default="text-embedding-3-small")
EMBEDDINGS_DIMENSION = env.int("EMBEDDINGS_DIMENSION", default=0)  # 0: learnt from the first response
EMBEDDINGS_QUERY_PREFIX = env("EMBEDDINGS_QUERY_PREFIX", default="")  # e.g. "query: " for e5 models
EMBEDDINGS_DOCUMENT_PREFIX = env("EMBEDDINGS_DOCUMENT_PREFIX", default="")  # e.g. "passage: "
EMBEDDINGS_TIMEOUT_SECONDS = env.float("EMBEDDINGS_TIMEOUT_SECONDS", default=10.0)
EMBEDDINGS_MAX_RETRIES = env.int("EMBEDDINGS_MAX_RETRIES", default=2)
EMBEDDINGS_LOCAL_THREADS = env.int("EMBEDDINGS_LOCAL_THREADS", default=1)
# Reranking: the local lexical + embedding blend unless a `/rerank` endpoint is set.
RERANK_URL = env("RERANK_URL", default="")
RERANK_API_KEY = env("RERANK_API_KEY", default="")
RERANK_MODEL = env("RERANK_MODEL", default="")
RERANK_TIMEOUT_SECONDS = env.float("RERANK_TIMEOUT_SECONDS", default=10.0)
# Qdrant: local mode in a folder unless QDRANT_URL is set. Local mode allows one process per folder.
QDRANT_URL = env("QDRANT_URL", default="")
QDRANT_API_KEY = env("QDRANT_API_KEY", default="")
QDRANT_PATH = env("QDRANT_PATH", default=str(VAR_DIR / "qdrant"))
QDRANT_TIMEOUT_SECONDS = env.int("QDRANT_TIMEOUT_SECONDS", default=10)
FAQ_COLLECTION_PREFIX = env("FAQ_COLLECTION_PREFIX", default="faq")  # + embedder name, e.g. faq_use_m3
# Local mode: how long a process waits for the process that owns the folder to answer one index call / a rebuild.
# The owner answers one call at a time, and its first write may include loading the embedding model.
FAQ_INDEX_OWNER_TIMEOUT_SECONDS = env.float("FAQ_INDEX_OWNER_TIMEOUT_SECONDS", default=30.0)
FAQ_INDEX_REBUILD_TIMEOUT_SECONDS = env.float("FAQ_INDEX_REBUILD_TIMEOUT_SECONDS", default=1800.0)
# FAQ retrieval (seed 001). Dense score thresholds belong to one embedding model, so they are per provider:
# the OpenAI-compatible defaults are the seed's; the local ones are calibrated on the demo FAQ (docs/knowledge.md).
FAQ_TOP_K = env.int("FAQ_TOP_K", default=30)
FAQ_RERANK_CANDIDATES = env.int("FAQ_RERANK_CANDIDATES", default=40)
# A second dense search, of the whole passages (question and answer), beside the stored questions': it finds the entry
# whose answer holds what is asked; one more vector search per query (docs/benchmarks.md "FAQ retrieval").
FAQ_PASSAGE_SEARCH = env.bool("FAQ_PASSAGE_SEARCH", default=True)
FAQ_TOP_N_FOR_LLM = env.int("FAQ_TOP_N_FOR_LLM", default=5)
FAQ_SCORE_THRESHOLD_OPENAI = env.float("FAQ_SCORE_THRESHOLD_OPENAI", default=0.55)
FAQ_RELAXED_SCORE_THRESHOLD_OPENAI = env.float("FAQ_RELAXED_SCORE_THRESHOLD_OPENAI", default=0.50)
FAQ_SCORE_THRESHOLD_LOCAL = env.float("FAQ_SCORE_THRESHOLD_LOCAL", default=0.30)
FAQ_RELAXED_SCORE_THRESHOLD_LOCAL = env.float("FAQ_RELAXED_SCORE_THRESHOLD_LOCAL", default=0.25)
# Reranker confidence (seed: LOW 0.65 / HIGH 0.75) — per reranker, the local one calibrated like the embedder.
FAQ_LOW_CONFIDENCE_THRESHOLD_HTTP = env.float("FAQ_LOW_CONFIDENCE_THRESHOLD_HTTP", default=0.65)
FAQ_HIGH_CONFIDENCE_THRESHOLD_HTTP = env.float("FAQ_HIGH_CONFIDENCE_THRESHOLD_HTTP", default=0.75)
FAQ_LOW_CONFIDENCE_THRESHOLD_LOCAL = env.float("FAQ_LOW_CONFIDENCE_THRESHOLD_LOCAL", default=0.65)
FAQ_HIGH_CONFIDENCE_THRESHOLD_LOCAL = env.float("FAQ_HIGH_CONFIDENCE_THRESHOLD_LOCAL", default=0.75)
# Rerank floor: candidates under it are dropped even after passing the dense threshold. 0 for an HTTP reranker
# keeps the seed exactly; the local embedder's dense scores of unrelated questions overlap related ones, so the
# local reranker needs one (calibrated in docs/knowledge.md).
FAQ_RERANK_FLOOR_HTTP = env.float("FAQ_RERANK_FLOOR_HTTP", default=0.0)
FAQ_RERANK_FLOOR_LOCAL = env.float("FAQ_RERANK_FLOOR_LOCAL", default=0.2)
# Hybrid dense + sparse: on with a Qdrant server; off in local mode, whose sparse search scans every point in
# Python (docs/benchmarks.md "FAQ retrieval").
FAQ_HYBRID_SEARCH = env.bool("FAQ_HYBRID_SEARCH", default=bool(QDRANT_URL))
FAQ_KEYWORD_RETRY_LIMIT = env.int("FAQ_KEYWORD_RETRY_LIMIT", default=3)
# An FAQ entry holding a word of the question that at most this many entries use names its subject exactly.
FAQ_RARE_TERM_ENTRIES = env.int("FAQ_RARE_TERM_ENTRIES", default=3)
FAQ_KEYWORD_RETRY_MIN_CHARS = env.int("FAQ_KEYWORD_RETRY_MIN_CHARS", default=2)
# Over-broad single words that never trigger the keyword retry (a substring match on them proves nothing).
FAQ_KEYWORD_RETRY_BLOCKLIST = env.list(
    "FAQ_KEYWORD_RETRY_BLOCKLIST",
    default=[
        "할인", "요금", "감면", "가격", "비용", "문의", "질문", "확인", "안내", "주문", "배송", "반품", "교환",
        "정산", "계약", "상품", "제품", "결제", "환불", "취소", "등록", "변경", "신청", "방법", "프로모션",
        "행사", "이벤트", "혜택", "안녕하세요", "감사합니다", "네", "예", "뭐", "왜", "언제", "어디",
    ],
)  # fmt: skip
# A training upload's row conflicts with an FAQ whose stored question scores at least this (dense cosine). With the
# local USE embedding, distinct demo FAQ questions reach 0.83 at most and light rewordings of one question mostly
# score 0.87-0.96, so 0.85 flags near-duplicates without flagging distinct questions (docs/knowledge.md).
FAQ_TRAINING_CONFLICT_SCORE = env.float("FAQ_TRAINING_CONFLICT_SCORE", default=0.85)
# records & evidence
# Items each source may contribute to one question's evidence.
EVIDENCE_BUDGET_RECORDS = env.int("EVIDENCE_BUDGET_RECORDS", default=5)
EVIDENCE_BUDGET_HUB = env.int("EVIDENCE_BUDGET_HUB", default=7)
EVIDENCE_BUDGET_FAQ = env.int("EVIDENCE_BUDGET_FAQ", default=5)
# Two items whose normalised texts are this similar (0..1) and carry the same numbers are one item.
EVIDENCE_DEDUP_SIMILARITY = env.float("EVIDENCE_DEDUP_SIMILARITY", default=0.95)
# pg_trgm word_similarity at or above which a record matches even when no query token is a substring of it.
RECORDS_TRGM_WORD_SIMILARITY = env.float("RECORDS_TRGM_WORD_SIMILARITY", default=0.5)
# knowledge hub
# LightRAG on its file storages: one folder, one sub-folder per workspace (production storages: docs/knowledge.md).
LIGHTRAG_WORKING_DIR = env("LIGHTRAG_WORKING_DIR", default=str(VAR_DIR / "lightrag"))
# "files": LightRAG's file storages under LIGHTRAG_WORKING_DIR (one host). "postgres": KV, document status and a
# plain-table graph in the platform's PostgreSQL (DATABASE_URL), vectors in Qdrant when QDRANT_URL is set, else
# in the working dir's vector files (docs/knowledge.md "Storages").
KNOWLEDGE_HUB_STORAGE = env("KNOWLEDGE_HUB_STORAGE", default="files")
# Connections of each process's LightRAG pool to PostgreSQL (LightRAG's own default is 50 per process).
KNOWLEDGE_HUB_POSTGRES_MAX_CONNECTIONS = env.int("KNOWLEDGE_HUB_POSTGRES_MAX_CONNECTIONS", default=4)
# How long a caller waits for the hub's event-loop thread: one search, one document ingest.
KNOWLEDGE_HUB_SEARCH_TIMEOUT_SECONDS = env.float("KNOWLEDGE_HUB_SEARCH_TIMEOUT_SECONDS", default=10.0)
KNOWLEDGE_HUB_INGEST_TIMEOUT_SECONDS = env.float("KNOWLEDGE_HUB_INGEST_TIMEOUT_SECONDS", default=900.0)
# Seconds a process reuses the workspace list and revisions it read; 0 reads them on every search.
KNOWLEDGE_HUB_REVISION_CHECK_SECONDS = env.float("KNOWLEDGE_HUB_REVISION_CHECK_SECONDS", default=0.0)
KNOWLEDGE_HUB_QUERY_MODE = env("KNOWLEDGE_HUB_QUERY_MODE", default="mix")
KNOWLEDGE_HUB_TOP_K = env.int("KNOWLEDGE_HUB_TOP_K", default=10)  # entities and relations per workspace
KNOWLEDGE_HUB_CHUNK_TOP_K = env.int("KNOWLEDGE_HUB_CHUNK_TOP_K", default=8)  # chunks per workspace
KNOWLEDGE_HUB_RESULT_LIMIT = env.int("KNOWLEDGE_HUB_RESULT_LIMIT", default=8)  # items one search returns
# LightRAG's own vector floor, and ours: items whose cosine to the question is below it are dropped.
# Both belong to the embedding model (calibrated for the local one in docs/knowledge.md).
KNOWLEDGE_HUB_COSINE_THRESHOLD = env.float("KNOWLEDGE_HUB_COSINE_THRESHOLD", default=0.1)
KNOWLEDGE_HUB_MIN_SCORE = env.float("KNOWLEDGE_HUB_MIN_SCORE", default=0.2)
# A noun of the question that at most this many documents hold finds its passages by the word itself as well.
KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS = env.int("KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS", default=3)
# A question whose routing keywords hit more workspaces than this is not routed by keyword.
KNOWLEDGE_HUB_ROUTE_MAX_WORKSPACES = env.int("KNOWLEDGE_HUB_ROUTE_MAX_WORKSPACES", default=4)
# A question routing cannot narrow is asked of this many workspaces nearest to it in content (plus the `*` ones);
# 0 asks every enabled workspace.
KNOWLEDGE_HUB_UNROUTED_WORKSPACES = env.int("KNOWLEDGE_HUB_UNROUTED_WORKSPACES", default=4)
# A routed question also asks this many of the workspaces routing left out, the nearest to it in content (a
# question routed by `발주` may be about the logistics rule for loading several orders): 0 asks only the routed ones.
KNOWLEDGE_HUB_ROUTED_ALSO_NEAREST = env.int("KNOWLEDGE_HUB_ROUTED_ALSO_NEAREST", default=1)
KNOWLEDGE_HUB_MAX_DOCUMENT_CHARS = env.int("KNOWLEDGE_HUB_MAX_DOCUMENT_CHARS", default=500_000)
# Local extractor (used when no LLM is configured): chunk size and graph density.
KNOWLEDGE_HUB_CHUNK_CHARS = env.int("KNOWLEDGE_HUB_CHUNK_CHARS", default=800)
KNOWLEDGE_HUB_ENTITIES_PER_CHUNK = env.int("KNOWLEDGE_HUB_ENTITIES_PER_CHUNK", default=10)
KNOWLEDGE_HUB_RELATIONS_PER_CHUNK = env.int("KNOWLEDGE_HUB_RELATIONS_PER_CHUNK", default=12)
# LightRAG's own LLM extraction when an OpenAI-compatible endpoint is set (defaults to the agent's endpoint).
KNOWLEDGE_HUB_LLM_BASE_URL = env("KNOWLEDGE_HUB_LLM_BASE_URL", default=env("OPENAI_BASE_URL", default=""))
KNOWLEDGE_HUB_LLM_API_KEY = env("KNOWLEDGE_HUB_LLM_API_KEY", default=env("OPENAI_API_KEY", default=""))
KNOWLEDGE_HUB_LLM_MODEL = env("KNOWLEDGE_HUB_LLM_MODEL", default=env("LLM_MODEL", default="gpt-4o-mini"))
KNOWLEDGE_HUB_LLM_TIMEOUT_SECONDS = env.float("KNOWLEDGE_HUB_LLM_TIMEOUT_SECONDS", default=120.0)

# --- agent ---
# LLM providers
# "" picks "openai" when OPENAI_BASE_URL or LLM_MODEL is set, else the local deterministic answerer.
LLM_PROVIDER = env("LLM_PROVIDER", default="")
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="")  # "" with LLM_MODEL set: api.openai.com
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
LLM_MODEL = env("LLM_MODEL", default="")
LLM_TIMEOUT_SECONDS = env.float("LLM_TIMEOUT_SECONDS", default=30.0)  # per attempt
LLM_MAX_RETRIES = env.int("LLM_MAX_RETRIES", default=2)  # extra attempts after a transient failure
LLM_RETRY_BACKOFF_SECONDS = env.float("LLM_RETRY_BACKOFF_SECONDS", default=1.0)  # doubles per retry, jittered
LLM_TEMPERATURE = env.float("LLM_TEMPERATURE", default=0.2)  # answers; rewrite and judge calls use 0
# A judge call gets one attempt within this (the verification engine's own judge deadline is 10 s).
LLM_JUDGE_TIMEOUT_SECONDS = env.float("LLM_JUDGE_TIMEOUT_SECONDS", default=8.0)
# Local answerer: at most this many evidence sentences, each scoring at least the floor (0..1) against the question.
LOCAL_ANSWER_MAX_SENTENCES = env.int("LOCAL_ANSWER_MAX_SENTENCES", default=2)
# Sent when no evidence supports an answer: no numbers, no brands, no promise of a person, no question back.
AGENT_GUIDANCE_ANSWER = env(
    "AGENT_GUIDANCE_ANSWER",
    default=(
        "문의하신 내용은 현재 확인 가능한 자료에서 근거를 찾지 못해 정확한 답변을 드리기 어렵습니다. 양해 부탁드립니다."
    ),
)
# Sent to a vendor asking about another vendor ("대한물산은 참기름 얼마에 넣어요?"): the same rules as the guidance.
AGENT_OTHER_VENDOR_ANSWER = env(
    "AGENT_OTHER_VENDOR_ANSWER",
    default="다른 협력사의 거래 정보는 안내해 드릴 수 없습니다. 양해 부탁드립니다.",
)
# pipeline
AGENT_MAX_TOOL_ROUNDS = env.int("AGENT_MAX_TOOL_ROUNDS", default=6)
AGENT_VERIFY_ROUNDS = env.int("AGENT_VERIFY_ROUNDS", default=2)  # rewrite rounds after the first draft
AGENT_HISTORY_LIMIT = env.int("AGENT_HISTORY_LIMIT", default=10)
AGENT_HISTORY_HOURS = env.int("AGENT_HISTORY_HOURS", default=24)
AGENT_REFERENCE_URL_LIMIT = env.int("AGENT_REFERENCE_URL_LIMIT", default=3)
# runs: a run holds a lease on its question, renewed by a heartbeat while it composes; the sweep gives a question
# whose lease lapsed (a killed worker) to a new run, up to AGENT_RUN_MAX_ATTEMPTS runs, then fails it.
AGENT_RUN_LEASE_SECONDS = env.float("AGENT_RUN_LEASE_SECONDS", default=60.0)
AGENT_RUN_HEARTBEAT_SECONDS = env.float("AGENT_RUN_HEARTBEAT_SECONDS", default=15.0)  # well below the lease
AGENT_RUN_MAX_ATTEMPTS = env.int("AGENT_RUN_MAX_ATTEMPTS", default=4)
AGENT_DISPATCH_LOST_SECONDS = env.int("AGENT_DISPATCH_LOST_SECONDS", default=120)
AGENT_SWEEP_BATCH = env.int("AGENT_SWEEP_BATCH", default=100)
# A worker consuming the agent queue loads the morphological analyser (~500 MB, seconds) in its main process
# before forking the pool: the children share it copy-on-write and none loads it inside its first question.
AGENT_PRELOAD_ANALYSER = env.bool("AGENT_PRELOAD_ANALYSER", default=True)

# --- delivery ---
# Photos and files of send jobs; private: served to sender devices only through the sender API.
MEDIA_ROOT = env("MEDIA_ROOT", default=str(VAR_DIR / "media"))
MEDIA_URL = "/media/"
SEND_LEASE_SECONDS = env.int("SEND_LEASE_SECONDS", default=120)
SEND_REQUEST_MAX_ITEMS = env.int("SEND_REQUEST_MAX_ITEMS", default=20)
SEND_ITEM_MAX_BYTES = env.int("SEND_ITEM_MAX_BYTES", default=10 * 1024 * 1024)
SEND_TEXT_MAX_CHARS = env.int("SEND_TEXT_MAX_CHARS", default=5000)
# Send-job choice sets share field names ("state", "outcome"): name their schema enums explicitly.
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"] = {
    **SPECTACULAR_SETTINGS.get("ENUM_NAME_OVERRIDES", {}),
    "SendJobStateEnum": "delivery.models.SendJob.State",
    "SendProgressStateEnum": "delivery.api.sender_serializers.PROGRESS_STATE_CHOICES",
    "SendResultOutcomeEnum": "delivery.api.sender_serializers.RESULT_OUTCOME_CHOICES",
}

# --- monitoring ---
# Opens the details of GET /api/v1/health (paths, hosts, counts, reasons) to `Authorization: Bearer <token>`;
# empty: only staff see them, on the admin health page. Anyone else gets the status words.
HEALTH_TOKEN = env("HEALTH_TOKEN", default="")
BUSINESS_TIME_ZONE = env("BUSINESS_TIME_ZONE", default="Asia/Seoul")
BUSINESS_DAYS = env.list("BUSINESS_DAYS", cast=int, default=[1, 2, 3, 4, 5])  # ISO weekdays, Monday = 1
BUSINESS_HOURS_START = env("BUSINESS_HOURS_START", default="09:00")
BUSINESS_HOURS_END = env("BUSINESS_HOURS_END", default="18:00")
BUSINESS_HOLIDAY_COUNTRY = env("BUSINESS_HOLIDAY_COUNTRY", default="KR")
MONITOR_QUESTION_RESULT_MINUTES = env.int("MONITOR_QUESTION_RESULT_MINUTES", default=10)
MONITOR_SEND_STUCK_MINUTES = env.int("MONITOR_SEND_STUCK_MINUTES", default=15)
MONITOR_DEVICE_SILENT_MINUTES = env.int("MONITOR_DEVICE_SILENT_MINUTES", default=30)
MONITOR_UPLOAD_GAP_MINUTES = env.int("MONITOR_UPLOAD_GAP_MINUTES", default=60)
MONITOR_BATCH_LIMIT = env.int("MONITOR_BATCH_LIMIT", default=500)
# How long a question on the needs-attention list may wait for staff, in business minutes since it was accepted.
ATTENTION_SLA_BUSINESS_MINUTES = env.int("ATTENTION_SLA_BUSINESS_MINUTES", default=120)
ALERT_WEBHOOK_URL = env("ALERT_WEBHOOK_URL", default="")
ALERT_WEBHOOK_TIMEOUT_SECONDS = env.float("ALERT_WEBHOOK_TIMEOUT_SECONDS", default=5.0)

# --- beat schedules (one place; DatabaseScheduler syncs them so staff can pause them in admin) ---
CELERY_BEAT_SCHEDULE = {
    "monitoring.run_monitor": {"task": "monitoring.run_monitor", "schedule": 60.0, "options": {"expires": 55}},
    "monitoring.notify_alerts": {"task": "monitoring.notify_alerts", "schedule": 60.0, "options": {"expires": 55}},
    "agent.sweep_questions": {"task": "agent.sweep_questions", "schedule": 60.0, "options": {"expires": 55}},
    "delivery.expire_send_leases": {
        "task": "delivery.expire_send_leases",
        "schedule": 30.0,
        "options": {"queue": "delivery", "expires": 25},
    },
}
