"""Argument checks shared by the tools: the model's arguments are input like any other, never trusted."""

from agent.tools.registry import ToolArgumentsInvalid


def text_argument(arguments: dict, name: str, *, max_length: int = 300, required: bool = True) -> str:
    value = arguments.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ToolArgumentsInvalid(f"'{name}' is required")
        return ""
    if not isinstance(value, str):
        raise ToolArgumentsInvalid(f"'{name}' must be a string")
    value = " ".join(value.split())
    if len(value) > max_length:
        raise ToolArgumentsInvalid(f"'{name}' must be at most {max_length} characters")
    return value


def int_argument(arguments: dict, name: str, *, default: int, minimum: int, maximum: int) -> int:
    value = arguments.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolArgumentsInvalid(f"'{name}' must be an integer")
    if not minimum <= value <= maximum:
        raise ToolArgumentsInvalid(f"'{name}' must be between {minimum} and {maximum}")
    return value


def reject_unknown(arguments: dict, allowed: set[str]) -> None:
    """A vendor or room named by the model is refused outright: the server decides those."""
    unknown = set(arguments) - allowed
    if unknown:
        raise ToolArgumentsInvalid(f"unknown arguments: {', '.join(sorted(unknown))}")
