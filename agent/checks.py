"""System checks of the model configuration: a web or worker process with an incomplete LLM, embeddings or rerank
configuration refuses to start, instead of leaving every question to fail (or wait) one by one.

Registered under the `configuration` tag by `AgentConfig.ready`, so `manage.py check` and `runserver` run them;
`configuration_require()` runs them where Django does not on its own: the WSGI entry point and a Celery worker's
start.
"""

from urllib.parse import urlparse

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

TAG = "configuration"
_KNOWN_PROVIDERS = ("local", "openai")


def _is_http_url(value: str) -> bool:
    parsed = urlparse(value)
    return parsed.scheme in ("http", "https") and bool(parsed.netloc)


def _error(code: str, message: str, hint: str) -> checks.Error:
    return checks.Error(message, hint=hint, id=f"agent.{code}")


@checks.register(TAG)
def llm_configuration_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    errors = []
    provider = (settings.LLM_PROVIDER or "").strip().lower()
    base_url, model, key = settings.OPENAI_BASE_URL, settings.LLM_MODEL, settings.OPENAI_API_KEY
    if provider and provider not in _KNOWN_PROVIDERS:
        errors.append(
            _error(
                "E001",
                f"LLM_PROVIDER={provider!r} is not a provider a process can run with.",
                "Use 'local' or 'openai' (the scripted provider is installed by tests in code), or leave it empty.",
            )
        )
    uses_openai = provider == "openai" or (not provider and bool(base_url or model))
    if uses_openai and not model:
        errors.append(
            _error(
                "E002",
                "The OpenAI-compatible provider is selected (LLM_PROVIDER or OPENAI_BASE_URL) but LLM_MODEL is empty.",
                "Set LLM_MODEL to the model the endpoint serves, or unset OPENAI_BASE_URL for the local answerer.",
            )
        )
    if uses_openai and base_url and not _is_http_url(base_url):
        errors.append(
            _error("E003", f"OPENAI_BASE_URL={base_url!r} is not an http(s) URL.", "e.g. http://vllm:8000/v1")
        )
    if uses_openai and not base_url and not key:
        errors.append(
            _error(
                "E004",
                "LLM_MODEL is set without OPENAI_BASE_URL (api.openai.com) and without OPENAI_API_KEY.",
                "Set OPENAI_BASE_URL to your endpoint, or OPENAI_API_KEY for api.openai.com.",
            )
        )
    # Warnings only: the knowledge hub's extraction reads the same endpoint and key by default, so an endpoint
    # beside the local answerer can be meant.
    if provider == "local" and (base_url or model):
        errors.append(
            checks.Warning(
                "LLM_PROVIDER=local, but OPENAI_BASE_URL or LLM_MODEL is set: the agent will not use the model.",
                hint="Leave LLM_PROVIDER empty (or 'openai') to answer with the endpoint.",
                id="agent.W005",
            )
        )
    if not provider and key and not (base_url or model):
        errors.append(
            checks.Warning(
                "OPENAI_API_KEY is set but neither OPENAI_BASE_URL nor LLM_MODEL: the local answerer runs.",
                hint="Set LLM_MODEL (and OPENAI_BASE_URL for your own endpoint) to answer with a model.",
                id="agent.W006",
            )
        )
    if settings.LLM_TIMEOUT_SECONDS <= 0 or settings.LLM_JUDGE_TIMEOUT_SECONDS <= 0:
        errors.append(
            _error("E007", "LLM timeouts must be positive.", "LLM_TIMEOUT_SECONDS, LLM_JUDGE_TIMEOUT_SECONDS")
        )
    return errors


@checks.register(TAG)
def embeddings_configuration_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    errors = []
    base_url = settings.EMBEDDINGS_BASE_URL
    if base_url and not _is_http_url(base_url):
        errors.append(
            _error("E010", f"EMBEDDINGS_BASE_URL={base_url!r} is not an http(s) URL.", "e.g. http://tei:80/v1")
        )
    if base_url and not settings.EMBEDDINGS_MODEL:
        errors.append(
            _error("E011", "EMBEDDINGS_BASE_URL is set but EMBEDDINGS_MODEL is empty.", "Name the embedding model.")
        )
    if not base_url and settings.EMBEDDINGS_API_KEY:
        errors.append(
            _error(
                "E012",
                "EMBEDDINGS_API_KEY is set without EMBEDDINGS_BASE_URL: the local embedder would run.",
                "Set EMBEDDINGS_BASE_URL, or remove the key.",
            )
        )
    if settings.EMBEDDINGS_DIMENSION < 0 or settings.EMBEDDINGS_TIMEOUT_SECONDS <= 0:
        errors.append(
            _error(
                "E013",
                "EMBEDDINGS_DIMENSION must be 0 (learnt) or positive and EMBEDDINGS_TIMEOUT_SECONDS positive.",
                "",
            )
        )
    return errors


@checks.register(TAG)
def rerank_configuration_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    errors = []
    url = settings.RERANK_URL
    if url and not _is_http_url(url):
        errors.append(_error("E020", f"RERANK_URL={url!r} is not an http(s) URL.", "e.g. http://tei-rerank:80/rerank"))
    if not url and (settings.RERANK_API_KEY or settings.RERANK_MODEL):
        errors.append(
            _error(
                "E021",
                "RERANK_API_KEY or RERANK_MODEL is set without RERANK_URL: the local reranker would run.",
                "Set RERANK_URL, or remove them.",
            )
        )
    if settings.RERANK_TIMEOUT_SECONDS <= 0:
        errors.append(_error("E022", "RERANK_TIMEOUT_SECONDS must be positive.", ""))
    return errors


def configuration_require() -> None:
    """Raise `ImproperlyConfigured` listing every configuration error: a process must not start with them."""
    serious = [message for message in checks.run_checks(tags=[TAG]) if message.is_serious()]
    if serious:
        raise ImproperlyConfigured(
            "Incomplete model configuration:\n" + "\n".join(f"{m.id}: {m.msg} ({m.hint})" for m in serious)
        )
