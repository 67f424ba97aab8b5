"""Limits applied before any work: how big a frame, a memory's text, a list or a nesting may be.

Every front refuses input over a limit with an error that names the limit (the setting a user
can raise, or the fixed bound), before the input is read, allocated or processed:

- `max_frame_bytes` (config `[limits]`, default 8 MiB): one LSP frame (its Content-Length),
  one line of the owner socket, one line of MCP over stdio. A bigger frame is answered and
  the connection closed, the frame never read into memory (a stdio server exits, so that
  its client starts it again).
- `PREAUTH_BYTES` (64 KiB, fixed): all that a TCP client that has not yet initialized with
  the token may send, headers and every frame together (an `initialize` is a few KiB); past
  it the connection is answered and closed.
- `max_content_bytes` (config `[limits]`, default 32 KiB): the UTF-8 size of a memory's text
  and of every other free text a request carries (queries, notes, texts to compare).
- `MAX_NESTING` (64): arrays and objects nested deeper than this are not parsed.
- `MAX_HEADER_BYTES` (8 KiB): an LSP frame's header block.

The current limits are process-wide: a daemon sets them once at start from its data
directory's `config.toml` (`memls.config.apply_limits` calls `configure`); tools that
never call it get the defaults. The settings and their bounds are `memls.config.Limits`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import msgspec

from memls.errors import InvalidInput

KiB = 1024
MiB = 1024 * KiB

DEFAULT_MAX_FRAME_BYTES = 8 * MiB
DEFAULT_MAX_CONTENT_BYTES = 32 * KiB
PREAUTH_BYTES = 64 * KiB
MAX_NESTING = 64
MAX_HEADER_BYTES = 8 * KiB


class LimitExceeded(InvalidInput):
    """Input over a limit; `limit` names it (a `[limits]` setting or a fixed bound)."""

    def __init__(self, message: str, *, limit: str, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.limit = limit


@dataclass(frozen=True)
class Limits:
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES


_current = Limits()


def current() -> Limits:
    return _current


def configure(limits: Limits) -> Limits:
    """Set the process-wide limits (a daemon does this once, at start)."""
    global _current
    _current = limits
    return limits


# ---------------------------------------------------------------- checks


def frame_too_large(size: int, limit: int, name: str) -> LimitExceeded:
    return LimitExceeded(
        f"a frame of {size} bytes is over the limit {name} = {limit} bytes; it was not read",
        limit=name,
    )


def preauth_exceeded(size: int) -> str:
    return (
        f"{size} bytes before the token are over the limit PREAUTH_BYTES = {PREAUTH_BYTES} "
        "bytes (an initialize with the token needs far less); the connection is closed"
    )


BAD_ID = "id must be a number or a string"


def readable_id(value: Any) -> bool:
    """A JSON-RPC id a reply can carry back as sent: any string or any finite number (JSON-RPC
    allows fractions and any size; LSP's own types are narrower). A string holding a lone
    surrogate (`"\\ud800"`, valid JSON, not valid Unicode) is an id too: a reply writes it
    back as the `\\udxxx` escape, ASCII, so the reply is valid JSON and valid UTF-8 and the
    client's parser reads back the very string it sent (`reply_json`)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int)


def reply_json(message: Any) -> bytes:
    """A reply as JSON text: msgspec's encoding, or, when a string in it holds a lone surrogate
    (only an id can: every other string with one is refused before any work), the standard
    library's with every character outside ASCII escaped, the surrogate as `\\udxxx`. That is
    what pygls writes for every LSP message, and what JavaScript's JSON.stringify writes for
    such a string: valid JSON, valid UTF-8, read back as the string the client sent."""
    try:
        return msgspec.json.encode(message)
    except UnicodeEncodeError:
        return json.dumps(msgspec.to_builtins(message), separators=(",", ":")).encode("ascii")


def check_content(value: str, field: str) -> None:
    """A free text's UTF-8 size against max_content_bytes."""
    limit = _current.max_content_bytes
    if len(value) * 4 <= limit:  # cheap: no encoding needed
        return
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise LimitExceeded(
            f"{size} bytes of UTF-8 is over the limit max_content_bytes = {limit}",
            limit="max_content_bytes",
            field=field,
        )


_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")


def check_strings(data: Any) -> None:
    """Refuse NUL and lone surrogates in any string of request params (keys included),
    naming the top-level field. Lone surrogates reach us from non-UTF-8 command-line
    arguments (Python's surrogateescape); JSON frames with them are refused when parsed."""
    stack: list[tuple[Any, str | None, int]] = [(data, None, 0)]
    while stack:
        value, field, depth = stack.pop()
        if depth > MAX_NESTING:
            raise LimitExceeded(
                f"nested deeper than {MAX_NESTING} levels (MAX_NESTING)",
                limit="MAX_NESTING",
                field=field,
            )
        if isinstance(value, str):
            bad = _BAD_CHAR.search(value)
            if bad is not None:
                char = bad.group()
                what = (
                    "a NUL character"
                    if char == "\x00"
                    else f"U+{ord(char):04X}, a lone surrogate (not valid Unicode; "
                    "was it a non-UTF-8 argument?)"
                )
                raise InvalidInput(f"must not contain {what}", field=field)
        elif isinstance(value, dict):
            for key, item in value.items():
                name = field
                if name is None and isinstance(key, str) and not _BAD_CHAR.search(key):
                    name = key
                stack.append((key, name, depth + 1))
                stack.append((item, name, depth + 1))
        elif isinstance(value, (list, tuple)):
            stack.extend((item, field, depth + 1) for item in value)


def nesting_depth_over(value: Any, limit: int = MAX_NESTING) -> bool:
    """True when arrays/objects nest deeper than `limit` (walks at most to that depth)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in item)
    return False


# ---------------------------------------------------------------- decoding a frame


class NotJson(ValueError):
    """A frame that is not JSON text (bad JSON or UTF-8, too deeply nested): JSON-RPC -32700,
    answered with id null. `limit` names the bound when one was crossed."""

    def __init__(self, message: str, limit: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.limit = limit


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_json(body: bytes) -> tuple[Any, str | None]:
    """One frame's JSON value and, when a string in it is not valid Unicode (a lone surrogate
    escape such as `"\\ud800"`, which JavaScript's JSON.stringify emits for a string cut inside
    an emoji), the path of the first such string (`params.text`, `method`, `params.types[2]`).

    Such text is valid JSON: the envelope (its id above all) stays readable, so the request
    can be answered with its id and the field named. The message's own `id` is not counted:
    an id is only written back, never used (`readable_id`). Everything else msgspec refuses
    stays refused: NotJson."""
    try:
        value = msgspec.json.decode(body)
    except RecursionError:
        raise NotJson(_NESTED, "MAX_NESTING") from None
    except msgspec.DecodeError as exc:
        value = _lenient(body, str(exc))
        if surrogate_path(value) is None:  # refused for a reason of its own: keep msgspec's
            raise NotJson(f"not valid JSON: {exc}") from None
        outside_id = value
        if isinstance(value, dict):
            outside_id = {key: item for key, item in value.items() if key != "id"}
        where = surrogate_path(outside_id)
    else:
        where = None
    if nesting_depth_over(value):
        raise NotJson(_NESTED, "MAX_NESTING")
    return value, where


_NESTED = f"nested deeper than {MAX_NESTING} levels (MAX_NESTING)"


def _lenient(body: bytes, why: str) -> Any:
    """The standard library's reading of strict UTF-8 JSON text (it keeps lone surrogates)."""
    try:
        text = body.decode("utf-8")
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise NotJson(_NESTED, "MAX_NESTING") from None
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise NotJson(f"not valid JSON: {why}") from None


def surrogate_path(value: Any) -> str | None:
    """The path of the first string (object keys included) holding a lone surrogate."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return path or "(the message)"
        elif isinstance(item, dict):
            for key, inner in reversed(list(item.items())):
                name = printable(key) if isinstance(key, str) else str(key)
                where = f"{path}.{name}" if path else name
                if isinstance(key, str) and _SURROGATE.search(key):
                    return where
                stack.append((inner, where))
        elif isinstance(item, list):
            stack.extend((inner, f"{path}[{i}]") for i, inner in reversed(list(enumerate(item))))
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def printable(text: str, limit: int = 200) -> str:
    """`text` cut to `limit` characters, lone surrogates written as \\udxxx escapes."""
    return text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")


def not_unicode(path: str) -> str:
    return f"{path}: not valid Unicode text (a lone surrogate escape, e.g. \\ud800)"
