"""What PostgreSQL text can hold, and how uploaded strings are made to fit.

Two kinds of characters arrive in valid JSON and cannot be stored: NUL (PostgreSQL text and jsonb refuse it) and
lone UTF-16 surrogates (`"\\ud83d"` without its pair: Python holds them, UTF-8 cannot encode them). Free text
loses them with its meaning intact — NUL is removed, a lone surrogate becomes U+FFFD — and the count is kept.
Identifiers are only checked: removing a character from a room key or message id could make it another one.
"""

import json
import re

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def is_storable(*values: str) -> bool:
    """Whether every value can be stored as it is (one search over all of them: this runs per uploaded message)."""
    return _UNSTORABLE.search(values[0] if len(values) == 1 else "".join(values)) is None


def storable_clean(value: str) -> tuple[str, dict[str, int]]:
    """The value without NUL and with lone surrogates replaced, and what was done: `{"nul": 2, "surrogate": 1}`."""
    if _UNSTORABLE.search(value) is None:
        return value, {}
    removed = {}
    if nul := value.count("\x00"):
        value = value.replace("\x00", "")
        removed["nul"] = nul
    value, surrogates = _SURROGATE.subn("\ufffd", value)
    if surrogates:
        removed["surrogate"] = surrogates
    return value, removed


def storable_escape(value: str) -> str:
    """The value with NUL and lone surrogates written as visible `\\uXXXX` escapes (for display and search)."""
    return _UNSTORABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", value)


def storable_json(value, *, indent: int | None = None) -> str:
    """JSON text of a value as received that the database can hold and that `json.loads` turns back into it.

    `json.dumps` already escapes NUL; lone surrogates are escaped the same way (`\\ud83d` is valid JSON).
    """
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent)
    except RecursionError:
        # Parsed, but deeper than the encoder can go from here: kept down to a depth, marked where it was cut.
        text = json.dumps(_cut_below(value, _KEPT_DEPTH), ensure_ascii=False, indent=indent)
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


_KEPT_DEPTH = 100
_CUT = f"<nested deeper than {_KEPT_DEPTH} levels: cut>"


def _cut_below(value, depth: int):
    if not isinstance(value, dict | list):
        return value
    if depth == 0:
        return _CUT
    if isinstance(value, dict):
        return {key: _cut_below(item, depth - 1) for key, item in value.items()}
    return [_cut_below(item, depth - 1) for item in value]
