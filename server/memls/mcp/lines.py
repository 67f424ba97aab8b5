"""`memls mcp`'s checks of each line, before anything acts on it, as the LSP front checks a
frame: a line over `max_frame_bytes` is answered -32600 unread and ends the server (exit 1,
said on stderr: the client starts it again); text that is not JSON (or nested deeper than
MAX_NESTING) -32700 with id null; a batch or a non-object -32600; an id that is neither an
number nor a string -32600 with id null (every number is an id, answered as sent, and so is
every string, a lone surrogate in it written back as its escape); a bad envelope
-32600 with the id; a string that is not valid Unicode (a lone surrogate) -32602 naming its
field; an unknown method -32601; params of the wrong shape -32602 naming the field. A
notification that fails a check is dropped. The standard library only."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_NESTING = 64  # as memls.limits
LOCAL = {"initialize", "ping", "tools/list", "prompts/list", "resources/templates/list"}
RELAYED = {"tools/call", "resources/list", "resources/read", "prompts/get"}
KNOWN_NOTIFICATIONS = {
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
}


def error(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": body}


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    """A JSON number as a float; one past the float range (1e999) is refused, as msgspec
    refuses it on the other transports: it could only be written back as Infinity."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:40]} is out of range")
    return value


def _depth_over(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _not_unicode(value: Any, path: str = "") -> str | None:
    """The path of the first string (or key) holding a lone surrogate, or None."""
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return where or "(the message)"
        elif isinstance(item, dict):
            for key, child in item.items():
                inner = f"{where}.{key}" if where else str(key)
                if _not_unicode(key) is not None:
                    return where or "(a key)"
                stack.append((child, inner))
        elif isinstance(item, list):
            stack.extend(
                (child, f"{where}.{n}" if where else str(n)) for n, child in enumerate(item)
            )
    return None


def encode(message: dict[str, Any]) -> bytes:
    """One line of JSON: UTF-8, and a lone surrogate (only an id can hold one: every other
    string with one is refused) written as the `\\udxxx` escape it came as, which is what
    `backslashreplace` writes for it: valid JSON, valid UTF-8, read back as the id sent."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "backslashreplace") + b"\n"


def check(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the message to act on, or None; the error to answer, or None)."""
    try:
        message = json.loads(line, parse_constant=_not_json, parse_float=_finite)
    except (ValueError, RecursionError):
        return None, error(None, PARSE_ERROR, "not JSON text (or not UTF-8)")
    if _depth_over(message, MAX_NESTING):
        return None, error(
            None,
            PARSE_ERROR,
            f"nested deeper than {MAX_NESTING} levels (MAX_NESTING)",
            {"limit": "MAX_NESTING"},
        )
    if isinstance(message, list):
        return None, error(None, INVALID_REQUEST, "batches (JSON arrays) are not supported")
    if not isinstance(message, dict):
        return None, error(None, INVALID_REQUEST, "a message must be a JSON object")
    msg_id = message.get("id")
    # JSON-RPC's ids are strings and numbers (MCP's RequestId too): 1.5, 10**30 and "\ud800"
    # (a lone surrogate, written back as that escape: `encode`) are answered as sent
    readable = isinstance(msg_id, (int, float, str)) and not isinstance(msg_id, bool)
    if "id" in message and not readable and msg_id is not None:
        return None, error(None, INVALID_REQUEST, "id must be a number or a string")
    reply_id = msg_id if readable else None
    if message.get("jsonrpc") != "2.0":
        return None, error(reply_id, INVALID_REQUEST, 'jsonrpc must be "2.0"')
    if "method" not in message:
        if "result" in message or "error" in message:
            return message, None  # a response to one of our requests
        return None, error(
            reply_id,
            INVALID_REQUEST,
            "a message needs a method (request, notification) or a result or error",
        )
    method = message["method"]
    if not isinstance(method, str):
        return None, error(reply_id, INVALID_REQUEST, "method must be a string")
    request = readable

    def refuse(code: int, text: str, data: Any = None) -> tuple[None, dict[str, Any] | None]:
        if not request:
            return None, None  # a notification is never answered
        return None, error(reply_id, code, text, data)

    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return refuse(INVALID_REQUEST, "params must be an object")
    bad = _not_unicode(params) if params is not None else None
    if bad is not None:
        return refuse(
            INVALID_PARAMS,
            f"`{bad}` is not valid Unicode (a lone surrogate escape)",
            {"field": bad},
        )
    if _not_unicode(method) is not None:
        return refuse(INVALID_REQUEST, "method is not valid Unicode")
    if not request:
        return message, None
    if method not in LOCAL and method not in RELAYED:
        return refuse(METHOD_NOT_FOUND, f"method not found: {method[:100]!r}")
    wrong = shape(method, params or {})
    if wrong is not None:
        field, text = wrong
        return refuse(
            INVALID_PARAMS, f"invalid params for {method}: {field}: {text}", {"field": field}
        )
    return message, None


def shape(method: str, params: dict[str, Any]) -> tuple[str, str] | None:
    """(field, what is wrong) when the params do not fit the MCP method, else None."""

    def want(field: str, kind: type | tuple[type, ...], what: str, required: bool = True):
        value = params.get(field)
        if value is None:
            return (field, f"{what} is required") if required else None
        return None if isinstance(value, kind) and not isinstance(value, bool) else (field, what)

    if method == "initialize":
        info = params.get("clientInfo")
        return (
            want("protocolVersion", str, "a string")
            or want("capabilities", dict, "an object")
            or want("clientInfo", dict, "an object")
            or (
                ("clientInfo.name", "a string is required")
                if isinstance(info, dict) and not isinstance(info.get("name"), str)
                else None
            )
        )
    if method == "tools/call":
        return want("name", str, "a string") or want("arguments", dict, "an object", False)
    if method == "resources/read":
        return want("uri", str, "a string")
    if method == "prompts/get":
        arguments = params.get("arguments")
        if isinstance(arguments, dict) and not all(isinstance(v, str) for v in arguments.values()):
            return "arguments", "an object of strings"
        return want("name", str, "a string") or want("arguments", dict, "an object", False)
    if "cursor" in params and not isinstance(params["cursor"], str):
        return "cursor", "a string"
    return None
