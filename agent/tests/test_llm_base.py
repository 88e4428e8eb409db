"""The provider interface: tool specs, tool-call parsing, replies as messages, and choosing a provider."""

import threading

import pytest
from django.core.exceptions import ImproperlyConfigured

from agent.llm import (
    LlmReply,
    ToolCallRequest,
    ToolSpec,
    provider_get,
    provider_kind,
    provider_override,
    tool_result_message,
)
from agent.llm.base import strip_thinking
from agent.llm.local import LocalAnswerer
from agent.llm.openai_compat import OpenAICompatibleProvider
from agent.llm.scripted import ScriptedProvider


def test_tool_spec_is_shown_as_a_function_without_scope_or_grade():
    """The model sees name, description and argument schema only."""
    spec = ToolSpec("search_faq", "FAQ 검색", {"type": "object", "properties": {"query": {"type": "string"}}})

    shown = spec.as_openai()

    assert shown == {
        "type": "function",
        "function": {
            "name": "search_faq",
            "description": "FAQ 검색",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }


@pytest.mark.parametrize(
    ("raw", "arguments", "valid"),
    [
        ('{"query": "단가"}', {"query": "단가"}, True),
        ("", {}, True),
        ("   ", {}, True),
        (None, {}, True),
        ('{"query": "단가"', {}, False),
        ('["단가"]', {}, False),
        ("42", {}, False),
        ("null", {}, False),
    ],
)
def test_tool_call_arguments_are_parsed_or_kept_raw(raw, arguments, valid):
    """A JSON object becomes the arguments; anything else gives {} with the raw text kept and an error
    recorded, so the caller can log the call and refuse it."""
    call = ToolCallRequest.from_raw(id="c1", name="search_faq", raw_arguments=raw)

    assert call.arguments == arguments
    assert call.raw_arguments == (raw or "")
    assert call.arguments_valid is valid
    assert bool(call.arguments_error) is not valid


def test_tool_call_from_a_dict_keeps_korean_readable_raw_arguments():
    """Arguments given as a dict are serialised without escaping Korean."""
    call = ToolCallRequest.from_raw(id="c1", name="search_faq", raw_arguments={"query": "하이패스"})

    assert call.raw_arguments == '{"query": "하이패스"}'
    assert call.arguments == {"query": "하이패스"}


def test_reply_becomes_the_assistant_message_with_its_tool_calls():
    """`as_message` is what goes back into the conversation before the tool results."""
    call = ToolCallRequest.from_raw(id="c1", name="search_faq", raw_arguments='{"query": "단가"}')
    reply = LlmReply(content="", tool_calls=[call], provider="scripted")

    assert reply.as_message() == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search_faq", "arguments": '{"query": "단가"}'}}
        ],
    }
    assert LlmReply(content="답변").as_message() == {"role": "assistant", "content": "답변"}
    assert tool_result_message("c1", "결과") == {"role": "tool", "tool_call_id": "c1", "content": "결과"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>a</think>답변", "답변"),
        ("<think>\n여러 줄\n</think>\n\n답변입니다.", "답변입니다."),
        ("앞 <think>x</think> 뒤", "앞  뒤"),
        ("<think>끝나지 않은 생각", ""),
        ("그대로", "그대로"),
    ],
)
def test_thinking_is_stripped(text, expected):
    """Reasoning blocks never reach the answer; an unclosed one runs to the end."""
    assert strip_thinking(text) == expected


def test_local_answerer_is_the_default_when_nothing_is_configured(settings):
    """No LLM_PROVIDER, endpoint or model: the embedded local answerer."""
    settings.LLM_PROVIDER = ""
    settings.OPENAI_BASE_URL = ""
    settings.LLM_MODEL = ""

    assert provider_kind() == "local"
    assert isinstance(provider_get(), LocalAnswerer)


@pytest.mark.parametrize(("base_url", "model"), [("http://127.0.0.1:9/v1", "qwen"), ("", "gpt-4o-mini")])
def test_an_endpoint_or_model_selects_the_openai_compatible_provider(settings, base_url, model):
    """OPENAI_BASE_URL or LLM_MODEL set (and LLM_PROVIDER empty): the OpenAI-compatible provider."""
    settings.LLM_PROVIDER = ""
    settings.OPENAI_BASE_URL = base_url
    settings.LLM_MODEL = model

    assert provider_kind() == "openai"
    assert isinstance(provider_get(), OpenAICompatibleProvider)


def test_explicit_local_wins_over_a_configured_endpoint(settings):
    """LLM_PROVIDER=local keeps the local answerer even when an endpoint is configured."""
    settings.LLM_PROVIDER = "local"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_MODEL = "qwen"

    assert isinstance(provider_get(), LocalAnswerer)


def test_openai_without_a_model_is_a_configuration_error(settings):
    """The OpenAI-compatible provider needs LLM_MODEL; there is no default model."""
    settings.LLM_PROVIDER = "openai"
    settings.LLM_MODEL = ""

    with pytest.raises(ImproperlyConfigured, match="LLM_MODEL"):
        provider_get()


@pytest.mark.parametrize(("kind", "message"), [("scripted", "provider_override"), ("gpt", "Unknown")])
def test_scripted_from_settings_and_unknown_kinds_are_configuration_errors(settings, kind, message):
    """The scripted provider is installed by code, never by environment; unknown kinds are refused."""
    settings.LLM_PROVIDER = kind

    with pytest.raises(ImproperlyConfigured, match=message):
        provider_get()


def test_provider_override_applies_to_every_thread_and_is_restored(settings):
    """A test's scripted provider is what provider_get returns in any thread (e.g. a Celery worker thread)
    until the block ends; then the configured provider is back."""
    settings.LLM_PROVIDER = "local"
    scripted = ScriptedProvider([])
    seen = []

    with provider_override(scripted):
        worker = threading.Thread(target=lambda: seen.append(provider_get()))
        worker.start()
        worker.join()
        assert provider_get() is scripted

    assert seen == [scripted]
    assert isinstance(provider_get(), LocalAnswerer)


def test_nested_overrides_restore_the_outer_one():
    """Leaving an inner override returns to the outer one."""
    outer, inner = ScriptedProvider([]), ScriptedProvider([])

    with provider_override(outer):
        with provider_override(inner):
            assert provider_get() is inner
        assert provider_get() is outer
