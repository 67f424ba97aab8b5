"""From plain data to params Structs (errors name the field) and back to plain data."""

from __future__ import annotations

import re
import typing
from typing import Any

import msgspec

from memls.errors import InvalidInput
_PATH = re.compile(r" - at `\$\.?([A-Za-z_][\w.]*)?[^`]*`$")

T = typing.TypeVar("T")


def parse(kind: type[T], data: Any) -> T:
    """Validate plain data (camelCase keys) into a params Struct; InvalidInput names the field."""
    if data is None:
        data = {}
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        message = str(exc)
        match = _PATH.search(message)
        field = match.group(1) if match and match.group(1) else None
        text = _PATH.sub("", message)
        if field is None:
            missing = re.search(r"missing required field `(\w+)`", message)
            unknown = re.search(r"unknown field `(\w+)`", message)
            found = missing or unknown
            field = found.group(1) if found else None
        if "matching regex '\\\\S'" in text:
            text = "must not be empty or white space"
        elif "Invalid enum value" in text and field is not None:
            allowed = _allowed(kind, field)
            if allowed:
                text = f"{text}; expected one of: {', '.join(allowed)}"
        raise InvalidInput(text, field=field) from None


def _allowed(kind: type, field: str) -> list[str]:
    """The values a Literal field of a params Struct accepts (by its wire name)."""
    import msgspec.inspect as mi

    def literals(t) -> list[str]:
        if isinstance(t, mi.LiteralType):
            return [str(v) for v in t.values]
        for inner in getattr(t, "types", ()) or ((t.item_type,) if hasattr(t, "item_type")
                                                 else ()):
            found = literals(inner)
            if found:
                return found
        return []

    info = mi.type_info(kind)
    for f in getattr(info, "fields", ()):
        if f.encode_name == field:
            return literals(f.type)
    return []


def to_wire(value: Any) -> Any:
    """Plain JSON-ready data (camelCase), for every front's edge."""
    return msgspec.to_builtins(value)


def encode_json(value: Any) -> bytes:
    return msgspec.json.encode(value)

