"""The verification engine's optional judge, backed by an LLM provider.

The engine calls ``judge(violation, evidence)`` for the value and brand violations its table of kinds marks
judgeable and clears one only on a "supported" verdict whose quote occurs literally in the evidence and in which
its own parser reads the same value (that check is the engine's, in ``rule_on_answer``). Here every failure —
an exception, a timeout, output that is not one JSON verdict, anything but "supported" with a string quote —
becomes "unsupported": no evidence.
"""

import json
import logging
import re
from collections.abc import Callable

from agent.llm.base import PURPOSE_JUDGE, LlmProvider, strip_thinking
from agent.llm.prompts import judge_messages
from agent.verification import JudgeVerdict, Violation

logger = logging.getLogger(__name__)

SUPPORTED = "supported"
UNSUPPORTED = JudgeVerdict(verdict="unsupported", quote="")
_CODE_FENCE_RE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def make_llm_judge(provider: LlmProvider) -> Callable[[Violation, tuple[str, ...]], JudgeVerdict]:
    """A judge for ``verify_draft(judge=...)`` that asks ``provider`` (purpose "judge")."""

    def judge(violation: Violation, evidence: tuple[str, ...]) -> JudgeVerdict:
        try:
            reply = provider.chat(judge_messages(violation, evidence), purpose=PURPOSE_JUDGE)
        except Exception as error:  # failure counts as no evidence, whatever it is
            logger.warning("judge call failed, the violation stands: %s: %s", type(error).__name__, error)
            return UNSUPPORTED
        return verdict_from_output(reply.content)

    return judge


def verdict_from_output(output: str) -> JudgeVerdict:
    """The verdict in a judge's output: "supported" with its quote exactly as written, or ``UNSUPPORTED`` when
    the output holds no JSON verdict, several disagreeing ones, another verdict or a quote that is not text."""
    objects = _json_objects(_CODE_FENCE_RE.sub("", strip_thinking(output)))
    verdicts = []
    for obj in objects:
        pair = (obj.get("verdict"), obj.get("quote"))
        if "verdict" in obj and pair not in verdicts:
            verdicts.append(pair)
    if len(verdicts) != 1:
        return UNSUPPORTED
    ((verdict, quote),) = verdicts
    if not isinstance(verdict, str) or verdict.strip().lower() != SUPPORTED:
        return UNSUPPORTED
    if not isinstance(quote, str) or not quote.strip():
        return UNSUPPORTED
    return JudgeVerdict(verdict=SUPPORTED, quote=quote)


def _json_objects(text: str) -> list[dict]:
    """Every JSON object in ``text`` that is not nested in another one."""
    decoder = json.JSONDecoder()
    objects = []
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            objects.append(value)
        index = text.find("{", end)
    return objects
