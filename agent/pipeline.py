"""From a tagged question to a verified answer: tool loop, forced retrieval, verification and rewrite rounds.

`answer_compose` is the whole pipeline without persistence — the Celery task and the dry-run command share it.
Everything the model sees is masked (question, history, evidence): no other vendor's name reaches a prompt.
Code, not the model, decides what survives: each draft is verified against the evidence of this turn, violations
are sent back with the reasons and fresh evidence for a rewrite, and what still fails after the last round is
removed. Follow-up questions back to the vendor and sentences handing the vendor to a person are removed too
(the bot never asks back and never hands off). An irreversible tool the model calls is only recorded here as an
action request; it runs after verification (agent.services), and what happened is reported by code.
"""

import datetime
import json
import re
import time
from dataclasses import asdict, dataclass, field

from django.conf import settings

from agent.answer_sources import sentence_sources
from agent.handoff import HANDOFF_REASON, remove_handoffs
from agent.knowledge.masking import mask, vendor_masker
from agent.knowledge.reconcile import evidence_reconcile
from agent.knowledge.types import EvidenceItem
from agent.llm import prompts
from agent.llm.base import PURPOSE_ANSWER, LlmProvider, LlmReply, tool_result_message
from agent.llm.judge import make_llm_judge
from agent.llm.rewrite import query_rewrite
from agent.tools import ToolContext, ToolExecution, tool_execute, tool_get, tools_offered
from agent.tools.registry import ToolResult
from agent.tools.retrieval import evidence_text
from agent.verification import Research, kind_info, split_sentences, verify_draft
from agent.verification.other_vendors import asks_about_masked_vendor
from agent.verification.sentences import text_without
from conversations.models import Room

RETRIEVAL_TOOLS = ("search_records", "search_faq", "search_hub")
ASKS_BACK_REASON = "되묻는 문장"
_NOT_INFORMATIONAL = re.compile(r"^(안녕|감사|고맙|수고|반갑|ㅎㅎ|ㅋㅋ|넵|네|예|좋아요|확인했습니다)")
# A sentence that asks the vendor something back. Questions are the vendor's job here, not the bot's.
_ASKS_BACK = re.compile(
    r"(\?|？|까요\s*$|나요\s*$|습니까\s*$|주시겠어요|주실\s*수\s*있|알려\s*주시면|말씀해\s*주시면|확인해\s*주시면|"
    r"남겨\s*주시면|보내\s*주시면)"
)


@dataclass
class QuestionContext:
    question_id: int | None
    question_text: str
    vendor: object  # vendors.models.Vendor
    room: object | None  # conversations.models.Room; None in a dry run by room name
    room_kind: str
    history: list[dict] = field(default_factory=list)  # [{"role", "text", "sent_at"}], oldest first, unmasked
    asked_on: datetime.date | None = None  # the question's date (dated evidence in force then); None: today


@dataclass
class RoundTrace:
    number: int
    draft: str
    violations: list[dict]
    removed: list[dict]
    clean_text: str


@dataclass
class ToolCallTrace:
    round: int
    name: str
    arguments: dict
    allowed: bool
    blocked_reason: str
    forced: bool
    duration_ms: int
    result_summary: str
    error: str
    evidence_count: int = 0


@dataclass
class AnswerTrace:
    outcome: str = ""
    outcome_reason: str = ""
    final_text: str = ""
    search_query: str = ""
    query_rewritten: bool = False
    history: list[dict] = field(default_factory=list)
    tools_offered: list[str] = field(default_factory=list)
    evidence: list[tuple[int, EvidenceItem]] = field(default_factory=list)
    rounds: list[RoundTrace] = field(default_factory=list)
    tool_calls: list[ToolCallTrace] = field(default_factory=list)
    confirmed_actions: list[str] = field(default_factory=list)
    # Irreversible actions the model asked for, validated and recorded — none performed here (agent.actions).
    action_requests: list[dict] = field(default_factory=list)
    action_asked: bool = False  # the model called an irreversible tool (even one refused or invalid)
    reconciled: list[dict] = field(default_factory=list)  # statements not shown: another source's value won
    handoff_removed: bool = False  # a sentence handing the vendor to a person was removed: staff should look
    provider: str = ""
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0
    stage_ms: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        data = asdict(self)
        data["evidence"] = [{"round": round_, **item.as_dict()} for round_, item in self.evidence]
        return data


