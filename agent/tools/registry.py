"""The tool registry: what the agent can do, and who may let it.

A tool's scope and grade live here, in code. The model is shown a name, a description and an argument schema —
never a scope or a grade — and nothing it writes can change them (seed 004). Arguments are validated by the
tool; the counterpart a tool works for comes from the server's context, never from the model.
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


@dataclass
class ToolResult:
    """What a tool returns. `text` is what the model reads — made by the tool's code, never by the model."""

    text: str
    evidence: list[EvidenceItem] = field(default_factory=list)
    confirmed_action: str | None = None  # e.g. "send" when the action really happened this turn


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict
    scope: Scope
    grade: Grade
    handler: Callable[[ToolContext, dict], ToolResult]
    is_retrieval: bool = False  # counts as "the model searched" for the forced-retrieval rule

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
    _REGISTRY[tool.name] = tool
    return tool


def tool_get(name: str) -> Tool | None:
    _load_tools()
    return _REGISTRY.get(name)


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
        execution.result = tool.handler(context, parsed)
        if execution.result.confirmed_action:
            context.confirmed_actions.append(execution.result.confirmed_action)
    except ToolArgumentsInvalid as exc:
        execution.error = f"인자가 올바르지 않습니다: {exc}"
    execution.duration_ms = int((time.perf_counter() - started) * 1000)
    return execution


def _refusal(tool: Tool, context: ToolContext) -> str | None:
    from conversations.models import Room

    if tool.scope == Scope.COMPANY and context.room_kind != Room.Kind.INTERNAL:
        return "전사 데이터 도구는 외부(벤더) 방에서 사용할 수 없습니다."
    if tool.grade == Grade.IRREVERSIBLE and context.room is None:
        return "방이 저장되지 않은 실행(시험 실행)에서는 되돌릴 수 없는 동작을 하지 않습니다."
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
