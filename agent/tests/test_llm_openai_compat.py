"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 (no mocks of the client)."""

import json
import socket

import pytest

from agent.llm.base import LlmPermanentError, LlmTransientError, ToolSpec
from agent.llm.fake_server import FakeOpenAIServer, chat_completion_body, error_body
from agent.llm.openai_compat import OpenAICompatibleProvider, _backoff_delay

SEARCH_FAQ = ToolSpec(
    name="search_faq",
    description="FAQ를 검색합니다.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def provider(server, sleeps, settings):
    settings.LLM_MODEL = "fake-model"
    settings.LLM_TIMEOUT_SECONDS = 5.0
    settings.LLM_MAX_RETRIES = 2
    settings.LLM_RETRY_BACKOFF_SECONDS = 0.5
    settings.LLM_TEMPERATURE = 0.2
    return OpenAICompatibleProvider(base_url=server.base_url, api_key="test-key", sleep=sleeps.append)


def _question():
    return [{"role": "system", "content": "규칙"}, {"role": "user", "content": "하이패스 단말기 가격은?"}]


def test_tool_calls_are_parsed_and_usage_and_latency_recorded(server, provider):
    """Tool calls come back parsed (a broken argument string is kept raw with arguments {}), tokens come
    from `usage`, and the request carries the tools in the function format with tool_choice auto."""
    server.enqueue(
        200,
        chat_completion_body(
            content="<think>검색이 필요하다</think>",
            tool_calls=[
                {"id": "call_a", "name": "search_faq", "arguments": '{"query": "하이패스 단말기 가격"}'},
                {"id": "call_b", "name": "search_faq", "arguments": '{"query": "하이패스'},
            ],
            prompt_tokens=123,
            completion_tokens=45,
        ),
    )

    reply = provider.chat(_question(), tools=[SEARCH_FAQ])

    assert reply.content == ""
    assert [call.id for call in reply.tool_calls] == ["call_a", "call_b"]
    assert reply.tool_calls[0].arguments == {"query": "하이패스 단말기 가격"}
    assert reply.tool_calls[0].arguments_valid
    assert reply.tool_calls[1].arguments == {}
    assert reply.tool_calls[1].raw_arguments == '{"query": "하이패스'
    assert not reply.tool_calls[1].arguments_valid
    assert (reply.prompt_tokens, reply.completion_tokens) == (123, 45)
    assert reply.latency_ms >= 0
    assert reply.attempts == 1
    assert (reply.provider, reply.model) == ("openai", "fake-model")

    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    body = request["body"]
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0.2
    assert body["tool_choice"] == "auto"
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "search_faq",
                "description": "FAQ를 검색합니다.",
                "parameters": SEARCH_FAQ.parameters,
            },
        }
    ]
    assert body["messages"] == _question()


def test_content_has_thinking_stripped_and_no_tools_means_no_tool_choice(server, provider):
    """`<think>…</think>` is removed from the answer; a call without tools sends neither tools nor
    tool_choice."""
    server.enqueue(200, chat_completion_body(content="<think>\n음…\n</think>\n\n납품 단가는 30,000원입니다."))

    reply = provider.chat(_question())

    assert reply.content == "납품 단가는 30,000원입니다."
    assert reply.tool_calls == []
    assert "tools" not in server.requests[0]["body"]
    assert "tool_choice" not in server.requests[0]["body"]


def test_assistant_tool_call_arguments_given_as_dicts_are_sent_as_json_strings(server, provider):
    """A conversation replayed with tool-call arguments as dicts is sent in the wire format (JSON strings)."""
    server.enqueue(200, chat_completion_body(content="답변"))
    messages = [
        *_question(),
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "function": {"name": "search_faq", "arguments": {"query": "단가"}}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "납품 단가: 30,000원"},
    ]

    provider.chat(messages, tools=[SEARCH_FAQ])

    sent = server.requests[0]["body"]["messages"][2]["tool_calls"][0]
    assert sent["type"] == "function"
    assert json.loads(sent["function"]["arguments"]) == {"query": "단가"}


def test_server_error_then_success_is_retried_once_with_backoff(server, provider, sleeps):
    """A 500 is transient: the provider waits (back-off) and tries again; the second attempt's answer is
    returned and both attempts are counted."""
    server.enqueue(500, error_body("overloaded"))
    server.enqueue(200, chat_completion_body(content="정상 응답"))

    reply = provider.chat(_question())

    assert reply.content == "정상 응답"
    assert reply.attempts == 2
    assert len(server.requests) == 2
    assert len(sleeps) == 1
    assert 0.25 <= sleeps[0] < 0.75  # first back-off: 0.5 s with jitter in [0.5, 1.5)


