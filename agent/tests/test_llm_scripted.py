"""The scripted provider plays back replies, raises scripted failures and records every call."""

import json

import pytest

from agent.llm import LlmError, LlmReply, LlmTransientError, ToolSpec
from agent.llm.scripted import ScriptedProvider, ScriptExhausted

SEARCH = ToolSpec("search_faq", "FAQ 검색", {"type": "object", "properties": {"query": {"type": "string"}}})


def test_plays_back_dicts_replies_and_callables_in_order():
    """Steps are replayed one per call: dict drafts with tool calls, LlmReply objects as they are, and
    callables that see the conversation."""
    provider = ScriptedProvider(
        [
            {"tool_calls": [{"name": "search_faq", "arguments": {"query": "단가"}}], "prompt_tokens": 5},
            {"tool_calls": [{"id": "x1", "name": "search_faq", "arguments": "{broken"}]},
            LlmReply(content="그대로", provider="other"),
            lambda messages, tools: {"content": f"{len(messages)}개 메시지, 도구 {tools[0].name}"},
        ]
    )
    messages = [{"role": "user", "content": "단가 알려줘"}]

    first = provider.chat(messages, tools=[SEARCH])
    second = provider.chat(messages, tools=[SEARCH])
    third = provider.chat(messages)
    fourth = provider.chat(messages, tools=[SEARCH])

    assert first.tool_calls[0].name == "search_faq"
    assert first.tool_calls[0].arguments == {"query": "단가"}
    assert first.tool_calls[0].id == "scripted_call_1_1"
    assert (first.prompt_tokens, first.provider) == (5, "scripted")
    assert second.tool_calls[0].id == "x1"
    assert second.tool_calls[0].arguments == {} and not second.tool_calls[0].arguments_valid
    assert third.content == "그대로" and third.provider == "other"
    assert fourth.content == "1개 메시지, 도구 search_faq"
    assert provider.remaining == 0


def test_scripted_exceptions_are_raised():
    """An exception step is the provider's failure (instances and classes)."""
    provider = ScriptedProvider([LlmTransientError("timeout"), RuntimeError, {"content": "다음"}])

    with pytest.raises(LlmTransientError, match="timeout"):
        provider.chat([])
    with pytest.raises(RuntimeError):
        provider.chat([])
    assert provider.chat([]).content == "다음"


def test_running_out_of_steps_is_a_clear_error_that_is_not_a_provider_failure():
    """A script that is too short fails loudly, and not as an LlmError a pipeline would absorb."""
    provider = ScriptedProvider([{"content": "하나"}])
    provider.chat([{"role": "user", "content": "첫 질문"}])

    with pytest.raises(ScriptExhausted, match=r"1 step\(s\) and call 2") as caught:
        provider.chat([{"role": "user", "content": "둘째 질문"}])

    assert not isinstance(caught.value, LlmError)
    assert "둘째 질문" in str(caught.value)


def test_every_call_is_recorded_as_it_was_at_the_time():
    """Calls keep a copy of the messages, the tools and the purpose; later changes to the caller's list do not
    alter the record."""
    provider = ScriptedProvider([{"content": "a"}, {"content": "b"}])
    messages = [{"role": "user", "content": "질문"}]

    provider.chat(messages, tools=[SEARCH])
    messages.append({"role": "assistant", "content": "a"})
    provider.chat(messages, purpose="rewrite")

    assert [len(call.messages) for call in provider.calls] == [1, 2]
    assert [call.purpose for call in provider.calls] == ["answer", "rewrite"]
    assert provider.calls[0].tools == [SEARCH] and provider.calls[1].tools == []


def test_prompt_text_covers_messages_tool_arguments_and_tool_descriptions():
    """`prompt_text()` is everything the model was shown, so a test can assert a name never reached it."""
    provider = ScriptedProvider([{"content": "a"}])
    provider.chat(
        [
            {"role": "system", "content": "규칙"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c", "function": {"name": "search_faq", "arguments": '{"query": "가온상사"}'}}],
            },
            {"role": "tool", "tool_call_id": "c", "content": "[다른 벤더]의 단가"},
        ],
        tools=[SEARCH],
    )

    text = provider.prompt_text()

    assert "규칙" in text and "[다른 벤더]의 단가" in text and "FAQ 검색" in text
    assert "가온상사" in text
    assert "대한물산" not in text


def test_purpose_scripts_are_consumed_separately():
    """Judge and rewrite calls can have their own scripts, so an answer script is not shifted by them."""
    provider = ScriptedProvider(
        [{"content": "답변 1"}, {"content": "답변 2"}],
        purpose_steps={"judge": ['{"verdict": "unsupported"}'], "rewrite": [{"content": "하이패스 단말기 얼마야?"}]},
    )

    assert provider.chat([], purpose="rewrite").content == "하이패스 단말기 얼마야?"
    assert provider.chat([]).content == "답변 1"
    with pytest.raises(TypeError, match="not a reply"):
        provider.chat([], purpose="judge")  # a bare string is not a step
    assert provider.chat([], purpose="answer").content == "답변 2"
    with pytest.raises(ScriptExhausted, match="'judge' script"):
        provider.chat([], purpose="judge")


def test_unscripted_rewrite_and_judge_calls_get_the_safe_answers():
    """Without their own scripts, a rewrite call keeps the question and a judge call finds no evidence; the
    answer script is untouched and the calls are still recorded."""
    provider = ScriptedProvider([{"content": "답변"}])

    assert provider.chat([], purpose="rewrite").content == "__NO_REWRITE__"
    assert json.loads(provider.chat([], purpose="judge").content) == {"verdict": "unsupported", "quote": ""}
    assert provider.chat([]).content == "답변"
    assert [call.purpose for call in provider.calls] == ["rewrite", "judge", "answer"]
