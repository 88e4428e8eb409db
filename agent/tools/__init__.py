"""Tools the agent may call, scoped and graded in code (see registry.py)."""

from agent.tools.registry import (
    ActionPlan,
    ActionRefused,
    Grade,
    Scope,
    Tool,
    ToolArgumentsInvalid,
    ToolContext,
    ToolExecution,
    ToolResult,
    action_perform,
    tool_execute,
    tool_get,
    tools_offered,
)

__all__ = [
    "ActionPlan",
    "ActionRefused",
    "Grade",
    "Scope",
    "Tool",
    "ToolArgumentsInvalid",
    "ToolContext",
    "ToolExecution",
    "ToolResult",
    "action_perform",
    "tool_execute",
    "tool_get",
    "tools_offered",
]
