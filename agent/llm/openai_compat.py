"""Any OpenAI-compatible chat-completions endpoint with tool calling (vLLM, Ollama, LiteLLM, OpenAI …).

The openai client's own retries are off: this module retries transient failures itself, with exponential
back-off and jitter, so every attempt is counted and the back-off follows our settings.
"""

import json
import random
import threading
import time
from collections.abc import Callable

import openai
from django.conf import settings

from agent.llm.base import (
    PURPOSE_JUDGE,
    PURPOSE_REWRITE,
    LlmPermanentError,
    LlmReply,
    LlmTransientError,
    ToolCallRequest,
    ToolSpec,
    strip_thinking,
)

# Statuses a later attempt may not see again: request timeout, rate limit, server errors.
_TRANSIENT_STATUSES = frozenset({408, 429})
# Local servers (vLLM, Ollama) accept any key, the openai client refuses none.
_PLACEHOLDER_API_KEY = "not-needed"
# Classification calls (is this a follow-up? is this value supported?) want the most likely answer.
_DETERMINISTIC_PURPOSES = frozenset({PURPOSE_REWRITE, PURPOSE_JUDGE})

_clients_lock = threading.Lock()
_clients: dict[tuple[str, str], openai.OpenAI] = {}


def _client_for(base_url: str, api_key: str) -> openai.OpenAI:
    # One client per endpoint and key so connections are reused; the timeout is given per request.
    key = (base_url, api_key)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = openai.OpenAI(
                base_url=base_url or None, api_key=api_key or _PLACEHOLDER_API_KEY, max_retries=0
            )
        return client


class OpenAICompatibleProvider:
    """``chat`` against the configured endpoint. Constructor arguments override the settings (tests, the
    benchmark); whatever is not given is read from the settings on every call."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        timeout_seconds: float | None = None,
        max_retries: int | None = None,
        retry_backoff_seconds: float | None = None,
        temperature: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self._base_url = base_url
        self._api_key = api_key
        self._model = model
        self._timeout_seconds = timeout_seconds
        self._max_retries = max_retries
        self._retry_backoff_seconds = retry_backoff_seconds
        self._temperature = temperature
        self._sleep = sleep

    def chat(self, messages: list[dict], *, tools: list[ToolSpec] | None = None, purpose: str = "answer") -> LlmReply:
        model = self._model if self._model is not None else settings.LLM_MODEL
        timeout = self._timeout_seconds if self._timeout_seconds is not None else settings.LLM_TIMEOUT_SECONDS
        max_retries = self._max_retries if self._max_retries is not None else settings.LLM_MAX_RETRIES
        backoff = (
            self._retry_backoff_seconds
            if self._retry_backoff_seconds is not None
            else settings.LLM_RETRY_BACKOFF_SECONDS
        )
        temperature = self._temperature if self._temperature is not None else settings.LLM_TEMPERATURE
        if purpose in _DETERMINISTIC_PURPOSES:
            temperature = 0.0
        if purpose == PURPOSE_JUDGE:
            # The verification engine gives all judge calls of a draft one deadline; a retry past it is wasted.
            timeout = min(timeout, settings.LLM_JUDGE_TIMEOUT_SECONDS)
            max_retries = 0
        if not model:
            raise LlmPermanentError("LLM_MODEL is not set")

        client = _client_for(
            self._base_url if self._base_url is not None else settings.OPENAI_BASE_URL,
            self._api_key if self._api_key is not None else settings.OPENAI_API_KEY,
        )
        request = {
            "model": model,
            "messages": [_wire_message(message) for message in messages],
            "temperature": temperature,
            "timeout": timeout,
        }
        if tools:
            request["tools"] = [tool.as_openai() for tool in tools]
            request["tool_choice"] = "auto"

        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                response = client.chat.completions.create(**request)
                break
            except openai.OpenAIError as error:
                mapped = _map_error(error)
                if isinstance(mapped, LlmTransientError) and attempt <= max_retries:
                    self._sleep(_backoff_delay(backoff, attempt))
                    continue
                raise mapped from error
        latency_ms = round((time.monotonic() - started) * 1000)
        return _reply_from(response, model=model, latency_ms=latency_ms, attempts=attempt, provider=self.name)


def _backoff_delay(base_seconds: float, attempt: int) -> float:
    """Exponential back-off with jitter: base·2^(attempt-1), scaled by a random factor in [0.5, 1.5)."""
    return base_seconds * (2 ** (attempt - 1)) * (0.5 + random.random())


def _map_error(error: openai.OpenAIError) -> LlmTransientError | LlmPermanentError:
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return LlmTransientError(f"{type(error).__name__}: {error}")
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        message = f"HTTP {status}: {error.message}"
        if status in _TRANSIENT_STATUSES or status >= 500:
            return LlmTransientError(message)
        return LlmPermanentError(message)
    return LlmPermanentError(f"{type(error).__name__}: {error}")


def _wire_message(message: dict) -> dict:
    """The message as the endpoint expects it: tool-call arguments as JSON strings."""
    calls = message.get("tool_calls")
    if not calls:
        return message
    wired = []
    for call in calls:
        function = call.get("function", {})
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            function = {**function, "arguments": json.dumps(arguments, ensure_ascii=False)}
        wired.append({**call, "type": call.get("type", "function"), "function": function})
    return {**message, "tool_calls": wired}


def _reply_from(response, *, model: str, latency_ms: int, attempts: int, provider: str) -> LlmReply:
    choices = getattr(response, "choices", None)
    if not choices:
        raise LlmPermanentError("the response has no choices")
    message = choices[0].message
    if message is None:
        raise LlmPermanentError("the response has no message")
    tool_calls = []
    for index, call in enumerate(message.tool_calls or []):
        function = getattr(call, "function", None)
        if function is None or not function.name:
            raise LlmPermanentError(f"tool call {index} has no function name")
        tool_calls.append(
            ToolCallRequest.from_raw(
                id=call.id or f"call_{index}", name=function.name, raw_arguments=function.arguments
            )
        )
    usage = getattr(response, "usage", None)
    return LlmReply(
        content=strip_thinking(message.content or ""),
        tool_calls=tool_calls,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        latency_ms=latency_ms,
        model=getattr(response, "model", "") or model,
        provider=provider,
        attempts=attempts,
    )
