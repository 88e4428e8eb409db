"""The provider interface of the agent's LLM layer: what the model is shown, what it answers, and errors.

Messages are in the OpenAI chat format (system / user / assistant / tool; an assistant message may carry
``tool_calls``). Every provider returns an ``LlmReply`` and raises only ``LlmTransientError`` (worth a retry:
timeouts, connection errors, 429, 5xx) or ``LlmPermanentError`` (anything a retry will not fix).
"""

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.celery import TransientError

_THINK_RE = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)

PURPOSE_ANSWER = "answer"
PURPOSE_REWRITE = "rewrite"
PURPOSE_JUDGE = "judge"


class LlmError(Exception):
    """A provider call failed."""


class LlmTransientError(LlmError, TransientError):
    """A failure a later attempt may not repeat: timeout, connection error, rate limit, server error."""


class LlmPermanentError(LlmError):
    """A failure a retry will not fix: a rejected request, bad credentials, an unusable response."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it. Scope and grade live in the tool registry and are never shown."""

    name: str
    description: str
    parameters: dict  # JSON schema of the arguments object

    def as_openai(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for. ``arguments`` is {} when ``raw_arguments`` is not a JSON object; then
    ``arguments_error`` says why, so the caller can record the call and refuse it."""

    id: str
    name: str
    arguments: dict
    raw_arguments: str
    arguments_error: str = ""

    @classmethod
    def from_raw(cls, *, id: str, name: str, raw_arguments: str | dict | None) -> "ToolCallRequest":
        if isinstance(raw_arguments, dict):
            raw = json.dumps(raw_arguments, ensure_ascii=False)
            return cls(id=id, name=name, arguments=raw_arguments, raw_arguments=raw)
        raw = raw_arguments or ""
        if not raw.strip():
            # Models send "" for a call without arguments; that is an empty object, not an error.
            return cls(id=id, name=name, arguments={}, raw_arguments=raw)
        try:
            parsed = json.loads(raw)
        except ValueError as error:
            return cls(id=id, name=name, arguments={}, raw_arguments=raw, arguments_error=f"invalid JSON: {error}")
        if not isinstance(parsed, dict):
            return cls(
                id=id,
                name=name,
                arguments={},
                raw_arguments=raw,
                arguments_error=f"arguments must be a JSON object, got {type(parsed).__name__}",
            )
        return cls(id=id, name=name, arguments=parsed, raw_arguments=raw)

    @property
    def arguments_valid(self) -> bool:
        return not self.arguments_error

    def as_openai(self) -> dict:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.raw_arguments}}


@dataclass(frozen=True)
class LlmReply:
    content: str
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0  # the whole call, retries and back-off included
    model: str = ""
    provider: str = ""
    attempts: int = 1

    def as_message(self) -> dict:
        """The assistant message to append to the conversation before the tool results."""
        message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.as_openai() for call in self.tool_calls]
        return message


def strip_thinking(text: str) -> str:
    """``text`` without ``<think>…</think>`` blocks (an unclosed one runs to the end), trimmed."""
    return _THINK_RE.sub("", text or "").strip()


def tool_result_message(tool_call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": tool_call_id, "content": content}


@runtime_checkable
class LlmProvider(Protocol):
    name: str

    def chat(
        self, messages: list[dict], *, tools: list[ToolSpec] | None = None, purpose: str = PURPOSE_ANSWER
    ) -> LlmReply: ...


# --- choosing a provider ---

PROVIDER_LOCAL = "local"
PROVIDER_OPENAI = "openai"
PROVIDER_SCRIPTED = "scripted"

_override_lock = threading.Lock()
_override: LlmProvider | None = None


def provider_kind() -> str:
    """The configured provider: LLM_PROVIDER, or "openai" when an endpoint or model is set, else "local"."""
    kind = (settings.LLM_PROVIDER or "").strip().lower()
    if kind:
        return kind
    return PROVIDER_OPENAI if settings.OPENAI_BASE_URL or settings.LLM_MODEL else PROVIDER_LOCAL


def provider_get() -> LlmProvider:
    """The provider to use now, chosen by the settings at call time (a test's override wins)."""
    with _override_lock:
        if _override is not None:
            return _override
    kind = provider_kind()
    if kind == PROVIDER_LOCAL:
        from agent.llm.local import LocalAnswerer

        return LocalAnswerer()
    if kind == PROVIDER_OPENAI:
        from agent.llm.openai_compat import OpenAICompatibleProvider

        if not settings.LLM_MODEL:
            raise ImproperlyConfigured("LLM_MODEL must be set for the OpenAI-compatible provider.")
        return OpenAICompatibleProvider()
    if kind == PROVIDER_SCRIPTED:
        raise ImproperlyConfigured(
            "LLM_PROVIDER=scripted is for tests and is configured by code: wrap the run in provider_override()."
        )
    raise ImproperlyConfigured(f"Unknown LLM_PROVIDER {kind!r}: use 'local' or 'openai'.")


@contextmanager
def provider_override(provider: LlmProvider) -> Iterator[LlmProvider]:
    """Make ``provider_get()`` return ``provider`` in every thread of this process (tests, scripted runs)."""
    global _override
    with _override_lock:
        previous, _override = _override, provider
    try:
        yield provider
    finally:
        with _override_lock:
            _override = previous
