"""The LLM judge adapter: a "supported" verdict with a quote, or no evidence — never anything in between."""

import json
import threading

import pytest

from agent.llm import LlmPermanentError, LlmTransientError
from agent.llm.judge import UNSUPPORTED, make_llm_judge, verdict_from_output
from agent.llm.local import LocalAnswerer
from agent.llm.prompts import JUDGE_SYSTEM_PROMPT
from agent.llm.scripted import ScriptedProvider
from agent.verification import JudgeVerdict, VerificationSettings, rule_on_answer, verify_draft

EVIDENCE = (
    "하이패스 단말기 납품 단가는 1대당 30,000원입니다.\n결제는 월말 정산입니다.",
    "경차는 통행료의 50%가 감면됩니다.",
)
DRAFT = "하이패스 단말기 납품 단가는 3만 원입니다. 경차 감면율은 40%입니다."


def _verify(judge, *, settings=None):
    return verify_draft(
        DRAFT,
        evidence=EVIDENCE,
        known_brands=[],
        counterpart_names=["대한물산"],
        other_vendor_names=[],
        confirmed_actions=[],
        judge=judge,
        **({"settings": settings} if settings else {}),
    )


def _judge_step(verdict, quote):
    return {"content": json.dumps({"verdict": verdict, "quote": quote}, ensure_ascii=False)}


def test_without_a_judge_the_draft_has_one_percent_violation():
    """The baseline the judge works on: 3만 원 = 30,000원 is supported by code; 40% is not."""
    result = _verify(None)

    assert [(violation.kind, violation.value) for violation in result.violations] == [("percent", 40)]


def test_a_quote_that_is_not_in_the_evidence_does_not_clear():
    """The adapter passes the model's quote through unchanged; the engine's literal check then refuses a quote
    the evidence does not hold (the adapter neither repairs nor replaces it)."""
    provider = ScriptedProvider(purpose_steps={"judge": [_judge_step("supported", "경차 감면율은 40%입니다.")]})

    result = _verify(make_llm_judge(provider))

    assert [violation.value for violation in result.violations] == [40]
    (ruling,) = result.judge_rulings
    assert ruling.cleared is False
    assert ruling.detail == "quote not found in the evidence"
    assert ruling.quote == "경차 감면율은 40%입니다."


def test_the_judge_clears_a_value_when_its_quote_is_literal():
    """A judge quote that occurs in the evidence and contains the value clears it under the engine's rule."""
    evidence = ("할인율 안내: 신규 거래처는 첫 주문에 한해 10% 할인, 이후 5%입니다.",)
    provider = ScriptedProvider(
        purpose_steps={"judge": [_judge_step("supported", "신규 거래처는 첫 주문에 한해 10% 할인")]}
    )
    judge = make_llm_judge(provider)
    violation = verify_draft(
        "첫 주문은 10% 할인됩니다.",
        evidence=("할인 안내 자료",),
        known_brands=[],
        counterpart_names=[],
        other_vendor_names=[],
        confirmed_actions=[],
    ).violations[0]

    verdict = judge(violation, evidence)

    assert verdict == JudgeVerdict("supported", "신규 거래처는 첫 주문에 한해 10% 할인")
    assert rule_on_answer(violation, verdict, evidence).cleared
    (call,) = provider.calls
    assert call.purpose == "judge"
    assert call.messages[0]["content"] == JUDGE_SYSTEM_PROMPT
    assert "10%" in call.messages[1]["content"] and evidence[0] in call.messages[1]["content"]


@pytest.mark.parametrize(
    "failure",
    [LlmTransientError("timeout"), LlmPermanentError("HTTP 400"), RuntimeError("boom"), ValueError("bad")],
)
def test_any_exception_is_no_evidence(failure):
    """A failing provider — whatever the exception — gives "unsupported"; the violation stands."""
    provider = ScriptedProvider(purpose_steps={"judge": [failure]})

    result = _verify(make_llm_judge(provider))

    assert [violation.value for violation in result.violations] == [40]
    assert make_llm_judge(ScriptedProvider(purpose_steps={"judge": [failure]}))(result.violations[0], EVIDENCE) == (
        UNSUPPORTED
    )


def test_a_judge_slower_than_the_engine_deadline_leaves_the_violation():
    """A timeout counts as no evidence: the engine stops waiting at its deadline and the violation stands."""
    release = threading.Event()

    def slow(messages, tools):
        release.wait(5)
        return _judge_step("supported", "경차는 통행료의 50%가 감면됩니다.")

    provider = ScriptedProvider(purpose_steps={"judge": [slow]})
    try:
        result = _verify(make_llm_judge(provider), settings=VerificationSettings(judge_timeout_seconds=0.05))
    finally:
        release.set()

    assert [violation.value for violation in result.violations] == [40]
    assert result.judge_rulings[0].detail == "judge timed out"


@pytest.mark.parametrize(
    "output",
    [
        "네, 근거가 있습니다.",
        "",
        '{"verdict": "supported"',
        '{"verdict": "supported", "quote": ""}',
        '{"verdict": "supported", "quote": null}',
        '{"verdict": "supported", "quote": ["경차는 통행료의 50%가 감면됩니다."]}',
        '{"verdict": "partially_supported", "quote": "경차는 통행료의 50%가 감면됩니다."}',
        '{"verdict": "supported or unsupported", "quote": "경차는"}',
        '{"verdict": true, "quote": "경차는"}',
        '{"verdict": "supported", "quote": "a"} {"verdict": "unsupported", "quote": ""}',
        '{"result": "supported", "quote": "경차는"}',
        '["supported", "경차는"]',
    ],
)
def test_unparseable_ambiguous_or_other_answers_are_unsupported(output):
    """No JSON verdict, a verdict without a text quote, another verdict, or two disagreeing verdicts: no
    evidence."""
    assert verdict_from_output(output) == UNSUPPORTED


@pytest.mark.parametrize(
    "output",
    [
        '{"verdict": "supported", "quote": "경차는 통행료의 50%가 감면됩니다."}',
        '```json\n{"verdict": "supported", "quote": "경차는 통행료의 50%가 감면됩니다."}\n```',
        '<think>근거 1을 보면</think>{"verdict": "Supported", "quote": "경차는 통행료의 50%가 감면됩니다."}',
        '판정: {"verdict": "supported", "quote": "경차는 통행료의 50%가 감면됩니다."} 입니다.',
        '{"verdict": "supported", "quote": "경차는 통행료의 50%가 감면됩니다."}\n'
        '{"verdict": "supported", "quote": "경차는 통행료의 50%가 감면됩니다."}',
    ],
)
def test_a_clear_supported_verdict_is_read_from_common_wrappings(output):
    """Code fences, a think block, surrounding words or a repeated identical verdict still read as one
    "supported" verdict, with the quote exactly as written."""
    assert verdict_from_output(output) == JudgeVerdict("supported", "경차는 통행료의 50%가 감면됩니다.")


def test_the_local_provider_as_judge_never_clears():
    """Behind the local answerer the judge always says "unsupported"."""
    result = _verify(make_llm_judge(LocalAnswerer()))

    assert [violation.value for violation in result.violations] == [40]
    assert result.judge_rulings[0].detail == "judge verdict 'unsupported'"
