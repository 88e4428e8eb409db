"""Follow-up questions made into stand-alone search queries from the room's recent history (seed 001 5.2).

Code first decides whether the question may be a follow-up at all (a deictic word, a short question, or one
about time, method or reason — and some history); the provider then makes the final call with the rewrite
prompt and answers one sentence or exactly ``__NO_REWRITE__``. The local answerer applies a deterministic
rule instead of a model. Any failure keeps the original question: a rewrite is an aid, never a requirement.
"""

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from agent.llm import korean_text
from agent.llm.base import PURPOSE_REWRITE, LlmError, LlmProvider, strip_thinking
from agent.llm.prompts import NO_REWRITE, rewrite_messages

logger = logging.getLogger(__name__)

SHORT_FOLLOW_UP_MAX_CHARS = 20
# A rewrite much longer than the question has added something the vendor did not ask.
_MAX_REWRITE_CHARS = 200
_ANSWER_PREFIX_RE = re.compile(r"^(?:재작성(?:된)?\s*질문|검색어|질문|답)\s*[:：]\s*")
_QUOTES = "\"'“”‘’「」『』`"

REASON_NO_HISTORY = "no_history"
REASON_NOT_CANDIDATE = "not_follow_up_candidate"
REASON_NO_REWRITE = "model_no_rewrite"
REASON_UNCHANGED = "unchanged"
REASON_INVALID = "invalid_output"
REASON_FAILED = "provider_failed"
REASON_REWRITTEN = "rewritten"


@dataclass(frozen=True)
class RewriteResult:
    query: str  # what to search with: the rewrite, or the question itself
    rewritten: bool
    reason: str  # one of the REASON_* values, for the audit trail


def follow_up_candidate(question: str) -> bool:
    """Seed 001 5.2: a deictic word, a short question (≤ 20 characters), or a time/method/reason question."""
    text = question.strip()
    return (
        korean_text.has_deixis(text)
        or len(text) <= SHORT_FOLLOW_UP_MAX_CHARS
        or any(marker in text for marker in korean_text.TIME_METHOD_REASON_MARKERS)
    )


def query_rewrite(question: str, history: list[dict], *, provider: LlmProvider) -> RewriteResult:
    """The search query for ``question`` given the room's ``history`` (``{"role", "text", "sent_at"}`` items,
    oldest first; the question itself may be its last item)."""
    question = question.strip()
    prior = _prior_history(question, history)
    if not prior:
        return RewriteResult(question, False, REASON_NO_HISTORY)
    if not follow_up_candidate(question):
        return RewriteResult(question, False, REASON_NOT_CANDIDATE)
    try:
        reply = provider.chat(rewrite_messages(question, prior), purpose=PURPOSE_REWRITE)
    except LlmError as error:
        logger.warning("query rewrite failed, searching with the question as asked: %s", error)
        return RewriteResult(question, False, REASON_FAILED)
    return _result_from(question, reply.content)


def _prior_history(question: str, history: list[dict]) -> list[Mapping]:
    items = [
        item for item in history if item.get("role") in ("user", "assistant") and str(item.get("text") or "").strip()
    ]
    if items and items[-1].get("role") == "user" and str(items[-1].get("text")).strip() == question:
        items = items[:-1]
    return items


def _result_from(question: str, output: str) -> RewriteResult:
    text = strip_thinking(output)
    if NO_REWRITE in text:
        return RewriteResult(question, False, REASON_NO_REWRITE)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != 1:
        return RewriteResult(question, False, REASON_INVALID)
    rewritten = _ANSWER_PREFIX_RE.sub("", lines[0]).strip(_QUOTES + " ")
    if not rewritten or len(rewritten) > max(_MAX_REWRITE_CHARS, 3 * len(question)):
        return RewriteResult(question, False, REASON_INVALID)
    if " ".join(rewritten.split()) == " ".join(question.split()):
        return RewriteResult(question, False, REASON_UNCHANGED)
    return RewriteResult(rewritten, True, REASON_REWRITTEN)
