"""From plain data to params Structs (errors name the field) and back to plain data."""

from __future__ import annotations

import functools
import re
import typing
from typing import Any

import msgspec

from memls import limits
from memls.errors import InvalidInput

_PATH = re.compile(r" - at `\$\.?([A-Za-z_][\w.]*)?[^`]*`$")

T = typing.TypeVar("T")


def parse(kind: type[T], data: Any) -> T:
    """Validate plain data (camelCase keys) into a params Struct; InvalidInput names the field."""
    if data is None:
        data = {}
    try:
        parsed = msgspec.convert(data, kind)
    except UnicodeError:  # a lone surrogate where msgspec compares text: name the field
        limits.check_strings(data)
        raise InvalidInput("must be valid Unicode text") from None
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
    limits.check_strings(data)  # NUL, lone surrogates (after the bounds: lists are short now)
    for name, wire_name in _content_fields(typing.cast(Any, kind)):
        value = getattr(parsed, name)
        if isinstance(value, str):
            limits.check_content(value, wire_name)
    return parsed


@functools.cache
def _content_fields(kind: type) -> tuple[tuple[str, str], ...]:
    """(attribute, wire name) of the `Content` fields of a params Struct."""
    from memls.protocol.base import Content

    if not (isinstance(kind, type) and issubclass(kind, msgspec.Struct)):
        return ()
    hints = typing.get_type_hints(kind, include_extras=True)
    found = []
    for name, wire_name in zip(kind.__struct_fields__, kind.__struct_encode_fields__):
        hint = hints.get(name)
        if hint is Content or Content in typing.get_args(hint):
            found.append((name, wire_name))
    return tuple(found)


def _allowed(kind: type, field: str) -> list[str]:
    """The values a Literal field of a params Struct accepts (by its wire name)."""
    import msgspec.inspect as mi

    def literals(t) -> list[str]:
        if isinstance(t, mi.LiteralType):
            return [str(v) for v in t.values]
        for inner in getattr(t, "types", ()) or ((t.item_type,) if hasattr(t, "item_type") else ()):
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
