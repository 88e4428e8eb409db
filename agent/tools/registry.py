"""The tool registry: what the agent can do, and who may let it.

A tool's scope and grade live here, in code. The model is shown a name, a description and an argument schema —
never a scope or a grade — and nothing it writes can change them. Arguments are validated by the tool; the
counterpart a tool works for comes from the server's context, never from the model.

A tool of grade `irreversible` never acts while the model is talking: inside the tool loop only its `plan` runs
(it validates the arguments and names the action), the plan is recorded as an action request, and the model is
told that the request is recorded, not done. The action itself (`perform`) runs later, after the answer passed
verification, through `action_perform` — which looks the tool up here again and validates its arguments again,
so a stored request (or a tampered one) cannot smuggle in another tool, a read tool or other arguments.
"""

import datetime
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from agent.knowledge.types import EvidenceItem
from agent.llm.base import ToolSpec
from agent.verification.claims import ActionKind

logger = logging.getLogger(__name__)


class Scope(StrEnum):
    COUNTERPART = "counterpart"  # the resolved vendor's own data, vendor injected by the server
    KNOWLEDGE = "knowledge"  # shared knowledge (hub, FAQ), other vendors masked
    COMPANY = "company"  # aggregates across all vendors: internal (staff-only) rooms only


class Grade(StrEnum):
    READ = "read"
    REVERSIBLE = "reversible"
    IRREVERSIBLE = "irreversible"


class ToolArgumentsInvalid(ValueError):
    """The model's arguments do not fit the tool; the message is shown to the model so it can correct them."""


class ActionRefused(Exception):
    """An action request that may not run: not an irreversible tool, out of the room's scope, or its arguments
    no longer valid. The message is for staff."""


@dataclass(frozen=True)
class ActionPlan:
    """An irreversible action as the model asked for it, validated: what runs after verification."""

    tool: str
    arguments: dict  # validated and normalised
    idempotency_key: str  # the same question asking the same thing again names the same action
    kind: str  # the completed-action kind a claim about it would use (agent.verification.claims.ActionKind)
    label: str  # what the confirmation line names, e.g. the document's title
    already_done: bool = False  # the action with this key already happened (its send job is `sent`)


@dataclass
class ToolContext:
    """What the server knows about the turn. Tools read the counterpart from here, never from arguments."""

    question_id: int | None
    vendor: object  # vendors.models.Vendor
    room: object | None  # conversations.models.Room (None in a dry run without a stored room)
    room_kind: str
    dry_run: bool = False
    confirmed_actions: list[str] = field(default_factory=list)
    masker: object | None = None  # one VendorMasker for the whole run (names cannot change mid-answer)
    asked_on: datetime.date | None = None  # the day the question was asked: which dated evidence is in force
    action_requests: list[ActionPlan] = field(default_factory=list)  # recorded this turn, none performed
    action_asked: bool = False  # the model called an irreversible tool this turn (recorded or not)


@dataclass
class ToolResult:
    """What a tool returns. `text` is what the model reads — made by the tool's code, never by the model."""

    text: str
    evidence: list[EvidenceItem] = field(default_factory=list)
    confirmed_action: str | None = None  # e.g. "send" when the action has really happened


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict
    scope: Scope
    grade: Grade
    handler: Callable[[ToolContext, dict], ToolResult] | None = None  # read and reversible tools
    is_retrieval: bool = False  # counts as "the model searched" for the forced-retrieval rule
    # Irreversible tools: `plan` validates and names the action (or returns a ToolResult when there is nothing to
    # do, e.g. a missing record); `perform` does it and returns what it made (a send job).
    plan: Callable[[ToolContext, dict], "ActionPlan | ToolResult"] | None = None
    perform: Callable[[ToolContext, ActionPlan, object], object] | None = None

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)


@dataclass
class ToolExecution:
    name: str
    arguments: dict
    allowed: bool
    blocked_reason: str = ""
    result: ToolResult | None = None
    error: str = ""
    duration_ms: int = 0

    @property
    def model_text(self) -> str:
        """The tool message the model gets back."""
        if not self.allowed:
            return f"[도구 거부] {self.blocked_reason}"
        if self.error:
            return f"[도구 오류] {self.error}"
        return self.result.text if self.result else ""


_REGISTRY: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    if tool.name in _REGISTRY:
        raise ValueError(f"tool {tool.name} registered twice")
    irreversible = tool.grade == Grade.IRREVERSIBLE
    if irreversible != (tool.plan is not None and tool.perform is not None) or irreversible == (
        tool.handler is not None
    ):
        raise ValueError(f"tool {tool.name}: irreversible tools have plan and perform, the others a handler")
    _REGISTRY[tool.name] = tool
    return tool


def tool_get(name: str) -> Tool | None:
    _load_tools()
    return _REGISTRY.get(name)


def tool_names(*, grade: Grade) -> list[str]:
    _load_tools()
    return [tool.name for tool in _REGISTRY.values() if tool.grade == grade]