class _Composer:
    def __init__(self, context: QuestionContext, provider: LlmProvider):
        self.context = context
        self.provider = provider
        self.trace = AnswerTrace(provider=provider.name)
        self.masker = vendor_masker()
        if context.room_kind == Room.Kind.INTERNAL:  # staff see brands; other vendors' names stay masked
            self.masker = self.masker.without_brand_masking()
        self.tool_context = ToolContext(
            question_id=context.question_id,
            vendor=context.vendor,
            room=context.room,
            room_kind=context.room_kind,
            dry_run=context.room is None,
            confirmed_actions=self.trace.confirmed_actions,
            masker=self.masker,
            asked_on=context.asked_on,
        )
        self.messages: list[dict] = []
        self._seen_references: set[str] = set()
        self._forced_ids = 0

    # --- stages -------------------------------------------------------------------------------------------

    def compose(self) -> AnswerTrace:
        question = self._masked_own_words(self.context.question_text)
        history = [
            {
                **item,
                "text": self._masked_own_words(item["text"]) if item["role"] == "user" else self._masked(item["text"]),
            }
            for item in self.context.history
        ]
        self.trace.history = history
        if self.context.room_kind != Room.Kind.INTERNAL and asks_about_masked_vendor(question):
            # Decided here, before any model: whatever it would write, from whichever evidence, is no answer.
            self.trace.outcome = "no_evidence"
            self.trace.outcome_reason = "다른 협력사에 관한 질문이라 자료를 찾지 않고 안내 문구로 답했습니다."
            self.trace.final_text = prompts.other_vendor_answer()
            return self.trace
        with self._stage("rewrite"):
            rewrite = query_rewrite(question, history, provider=self.provider)
        self.trace.search_query = rewrite.query
        self.trace.query_rewritten = rewrite.rewritten

        offered = tools_offered(self.tool_context)
        self.trace.tools_offered = [tool.name for tool in offered]
        self.messages = [
            {"role": "system", "content": prompts.answer_system_prompt(vendor_name=self.context.vendor.name)},
            *prompts.history_messages(history),
            {"role": "user", "content": prompts.question_message(question, search_query=rewrite.query)},
        ]
        with self._stage("tool_loop"):
            draft = self._tool_loop([tool.spec() for tool in offered])
        if not self._retrieved() and is_informational(question):
            with self._stage("forced_retrieval"):
                self._retrieve(rewrite.query, round_=0)
                draft = self._chat_text()
        if not self.trace.evidence:
            self.trace.outcome = "no_evidence"
            self.trace.outcome_reason = "근거가 되는 검색 결과가 없어 안내 문구로 답했습니다."
            self.trace.final_text = prompts.guidance_answer()
            return self.trace
        if not draft.strip():
            with self._stage("finalize_if_empty"):
                self.messages.append({"role": "user", "content": prompts.FINALIZE_IF_EMPTY})
                draft = self._chat_text()
        if not draft.strip():
            # Evidence was found, but nothing in it answers: the guidance answer, never a near answer.
            self.trace.outcome = "no_evidence"
            self.trace.outcome_reason = "근거에서 질문에 답하는 문장을 찾지 못해 안내 문구로 답했습니다."
            self.trace.final_text = prompts.guidance_answer()
            return self.trace
        with self._stage("verification"):
            final = self._verify_and_rewrite(draft)
        if not final:
            self.trace.outcome = "held"
            self.trace.outcome_reason = "검증을 통과한 문장이 남지 않아 보류했습니다."
            return self.trace
        self.trace.outcome = "answered"
        self.trace.final_text = final + self._references(final)
        return self.trace

    def _tool_loop(self, specs) -> str:
        for _ in range(settings.AGENT_MAX_TOOL_ROUNDS):
            reply = self._chat(tools=specs)
            if not reply.tool_calls:
                return reply.content
            self.messages.append(self._masked_message(reply.as_message()))
            executions = []
            for call in reply.tool_calls:
                arguments = call.raw_arguments if call.raw_arguments else json.dumps(call.arguments)
                executions.append(tool_execute(self.tool_context, call.name, self._masked(arguments)))
            self._reconcile(executions)
            for call, execution in zip(reply.tool_calls, executions, strict=True):
                self._record(execution, round_=0, forced=False)
                self.messages.append(tool_result_message(call.id, execution.model_text))
        return ""

    def _reconcile(self, executions: list[ToolExecution]) -> None:
        """Two values for one subject among the searches of one round: the losing statement is taken out of its
        tool result before the model reads it (agent.knowledge.reconcile)."""
        searched = [e for e in executions if e.name in RETRIEVAL_TOOLS and e.result and e.result.evidence]
        kept, removed = evidence_reconcile([item for e in searched for item in e.result.evidence])
        if not removed:
            return
        self.trace.reconciled.extend(removed)
        kept_by_reference = {item.reference: item for item in kept}
        for execution in searched:
            items = [
                kept_by_reference[i.reference] for i in execution.result.evidence if i.reference in kept_by_reference
            ]
            execution.result = ToolResult(text=evidence_text(items), evidence=items)

    def _verify_and_rewrite(self, draft: str) -> str:
        judge = make_llm_judge(self.provider) if self.provider.name != "local" else None
        names = verification_names(self.context.vendor, internal=self.context.room_kind == Room.Kind.INTERNAL)
        for number in range(settings.AGENT_VERIFY_ROUNDS + 1):
            evidence = [item.text for _, item in self.trace.evidence]
            result = verify_draft(
                draft,
                evidence=evidence,
                record_evidence=[item.text for _, item in self.trace.evidence if item.source_kind == "record"],
                known_brands=names.brands,
                counterpart_names=names.counterpart,
                other_vendor_names=names.other_vendors,
                confirmed_actions=self.trace.confirmed_actions,
                judge=judge,
                question=self.context.question_text,
                counterpart_brands=names.counterpart_brands,
            )
            clean, asked_back = remove_questions_back(result.clean_text)
            clean, handed_off = remove_handoffs(clean, evidence=evidence)
            if handed_off:
                self.trace.handoff_removed = True
            self.trace.rounds.append(
                RoundTrace(
                    number=number,
                    draft=draft,
                    violations=[violation.as_dict() for violation in result.violations],
                    removed=[{"text": text, "reason": ASKS_BACK_REASON} for text in asked_back]
                    + [{"text": text, "reason": HANDOFF_REASON} for text in handed_off],
                    clean_text=clean,
                )
            )
            if result.ok and not asked_back and not handed_off:
                return draft.strip()
            if number == settings.AGENT_VERIFY_ROUNDS:
                return clean
            self._retrieve(_research_query(self.trace.search_query, result.violations), round_=number + 1)
            self.messages.append(self._masked_message({"role": "assistant", "content": draft}))
            self.messages.append(
                self._masked_message(
                    prompts.violation_feedback_message(result.violations, asked_back=asked_back, handed_off=handed_off)
                )
            )
            draft = self._chat_text() or draft
        return ""

    # --- helpers ------------------------------------------------------------------------------------------

    def _chat(self, *, tools=None) -> LlmReply:
        reply = self.provider.chat(self.messages, tools=tools, purpose=PURPOSE_ANSWER)
        self.trace.llm_calls += 1
        self.trace.prompt_tokens += reply.prompt_tokens
        self.trace.completion_tokens += reply.completion_tokens
        self.trace.model = reply.model or self.trace.model
        return reply

    def _chat_text(self) -> str:
        return self._chat(tools=None).content.strip()

    def _retrieve(self, query: str, *, round_: int) -> None:
        """Run the retrieval tools the room may use, as if the model had called them, and show the results."""
        offered = set(self.trace.tools_offered)
        calls = []
        for name in RETRIEVAL_TOOLS:
            if name not in offered:
                continue
            self._forced_ids += 1
            call_id = f"forced-{self._forced_ids}"
            execution = tool_execute(self.tool_context, name, {"query": query})
            calls.append((call_id, name, execution))
        if not calls:
            return
        self._reconcile([execution for _, _, execution in calls])
        for _, _, execution in calls:
            self._record(execution, round_=round_, forced=True)
        self.messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps({"query": query}, ensure_ascii=False)},
                    }
                    for call_id, name, _ in calls
                ],
            }
        )
        for call_id, _, execution in calls:
            self.messages.append(tool_result_message(call_id, execution.model_text))

    def _record(self, execution: ToolExecution, *, round_: int, forced: bool) -> None:
        result = execution.result
        self.trace.tool_calls.append(
            ToolCallTrace(
                round=round_,
                name=execution.name,
                arguments=execution.arguments,
                allowed=execution.allowed,
                blocked_reason=execution.blocked_reason,
                forced=forced,
                duration_ms=execution.duration_ms,
                result_summary=(result.text[:500] if result else ""),
                error=execution.error,
                evidence_count=len(result.evidence) if result else 0,
            )
        )
        for item in result.evidence if result else []:
            if item.reference not in self._seen_references:
                self._seen_references.add(item.reference)
                self.trace.evidence.append((round_, item))

    def _retrieved(self) -> bool:
        """Whether the model itself looked something up this turn: a retrieval tool ran without error, or any
        tool (e.g. a company-wide report) returned evidence."""
        return any(
            call.allowed
            and not call.error
            and not call.forced
            and (call.evidence_count or ((tool := tool_get(call.name)) is not None and tool.is_retrieval))
            for call in self.trace.tool_calls
        )

    def _references(self, answer: str) -> str:
        """Source URLs of the FAQ entries the answer's sentences came from (not of every FAQ entry retrieved)."""
        evidence = [item for _, item in self.trace.evidence]
        used = {reference for source in sentence_sources(answer, evidence) for reference in source.references}
        urls = []
        for item in evidence:
            if item.source_kind == "faq" and item.url and item.reference in used and item.url not in urls:
                urls.append(item.url)
        urls = urls[: settings.AGENT_REFERENCE_URL_LIMIT]
        return ("\n\n참고 자료:\n" + "\n".join(urls)) if urls else ""

    def _masked(self, text: str) -> str:
        return mask(text, counterpart=self.context.vendor, masker=self.masker)[0]

    def _masked_own_words(self, text: str) -> str:
        """The counterpart's own message masked: a brand it carries said short (`한빛 깍두기` for 한빛식품) is its
        own brand, not the vendor whose name it shares; every other vendor's name is masked as anywhere."""
        return mask(text, counterpart=self.context.vendor, masker=self.masker, own_brand_short_names=True)[0]

    def _masked_message(self, message: dict) -> dict:
        """The model's own words are masked too before they go back into a prompt or into a tool."""
        masked = {**message, "content": self._masked(message.get("content") or "")}
        if message.get("tool_calls"):
            masked["tool_calls"] = [
                {**call, "function": {**call["function"], "arguments": self._masked(call["function"]["arguments"])}}
                for call in message["tool_calls"]
            ]
        return masked

    def _stage(self, name: str):
        return _StageTimer(self.trace.stage_ms, name)


