"""The agent's LLM layer: one provider interface, three implementations, the rewrite and judge adapters.

- ``provider_get()`` — the configured provider (local deterministic answerer, OpenAI-compatible endpoint, or a
  scripted fake installed by a test with ``provider_override``).
- ``query_rewrite()`` — follow-up questions made into stand-alone search queries (seed 001 5.2).
- ``make_llm_judge()`` — the verification engine's optional judge.
- ``prompts`` — every Korean prompt the pipeline sends.
"""

from agent.llm.base import (
    PURPOSE_ANSWER,
    PURPOSE_JUDGE,
    PURPOSE_REWRITE,
    LlmError,
    LlmPermanentError,
    LlmProvider,
    LlmReply,
    LlmTransientError,
    ToolCallRequest,
    ToolSpec,
    provider_get,
    provider_kind,
    provider_override,
    tool_result_message,
)

__all__ = [
    "PURPOSE_ANSWER",
    "PURPOSE_JUDGE",
    "PURPOSE_REWRITE",
    "LlmError",
    "LlmPermanentError",
    "LlmProvider",
    "LlmReply",
    "LlmTransientError",
    "ToolCallRequest",
    "ToolSpec",
    "provider_get",
    "provider_kind",
    "provider_override",
    "tool_result_message",
]