def tools_offered(context: ToolContext) -> list[Tool]:
    """The tools this room may use: company-wide tools only in internal rooms."""
    _load_tools()
    return [tool for tool in _REGISTRY.values() if _refusal(tool, context) is None]


def tool_execute(context: ToolContext, name: str, arguments: dict | str | None) -> ToolExecution:
    """Run one tool call from the model. Unknown tools and tools out of the room's scope are refused, not run."""
    tool = tool_get(name)
    parsed = _parse_arguments(arguments)
    if tool is None:
        return ToolExecution(name=name, arguments=parsed, allowed=False, blocked_reason="알 수 없는 도구입니다.")
    refusal = _refusal(tool, context)
    if refusal:
        logger.warning("blocked tool call %s in a %s room (question %s)", name, context.room_kind, context.question_id)
        return ToolExecution(name=name, arguments=parsed, allowed=False, blocked_reason=refusal)
    started = time.perf_counter()
    execution = ToolExecution(name=name, arguments=parsed, allowed=True)
    try:
        if tool.grade == Grade.IRREVERSIBLE:
            context.action_asked = True
            execution.result = _action_record(context, tool, parsed)
        else:
            execution.result = tool.handler(context, parsed)
        if execution.result.confirmed_action:
            context.confirmed_actions.append(execution.result.confirmed_action)
    except ToolArgumentsInvalid as exc:
        execution.error = f"인자가 올바르지 않습니다: {exc}"
    execution.duration_ms = int((time.perf_counter() - started) * 1000)
    return execution


ACTION_RECORDED_TEXT = (
    "[시스템 확인] 요청이 기록되었습니다: {label}. 아직 처리되지 않았습니다 — 답변이 검증을 통과한 뒤에 처리됩니다. "
    "처리했다거나 보냈다고 쓰지 말고, 요청을 접수했다고만 안내하세요. 결과 줄은 시스템이 답변 끝에 붙입니다."
)
ACTION_ALREADY_DONE_TEXT = "[시스템 확인] 이미 처리된 요청입니다: {label} (상태: 발송됨)."


def _action_record(context: ToolContext, tool: Tool, arguments: dict) -> ToolResult:
    """Inside the tool loop an irreversible tool only plans: the plan is recorded (once per idempotency key) and
    the model is told it is not done — unless the same action already happened (its job is `sent`)."""
    planned = tool.plan(context, arguments)
    if isinstance(planned, ToolResult):
        return planned
    if all(request.idempotency_key != planned.idempotency_key for request in context.action_requests):
        context.action_requests.append(planned)
    # The request itself is real (it is stored with the run), so saying it was received (접수) is true; saying
    # the action was done — or ordered, registered, booked — is not, until its job is `sent`.
    context.confirmed_actions.append(ActionKind.RECEIPT)
    if planned.already_done:
        return ToolResult(text=ACTION_ALREADY_DONE_TEXT.format(label=planned.label), confirmed_action=planned.kind)
    return ToolResult(text=ACTION_RECORDED_TEXT.format(label=planned.label))


def action_perform(
    context: ToolContext, tool_name: str, arguments: dict, *, idempotency_key: str, actor
) -> tuple[ActionPlan, object]:
    """Run a recorded action request: the tool is looked up in the registry again, must be irreversible (a read
    tool never comes through here), must be allowed in the room, validates its arguments again, and they must
    still name the action that was recorded (its idempotency key)."""
    tool = tool_get(tool_name)
    if tool is None or tool.grade != Grade.IRREVERSIBLE:
        raise ActionRefused(f"실행할 수 있는 동작 도구가 아닙니다: {tool_name}")
    refusal = _refusal(tool, context)
    if refusal:
        raise ActionRefused(refusal)
    try:
        planned = tool.plan(context, _parse_arguments(arguments))
    except ToolArgumentsInvalid as exc:
        raise ActionRefused(f"인자가 올바르지 않습니다: {exc}") from exc
    if isinstance(planned, ToolResult):
        raise ActionRefused(planned.text)
    if planned.idempotency_key != idempotency_key:
        raise ActionRefused("인자가 기록된 요청과 다른 동작을 가리킵니다.")
    return planned, tool.perform(context, planned, actor)


def _refusal(tool: Tool, context: ToolContext) -> str | None:
    from conversations.models import Room

    if tool.scope == Scope.COMPANY and context.room_kind != Room.Kind.INTERNAL:
        return "전사 데이터 도구는 외부(벤더) 방에서 사용할 수 없습니다."
    return None


def _parse_arguments(arguments) -> dict:
    if isinstance(arguments, dict):
        return arguments
    if not arguments:
        return {}
    try:
        parsed = json.loads(arguments)
    except (TypeError, ValueError):
        return {"_unparsed": str(arguments)[:500]}
    return parsed if isinstance(parsed, dict) else {"_unparsed": str(arguments)[:500]}


def _load_tools():
    # Tool modules register themselves on import; importing here keeps the registry complete wherever it is used.
    from agent.tools import company, counterpart, retrieval  # noqa: F401
