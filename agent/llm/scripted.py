"""A provider for tests that plays back a script and records every call.

Each step is one of:
- a ``LlmReply``;
- a dict like ``{"content": "...", "tool_calls": [{"name": "search_faq", "arguments": {"query": "..."}}]}``
  (``arguments`` may be a dict or a raw string; ``id`` is optional);
- a callable ``(messages, tools) -> LlmReply | dict`` for replies that depend on the conversation;
- an exception instance or class, raised as the provider's failure (e.g. ``LlmTransientError("timeout")``).

``purpose_steps`` gives separate scripts per purpose (e.g. ``{"judge": [...], "rewrite": [...]}``). Without
one, a "rewrite" call gets ``__NO_REWRITE__`` and a "judge" call gets ``{"verdict": "unsupported"}`` (the
safe answers: no rewrite, no evidence), so an answer script is never shifted by them; every other call takes
the main ``steps``. All calls are recorded. Running out of steps raises ``ScriptExhausted``, which is not an
``LlmError``, so a test never mistakes a script that is too short for a provider failure.
"""

import copy
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from agent.llm.base import PURPOSE_JUDGE, PURPOSE_REWRITE, LlmReply, ToolCallRequest, ToolSpec
from agent.llm.prompts import NO_REWRITE

Step = LlmReply | Mapping | Callable | BaseException | type[BaseException]

# Replies to unscripted rewrite and judge calls: keep the question, count the value as unsupported.
_UNSCRIPTED_REPLIES = {
    PURPOSE_REWRITE: NO_REWRITE,
    PURPOSE_JUDGE: json.dumps({"verdict": "unsupported", "quote": ""}),
}


class ScriptExhausted(RuntimeError):
    """The provider was called more often than the script has steps."""


@dataclass(frozen=True)
class ScriptedCall:
    messages: list[dict]
    tools: list[ToolSpec]
    purpose: str

    def text(self) -> str:
        """Everything this call showed the model, as one string: message contents, tool-call arguments, tool
        names, descriptions and schemas."""
        parts = []
        for message in self.messages:
            parts.append(str(message.get("content") or ""))
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                parts.extend([str(function.get("name", "")), str(function.get("arguments", ""))])
        for tool in self.tools:
            parts.extend([tool.name, tool.description, json.dumps(tool.parameters, ensure_ascii=False)])
        return "\n".join(parts)


class ScriptedProvider:
    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        purpose_steps: Mapping[str, Iterable[Step]] | None = None,
        name: str = "scripted",
        model: str = "scripted",
    ):
        self.name = name
        self.model = model
        self._steps = {None: list(steps)}
        for purpose, purpose_script in (purpose_steps or {}).items():
            self._steps[purpose] = list(purpose_script)
        self._positions = dict.fromkeys(self._steps, 0)
        self._lock = threading.Lock()
        self.calls: list[ScriptedCall] = []

    def chat(self, messages: list[dict], *, tools: list[ToolSpec] | None = None, purpose: str = "answer") -> LlmReply:
        script_key = purpose if purpose in self._steps else None
        with self._lock:
            self.calls.append(ScriptedCall(copy.deepcopy(messages), list(tools or []), purpose))
            if script_key is None and purpose in _UNSCRIPTED_REPLIES:
                return LlmReply(content=_UNSCRIPTED_REPLIES[purpose], model=self.model, provider=self.name)
            position = self._positions[script_key]
            script = self._steps[script_key]
            if position >= len(script):
                label = f"the {purpose!r} script" if script_key else "the script"
                raise ScriptExhausted(
                    f"ScriptedProvider: {label} has {len(script)} step(s) and call {position + 1} "
                    f"(purpose {purpose!r}) asked for another; last message: {_last_content(messages)!r}"
                )
            self._positions[script_key] = position + 1
            step = script[position]
        if isinstance(step, BaseException) or (isinstance(step, type) and issubclass(step, BaseException)):
            raise step
        if callable(step) and not isinstance(step, LlmReply):
            step = step(messages, list(tools or []))
        return self._reply(step, position)

    @property
    def remaining(self) -> int:
        """Steps not played yet, over all scripts."""
        with self._lock:
            return sum(len(script) - self._positions[key] for key, script in self._steps.items())

    def prompt_text(self) -> str:
        """Everything every call showed the model (for asserting that something never reached it)."""
        return "\n".join(call.text() for call in self.calls)

    def _reply(self, step: LlmReply | Mapping, position: int) -> LlmReply:
        if isinstance(step, LlmReply):
            return step
        if not isinstance(step, Mapping):
            raise TypeError(f"ScriptedProvider step {position + 1} is a {type(step).__name__}, not a reply")
        tool_calls = [
            call
            if isinstance(call, ToolCallRequest)
            else ToolCallRequest.from_raw(
                id=call.get("id") or f"scripted_call_{position + 1}_{index + 1}",
                name=call["name"],
                raw_arguments=call.get("arguments", {}),
            )
            for index, call in enumerate(step.get("tool_calls") or [])
        ]
        return LlmReply(
            content=step.get("content") or "",
            tool_calls=tool_calls,
            prompt_tokens=step.get("prompt_tokens", 0),
            completion_tokens=step.get("completion_tokens", 0),
            latency_ms=step.get("latency_ms", 0),
            model=self.model,
            provider=self.name,
        )


def _last_content(messages: list[dict]) -> str:
    return str(messages[-1].get("content") or "")[:200] if messages else ""
