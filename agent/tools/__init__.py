"""Tools the agent may call, scoped and graded in code (see registry.py)."""

from agent.tools.registry import (
    Grade,
    Scope,
    Tool,
    ToolArgumentsInvalid,
    ToolContext,
    ToolExecution,
    ToolResult,
    tool_execute,
    tool_get,
    tools_offered,
)

__all__ = [
    "Grade",
    "Scope",
    "Tool",
    "ToolArgumentsInvalid",
    "ToolContext",
    "ToolExecution",
    "ToolResult",
    "tool_execute",
    "tool_get",
    "tools_offered",
]