def test_timeout_raises_transient_error_after_all_retries(server, settings, sleeps):
    """A server slower than LLM_TIMEOUT_SECONDS times out every attempt: 1 + LLM_MAX_RETRIES attempts, then
    LlmTransientError (the task may retry it)."""
    settings.LLM_MODEL = "fake-model"
    settings.LLM_TIMEOUT_SECONDS = 0.2
    settings.LLM_MAX_RETRIES = 1
    settings.LLM_RETRY_BACKOFF_SECONDS = 0.01
    server.enqueue(200, chat_completion_body(content="늦은 응답"), delay_seconds=3)
    provider = OpenAICompatibleProvider(base_url=server.base_url, api_key="k", sleep=sleeps.append)

    with pytest.raises(LlmTransientError, match="Timeout"):
        provider.chat(_question())

    assert len(server.requests) == 2
    assert len(sleeps) == 1


def test_bad_request_is_permanent_and_not_retried(server, provider, sleeps):
    """A 400 will not get better: LlmPermanentError at once, one request, no back-off."""
    server.enqueue(400, error_body("messages: invalid role", kind="invalid_request_error"))

    with pytest.raises(LlmPermanentError, match="400"):
        provider.chat(_question())

    assert len(server.requests) == 1
    assert sleeps == []


def test_unauthorized_is_permanent(server, provider):
    """401 (bad key) is permanent."""
    server.enqueue(401, error_body("bad key", kind="invalid_api_key"))

    with pytest.raises(LlmPermanentError, match="401"):
        provider.chat(_question())
    assert len(server.requests) == 1


def test_rate_limit_is_transient_and_retried_until_the_limit(server, provider, sleeps):
    """429 is transient: 1 + LLM_MAX_RETRIES attempts with growing back-off, then LlmTransientError."""
    server.enqueue(429, error_body("slow down", kind="rate_limit_exceeded"))

    with pytest.raises(LlmTransientError, match="429"):
        provider.chat(_question())

    assert len(server.requests) == 3
    assert len(sleeps) == 2
    assert 0.25 <= sleeps[0] < 0.75 and 0.5 <= sleeps[1] < 1.5


def test_connection_refused_is_transient(settings, sleeps):
    """Nobody listening on the port is a connection error: transient."""
    settings.LLM_MODEL = "fake-model"
    settings.LLM_MAX_RETRIES = 1
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAICompatibleProvider(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", sleep=sleeps.append)

    with pytest.raises(LlmTransientError, match="Connection"):
        provider.chat(_question())
    assert len(sleeps) == 1


def test_response_without_choices_is_permanent(server, provider):
    """A 200 without choices is a bad response: permanent, not retried."""
    server.enqueue(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []})

    with pytest.raises(LlmPermanentError, match="no choices"):
        provider.chat(_question())
    assert len(server.requests) == 1


def test_judge_and_rewrite_calls_use_temperature_zero_and_a_judge_gets_one_attempt(server, provider, sleeps):
    """Classification calls ask for the most likely answer (temperature 0); a judge call is not retried,
    since the verification engine's deadline covers all judge calls of a draft."""
    server.enqueue(500, error_body("overloaded"))
    with pytest.raises(LlmTransientError):
        provider.chat(_question(), purpose="judge")
    assert len(server.requests) == 1
    assert sleeps == []
    assert server.requests[0]["body"]["temperature"] == 0

    server.enqueue(200, chat_completion_body(content="__NO_REWRITE__"))
    provider.chat(_question(), purpose="rewrite")
    assert server.requests[1]["body"]["temperature"] == 0


def test_settings_are_read_at_call_time(server, provider, settings):
    """A provider built earlier uses the model and temperature the settings hold when it is called."""
    server.enqueue(200, chat_completion_body(content="ok"))
    settings.LLM_MODEL = "other-model"
    settings.LLM_TEMPERATURE = 0.7

    provider.chat(_question())

    assert server.requests[0]["body"]["model"] == "other-model"
    assert server.requests[0]["body"]["temperature"] == 0.7


def test_missing_model_is_a_permanent_error(server, settings):
    """Without LLM_MODEL nothing is sent."""
    settings.LLM_MODEL = ""
    provider = OpenAICompatibleProvider(base_url=server.base_url, api_key="k")

    with pytest.raises(LlmPermanentError, match="LLM_MODEL"):
        provider.chat(_question())
    assert server.requests == []


@pytest.mark.parametrize(("attempt", "low", "high"), [(1, 0.5, 1.5), (2, 1.0, 3.0), (3, 2.0, 6.0)])
def test_backoff_doubles_per_attempt_with_jitter(attempt, low, high):
    """Back-off is base·2^(attempt-1) scaled by a factor in [0.5, 1.5)."""
    delays = {_backoff_delay(1.0, attempt) for _ in range(50)}
    assert all(low <= delay < high for delay in delays)
    assert len(delays) > 1