class _StageTimer:
    def __init__(self, sink: dict, name: str):
        self.sink, self.name = sink, name

    def __enter__(self):
        self.started = time.perf_counter()

    def __exit__(self, *exc):
        elapsed = (time.perf_counter() - self.started) * 1000
        self.sink[self.name] = round(self.sink.get(self.name, 0) + elapsed, 1)


def answer_compose(context: QuestionContext, *, provider: LlmProvider) -> AnswerTrace:
    started = time.perf_counter()
    composer = _Composer(context, provider)
    trace = composer.compose()
    trace.action_requests = [asdict(plan) for plan in composer.tool_context.action_requests]
    trace.action_asked = composer.tool_context.action_asked
    trace.stage_ms["total"] = round((time.perf_counter() - started) * 1000, 1)
    return trace


def is_informational(question: str) -> bool:
    text = question.strip()
    return len(text) >= 2 and not (_NOT_INFORMATIONAL.match(text) and len(text) <= 12)


def remove_questions_back(text: str) -> tuple[str, list[str]]:
    """Drop sentences that ask the vendor something back; return the rest and what was removed."""
    sentences = split_sentences(text)
    asking = [index for index, sentence in enumerate(sentences) if _ASKS_BACK.search(sentence.text.strip())]
    if not asking:
        return text.strip(), []
    return text_without(text, sentences, asking), [sentences[index].text.strip() for index in asking]


