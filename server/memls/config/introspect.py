"""Reading the config Structs: their fields, each field's type, bounds and Meta, and the words
errors and docs use for them ("an integer from 1 to 200", a value as TOML spells it)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import msgspec
import msgspec.inspect

_AT = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_UNKNOWN = re.compile(r"unknown field `(?P<key>[^`]*)`")


def where(exc: msgspec.ValidationError) -> tuple[list[str], str | None]:
    """(path of keys, unknown key or None) from msgspec's message."""
    message = str(exc)
    at = _AT.search(message)
    path = [p for p in (at.group("path") if at else "").split(".") if p]
    unknown = _UNKNOWN.search(message)
    return path, unknown.group("key") if unknown else None


def fields(owner: type) -> tuple[msgspec.inspect.Field, ...]:
    info = msgspec.inspect.type_info(owner)
    assert isinstance(info, msgspec.inspect.StructType)
    return info.fields


def field_type(owner: type, name: str) -> Any:
    for f in fields(owner):
        if f.name == name:
            return f.type
    raise KeyError(name)


def struct_of(info: Any) -> Any:
    kind = unwrap(info)[0]
    return kind.cls if isinstance(kind, msgspec.inspect.StructType) else None


def unwrap(info: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The type under Metadata, its Meta(extra=...) and its JSON Schema extras (description,
    default). msgspec.inspect already leaves UNSET out of a field's type."""
    extra: dict[str, Any] = {}
    schema: dict[str, Any] = {}
    while isinstance(info, msgspec.inspect.Metadata):
        extra.update(info.extra or {})
        schema.update(info.extra_json_schema or {})
        info = info.type
    return info, extra, schema


def number(x: float) -> str:
    return f"{x:g}"


def expected(info: Any, *, env: bool = False) -> str:
    """What a value of this type must be, in words ("an integer from 1 to 200"); `env`: as an
    environment variable's text."""
    kind, extra, _ = unwrap(info)
    if "expect" in extra:
        return str(extra["expect"])
    inspect = msgspec.inspect
    if isinstance(kind, inspect.BoolType):
        return (
            "a boolean (1, true, yes, on or 0, false, no, off)"
            if env
            else "a boolean (true or false)"
        )
    if isinstance(kind, (inspect.IntType, inspect.FloatType)):
        noun = "an integer" if isinstance(kind, inspect.IntType) else "a number"
        low, high = kind.ge if kind.ge is not None else kind.gt, kind.le
        if kind.ge is not None and high is not None:
            return f"{noun} from {number(kind.ge)} to {number(high)}"
        if kind.gt is not None:
            return f"{noun} greater than {number(kind.gt)}"
        if low is not None:
            return f"{noun} of at least {number(low)}"
        return noun
    if isinstance(kind, inspect.StrType):
        return "a non-empty string" if (kind.min_length or 0) > 0 else "a string"
    if isinstance(kind, inspect.StructType):
        return "a table"
    if isinstance(kind, inspect.ListType):
        return f"an array of {expected(kind.item_type).split(' ', 1)[-1]}s"
    return type(kind).__name__


def show(value: Any) -> str:
    """A value as the user wrote it (TOML spelling)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return repr(value)