def _research_query(query: str, violations) -> str:
    """Search again with the reasons attached: the flagged values and suggested brands narrow the search."""
    extra = []
    for violation in violations:
        info = kind_info(violation.kind)
        if violation.suggestion and violation.suggestion not in (prompts.OTHER_VENDOR_MASK, prompts.OTHER_PRODUCT_MASK):
            extra.append(str(violation.suggestion))
        elif info is not None and info.research == Research.FLAGGED_TEXT:
            extra.append(violation.text)
    return " ".join([query, *dict.fromkeys(extra)])[:300]


@dataclass(frozen=True)
class _NameSets:
    brands: object
    counterpart: list[str]
    other_vendors: object  # agent.verification.OtherVendors
    counterpart_brands: tuple[str, ...] = ()


def verification_names(vendor, *, internal: bool = False) -> _NameSets:
    """Brands, the counterpart's names and brands, and what the answer must not show of other vendors (their
    names, the brands only they carry) for the verification engine.

    In an internal (staff-only) room company-wide answers name many vendors on purpose, so nothing about other
    vendors is a violation there; in vendor rooms every one of them is.
    """
    from agent.verification import OtherVendors, cached_name_index
    from vendors.selectors import (
        brand_names_all,
        brand_names_of_other_vendors,
        brand_names_of_vendor,
        vendor_names_all,
    )

    vendor_names = tuple(name for _, names in vendor_names_all() for name in names)
    if internal:
        # Unchecked, but known: a vendor's name is never taken for a misspelt or unknown brand.
        other_vendors = OtherVendors(names=vendor_names, checked=False)
    else:
        other_vendors = OtherVendors(names=vendor_names, brands=tuple(brand_names_of_other_vendors(vendor)))
    return _NameSets(
        brands=cached_name_index(tuple(brand_names_all())),
        counterpart=vendor.all_names,
        other_vendors=other_vendors,
        counterpart_brands=tuple(brand_names_of_vendor(vendor)) if vendor.pk else (),
    )
