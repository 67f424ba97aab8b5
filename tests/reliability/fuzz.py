"""The fuzzer: hypothesis over the real server, on every transport.

Transports: LSP over stdio, LSP over TCP before the token and after it, the owner socket
(one JSON object per line), MCP over stdio (JSON-RPC, one per line). Each example is one
frame: a request with fuzzed params (every `memory/*` method and every field of its params,
or every MCP tool and every argument: valid values mixed with wrong types, NUL, lone
surrogates, huge numbers and lists, deep nesting, unknown keys), a standard LSP or MCP
method, an envelope that is wrong (jsonrpc, id, method), ids of every kind JSON-RPC allows
(`1.5`, `100000000000`, 10^30, a string holding a lone surrogate `"\\ud800"`: answered as
sent), a body that is not JSON, a JSON text cut short, bytes with no header before the next
frame, a body shorter than its Content-Length, a header without Content-Length, a frame over
max_frame_bytes; before the token, frames until PREAUTH_BYTES is spent. After it a sentinel
request is sent (on LSP its header ends a body shorter than promised); the example passes
when, before the sentinel's reply arrived:

- a request (an id the server can read) got exactly one answer with its id, an unreadable
  one an answer with id null, a notification none;
- a request whose params hold a string that is not valid Unicode got -32602 naming a field;
- no answer was -32603 (the owner socket: kind `internal`) or carried a traceback or a path;
  before the token, no answer was a result;
- a refused mutating request changed nothing (stats and audit of both projects);
- a frame over the limit was answered with id null and the connection closed (a stdio
  server exited with status 1); the example then opens a new connection or server;
- the server is still running. No answer within 30 s is a hang.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from memls import protocol
from memls.limits import PREAUTH_BYTES, readable_id
from reliability.wire import Peer, frame, line, no_trace

MUTATING = {
    "memory/store",
    "memory/feedback",
    "memory/forget",
    "memory/supersede",
    "memory/review",
    "memory/resolve",
    "memory/maintain",
    "memory/reindex",
    "memory/syncNote",
}
LSP_METHODS = [
    "textDocument/hover",
    "workspace/symbol",
    "textDocument/completion",
    "textDocument/codeAction",
    "workspace/executeCommand",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "$/cancelRequest",
    "$/setTrace",
    "initialize",
    "initialized",
    "workspace/didChangeWatchedFiles",
    "workspace/didChangeWorkspaceFolders",
    "textDocument/definition",
]
FRAME_LIMIT = 65536  # the fuzzed servers run with [limits] max_frame_bytes = 65536
FUZZ_CONFIG = "[index]\nvectors = false\n[limits]\nmax_frame_bytes = 65536\n"


def examples(default: int) -> int:
    return int(os.environ.get("MEMLS_FUZZ_EXAMPLES", default))


@dataclass
class Target:
    peer: Peer
    alive: Any
    projects: list[str]
    ids: list[str]
    framing: str = "lsp"  # "lsp", "owner" or "mcp" (Peer.framing)
    gated: bool = False  # a TCP client without the token
    reopen: Callable[[], Peer] | None = None  # a new connection (server) after a close
    snapshot: Callable[[], Any] | None = None  # what a refused write must not change
    mutating: frozenset[str] = frozenset()
    sent: int = 0
    used: int = 0  # bytes sent on this connection (before the token: PREAUTH_BYTES at most)
    reopened: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    edges: dict[str, int] = field(default_factory=dict)  # edge cases that passed, by kind
    status: Callable[[], str] = lambda: ""  # how a server that died ended (stdio servers)


# ---------------------------------------------------------------- values

junk_text = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20).map(lambda s: s + "\x00"),
    st.sampled_from(
        [
            "",
            " ",
            "\u200b",
            "\ufeff\u200d",
            "\ud800",
            "a\udfffb",
            "x" * 40_000,
            "é" * 20_000,  # 40,000 bytes of UTF-8: over max_content_bytes
            "../../etc/passwd",
            "file:///etc/passwd",
            "NaN",
            "null",
        ]
    ),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    junk_text,
)
junk = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def field_values(name: str, target: Target) -> st.SearchStrategy:
    texts = st.one_of(
        st.sampled_from(["We deploy on Tuesdays", "tabs not spaces", "the cache is Redis"]),
        st.text(min_size=1, max_size=60),
    )
    ids = st.sampled_from(target.ids + ["m_nope", "", "x" * 300])
    times = st.sampled_from(
        [
            "2025-01-01",
            "2025-03-01T12:00:00Z",
            "not a date",
            "9" * 100,
            "2025-13-45",
            "0001-01-01T00:00:00+14:00",
        ]
    )
    valid: dict[str, st.SearchStrategy] = {
        "text": texts,
        "query": texts,
        "new": texts,
        "existing": texts,
        "note": texts,
        "project": st.sampled_from(target.projects + ["", "\u200b", " ", "p" * 600]),
        "id": ids,
        "old": ids,
        "by": ids,
        "a": ids,
        "b": ids,
        "derivedFrom": ids,
        "type": st.sampled_from(list(protocol.MEMORY_TYPES) + ["bogus"]),
        "defaultType": st.sampled_from(list(protocol.MEMORY_TYPES)),
        "types": st.one_of(
            st.lists(st.sampled_from(protocol.MEMORY_TYPES), max_size=40),
            st.just(["note"] * 2_000),  # over the bound of 32, under the frame limit
        ),
        "reason": st.sampled_from(list(protocol.FORGET_REASONS) + ["because"]),
        "signal": st.sampled_from(list(protocol.FEEDBACK_SIGNALS) + ["meh"]),
        "action": st.sampled_from(
            ["list", "approve", "reject", "restore", "dismiss", "resolve", "supersede", "explode"]
        ),
        "status": st.sampled_from(["active", "superseded", "open", "dismissed", "resolved"]),
        "state": st.sampled_from(list(protocol.TRUST_STATES)),
        "trust": st.sampled_from(list(protocol.TRUST_STATES)),
        "k": st.integers(min_value=-5, max_value=10**12),
        "limit": st.integers(min_value=-5, max_value=10**12),
        "rerankDepth": st.integers(min_value=-5, max_value=10**6),
        "validFrom": times,
        "validUntil": times,
        "validAt": times,
        "asOf": times,
        "mode": st.sampled_from(["default", "interactive", "lexical", "fast"]),
        "uri": st.sampled_from(
            [
                "file:///nonexistent/AGENTS.md",
                "file:///nonexistent/x.md",
                "untitled:1",
                "",
                "http://example.com/a.md",
            ]
        ),
        "sourceUri": st.sampled_from(["file:///nonexistent/a.md", "x" * 5000]),
        "sourceRange": st.sampled_from(["1-2", "3", "x" * 100]),
    }
    base = valid.get(name, st.booleans())
    return st.one_of(base, base, base, junk)  # mostly plausible, sometimes anything


@st.composite
def memory_request(draw, target: Target) -> dict:
    method = draw(st.sampled_from(sorted(protocol.METHODS)))
    params_type = protocol.METHODS[method].params
    fields = list(params_type.__struct_encode_fields__)
    chosen = (
        draw(st.lists(st.sampled_from(fields), unique=True, max_size=len(fields))) if fields else []
    )
    params: Any = {name: draw(field_values(name, target)) for name in chosen}
    if "project" in fields and "project" not in params and draw(st.booleans()):
        params["project"] = target.projects[0]
    shape = draw(st.integers(min_value=0, max_value=19))
    if shape == 0:
        params[draw(st.text(min_size=1, max_size=10))] = draw(junk)  # an unknown key
    elif shape == 1:
        params = draw(st.one_of(st.lists(junk, max_size=3), st.just(None)))
    elif shape == 2:
        params["project"] = deep(draw(st.integers(min_value=10, max_value=120)))
    message = {"jsonrpc": "2.0", "id": request_id(draw, target), "method": method}
    if params is not None or draw(st.booleans()):
        message["params"] = params
    return message


MCP_TOOLS_MUTATING = {
    "remember",
    "feedback",
    "forget",
    "supersede",
    "review_approve",
    "review_reject",
    "resolve_conflict",
}
MCP_METHODS = [
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "ping",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "initialize",
    "memory/store",
    "textDocument/hover",
    "notifications/cancelled",
    "notifications/roots/list_changed",
    "notifications/progress",
]


SURROGATE_IDS = ["\ud800", "a\udfffb", "\udbff\udbff"]  # valid JSON, not valid Unicode


def request_id(draw, target: Target) -> Any:
    """Any id JSON-RPC allows: a string (one holding a lone surrogate too: written back as the
    escape it came as), or a number of any size, fractions included (LSP's own types are
    narrower; every transport, MCP stdio included, answers each one as sent)."""
    plain = [
        st.integers(0, 2**31),
        st.text(alphabet="abcdef0123456789", min_size=1, max_size=12),
    ]
    wide = [
        st.sampled_from([1.5, 100000000000, -1, 0.0, 2**53 + 1, 10**30, 1e300, *SURROGATE_IDS]),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
    ]
    return draw(st.one_of(*plain, *wide))


@st.composite
def mcp_request(draw, target: Target) -> dict:
    """tools/call of every memls tool with fuzzed arguments (the MCP twin of memory_request)."""
    from memls.agent.tools import TOOLS

    tool = draw(st.sampled_from(TOOLS))
    fields = sorted(tool.input_schema["properties"])
    chosen = draw(st.lists(st.sampled_from(fields), unique=True, max_size=len(fields)))
    arguments: Any = {name: draw(field_values(name, target)) for name in chosen}
    shape = draw(st.integers(min_value=0, max_value=19))
    if shape == 0:
        arguments[draw(st.text(min_size=1, max_size=10))] = draw(junk)
    elif shape == 1:
        arguments = draw(st.one_of(st.lists(junk, max_size=3), st.none(), junk))
    name = tool.name if shape != 2 else draw(st.sampled_from(["bogus", "", "recall "]))
    params: dict[str, Any] = {"name": name}
    if arguments is not None or draw(st.booleans()):
        params["arguments"] = arguments
    return {
        "jsonrpc": "2.0",
        "id": request_id(draw, target),
        "method": "tools/call",
        "params": params,
    }


@st.composite
def lsp_request(draw, target: Target) -> dict:
    methods = MCP_METHODS if target.framing == "mcp" else LSP_METHODS
    method = draw(st.sampled_from(methods))
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": draw(junk)}
    if method == "resources/read" and draw(st.booleans()):
        message["params"] = {"uri": draw(st.sampled_from(["memls://x/conventions", "file:///"]))}
    if draw(st.booleans()):
        message["id"] = draw(st.integers(0, 2**31))
    return message


def request(draw, target: Target) -> dict:
    return draw(mcp_request(target) if target.framing == "mcp" else memory_request(target))


@st.composite
def bad_envelope(draw, target: Target) -> dict:
    message = request(draw, target)
    which = draw(st.sampled_from(["jsonrpc", "id", "method", "nomethod"]))
    if which == "jsonrpc":
        if draw(st.booleans()):
            del message["jsonrpc"]
        else:
            message["jsonrpc"] = draw(
                st.one_of(st.sampled_from(["1.0", "2", "2.0 "]), st.just(2.0), st.none())
            )
    elif which == "id":
        unreadable = [
            st.lists(st.integers(), max_size=2),
            st.booleans(),
            st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        ]
        message["id"] = draw(st.one_of(*unreadable))
    elif which == "method":
        message["method"] = draw(
            st.one_of(
                st.none(),
                st.integers(),
                st.lists(st.sampled_from(sorted(protocol.METHODS)), max_size=2),
            )
        )
    else:
        del message["method"]
    return message


@dataclass
class Case:
    data: bytes  # the bytes sent
    kind: str  # "request", "notification", "unreadable", "maybe" (null or nothing), "none"
    msg_id: Any = None
    method: str | None = None
    closes: bool = False  # over a limit: answered, then the connection is closed
    not_unicode: bool = False  # params hold a lone surrogate: -32602 expected
    promised: int = 0  # bytes a header promises beyond `data` (a body shorter than that)


def encode(message: Any) -> bytes:
    """JSON as a careful client sends it: UTF-8 text, lone surrogates as \\udxxx escapes (what
    JavaScript's JSON.stringify does), so that 40,000 bytes of "é" stay 40,000 bytes."""
    text = json.dumps(message, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode()


_SURROGATE = re.compile("[\ud800-\udfff]")
RAW_BODIES = [
    b"{",
    b"[]",
    b"[1, 2]",
    b"null",
    b'"x"',
    b"\xff\xfe{}",
    b"[" * 3000,
    b'{"jsonrpc": "2.0", "id": 1, "method": "memory/health", "params": {"a": "\xc3"}}',
    json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "memory/health"}]).encode(),
    b'{"jsonrpc":"2.0","id":10,"id":',  # cut short after a repeated key
    b'{"jsonrpc":"2.0","id":12,"meth',
]
BAD_HEADERS = [
    b"Content-Type: x\r\n\r\n",
    b"Content-Length: -1\r\n\r\n",
    b"Content-Length: 1e3\r\n\r\n",
    b"garbage\r\n\r\n",
    b"Content-Length: 99999999999999999999999\r\n\r\n",
]


def framed(target: Target, body: bytes) -> bytes:
    return frame(body) if target.framing == "lsp" else line(body)


@st.composite
def cases(draw, target: Target) -> Case:
    lines = target.framing != "lsp"
    choice = draw(st.integers(min_value=0, max_value=99))
    if choice < 55:
        message = request(draw, target)
    elif choice < 67:
        message = draw(lsp_request(target))
    elif choice < 82:
        message = draw(bad_envelope(target))
    elif choice < 87:
        body = draw(st.one_of(st.binary(max_size=120), st.sampled_from(RAW_BODIES)))
        if lines:
            body = body.replace(b"\n", b" ")
            if not body.strip():
                return Case(line(body), "none")  # a blank line: skipped
        return Case(framed(target, body), "unreadable")
    elif choice < 89:
        return truncated(draw, target)
    elif choice < 91:
        return short_body(draw, target)
    elif choice < 93:
        if lines:  # no headers on a line transport: a header is just text that is not JSON
            return Case(line(b"Content-Length: 12"), "unreadable")
        return Case(draw(st.sampled_from(BAD_HEADERS)), "unreadable", closes=target.gated)
    elif choice < 94:
        size = draw(st.integers(min_value=FRAME_LIMIT + 1, max_value=FRAME_LIMIT + 5000))
        if lines:
            return Case(b"{" * size + b"\n", "unreadable", closes=True)
        return Case(b"Content-Length: %d\r\n\r\n" % size + b"{" * size, "unreadable", closes=True)
    else:
        depth = draw(st.integers(min_value=65, max_value=5000))
        body = (
            '{"jsonrpc": "2.0", "id": 1, "method": "memory/health", "params": {"a": '
            + "[" * depth
            + "1"
            + "]" * depth
            + "}}"
        )  # json.dumps would recurse
        return Case(framed(target, body.encode()), "unreadable")
    body = encode(message)
    kind, msg_id = classify(message, target.framing)
    try:
        json.dumps(message, allow_nan=False)
    except ValueError:  # Infinity / NaN: not JSON, the frame is unreadable
        kind, msg_id = "unreadable", None
    closes = len(body) > FRAME_LIMIT
    if closes or _depth(message) > 64:
        kind, msg_id = "unreadable", None
    params = message.get("params")
    method = message.get("method") if isinstance(message.get("method"), str) else None
    if method == "tools/call" and isinstance(params, dict):
        method = str(params.get("name"))  # which tool: whether it writes
    return Case(
        framed(target, body),
        kind,
        msg_id,
        method,
        closes=closes,
        not_unicode=kind == "request"
        and isinstance(message.get("method"), str)
        and (message["method"] in protocol.METHODS or message["method"] == "tools/call")
        and isinstance(params, (dict, list) if target.framing != "mcp" else dict)
        and (target.framing == "owner" or message.get("jsonrpc") == "2.0")
        and _has_lone_surrogate(params)
        and not _has_lone_surrogate({k: v for k, v in message.items() if k not in ENVELOPE}),
    )


def truncated(draw, target: Target) -> Case:
    """A request's JSON text cut short, framed whole (-32700, id null); or, on LSP, bytes
    with no header before the next frame: a body sent without its header, or garbage over
    MAX_HEADER_BYTES. Those are answered once (-32700, id null) and skipped to the next
    `Content-Length:` (the sentinel's); before the token they close the connection. A cut
    frame still over max_frame_bytes is refused unread like any other (the connection closes)."""
    body = encode(request(draw, target))
    if target.framing == "lsp" and draw(st.booleans()):
        if draw(st.booleans()):
            return Case(body.replace(b"\n", b" "), "unreadable")
        size = draw(st.integers(min_value=1, max_value=20_000))
        return Case(b"X" * size, "unreadable")
    cut = draw(st.integers(min_value=1, max_value=max(1, len(body) - 1)))
    part = body[:cut].replace(b"\n", b" ")
    return Case(framed(target, part), "unreadable", closes=len(part) > FRAME_LIMIT)


ENVELOPE = ("params", "id")  # a lone surrogate in either: not an error of the envelope


def short_body(draw, target: Target) -> Case:
    """A frame whose header promises more bytes than its body has: a request's text, whole or
    cut, or bytes that are not JSON, then the next frame (the sentinel). Answered once
    (-32700, id null) when the next header has come, and read from there; before the token
    too (a header promising more than PREAUTH_BYTES leaves closes, as any other frame). On a
    line transport a line is its own frame: a cut line stands for it."""
    if target.framing != "lsp":
        return truncated(draw, target)
    text = encode(request(draw, target))
    body = draw(
        st.one_of(
            st.just(text),
            st.integers(0, max(0, len(text) - 1)).map(lambda n: text[:n]),
            st.binary(max_size=80).map(lambda b: b.replace(b"Content-Length", b"")),
        )
    )
    room = FRAME_LIMIT - len(body)
    short = draw(st.one_of(st.integers(1, 40), st.integers(1, max(1, min(room, 20_000)))))
    header = b"Content-Length: %d\r\n\r\n" % (len(body) + short)
    closes = len(body) + short > FRAME_LIMIT  # refused unread, as any frame over the limit
    return Case(header + body, "unreadable", promised=short, closes=closes)


def classify(message: dict, framing: str) -> tuple[str, Any]:
    """What the server must answer: (kind, the id it answers with)."""
    msg_id = message.get("id")
    readable = "id" in message and readable_id(msg_id)
    method_ok = isinstance(message.get("method"), str)
    if readable:
        return "request", msg_id
    if "id" in message and msg_id is not None:
        return "unreadable", None  # an id the server cannot use: answered with id null
    if framing == "owner":  # no jsonrpc member; a line without a method is answered
        return ("notification" if method_ok else "unreadable"), None
    if not method_ok or message.get("jsonrpc") != "2.0":
        return "maybe", None  # invalid, with no usable id: answered null or not
    return "notification", None


def _depth(value: Any, level: int = 1) -> int:
    """Nesting of arrays and objects, as the server counts it (the message itself is 1)."""
    if isinstance(value, dict):
        return max([level] + [_depth(v, level + 1) for v in value.values()])
    if isinstance(value, list):
        return max([level] + [_depth(v, level + 1) for v in value])
    return 0


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


# ---------------------------------------------------------------- one example


def snapshot(target: Target) -> list:
    out = []
    for project in target.projects:
        stats = target.peer.call("memory/stats", {"project": project})["result"]
        stats.pop("indexPending", None)
        audit = target.peer.call("memory/audit", {"project": project, "limit": 1})["result"]
        out.append((stats, [e["seq"] for e in audit["entries"]]))
    return out


def outcome(target: Target, answer: dict) -> str:
    """An answer as a label: "ok", "isError" (an MCP tool refused), or the error's code or
    (owner socket) kind."""
    if "result" in answer:
        result = answer["result"]
        return "isError" if isinstance(result, dict) and result.get("isError") else "ok"
    error = answer["error"]
    return str(error.get("kind") if target.framing == "owner" else error.get("code"))


SENTINEL_METHOD = {"lsp": "memory/health", "owner": "memory/health", "mcp": "ping"}


SENTINEL_ROOM = 256  # bytes kept for the sentinel frame before the token


def within_preauth(target: Target, case: Case) -> None:
    """Before the token a connection may send PREAUTH_BYTES in all: a frame that would pass
    it must close the connection, so a case that fits on a fresh one gets a fresh one."""
    room = PREAUTH_BYTES - SENTINEL_ROOM
    size = len(case.data) + case.promised  # the server counts what a header promises
    if len(case.data) > PREAUTH_BYTES:
        return  # refused on any connection (case.closes)
    assume(size <= room)  # the case would pass, its sentinel would not
    if target.used + size > room:
        assert target.reopen is not None
        target.peer.close()
        target.peer = target.reopen()
        target.used = 0


def over_the_frame_limit(target: Target, data: bytes) -> bool:
    """Whether the server must refuse `data` unread as a frame over max_frame_bytes."""
    if target.framing == "lsp":
        header = re.match(rb"Content-Length: (\d{1,18})\r\n\r\n", data)  # more: not a count
        return header is not None and int(header.group(1)) > FRAME_LIMIT
    return len(data.rstrip(b"\n")) > FRAME_LIMIT


def run_case(target: Target, case: Case) -> None:
    assert case.closes or not over_the_frame_limit(target, case.data), (
        "the fuzzer drew a frame over the limit without expecting the close",
        case.data[:300],
    )
    mutating = case.kind == "request" and case.method in target.mutating and not target.gated
    if target.gated:
        within_preauth(target, case)
    before = (target.snapshot or snapshot)(target) if mutating else None
    target.sent += 1
    target.used += len(case.data)
    peer = target.peer
    try:
        peer.send(case.data)
    except OSError as exc:  # the server closed before the frame was all written: it refused it
        if not case.closes:
            raise AssertionError(f"the server went away: {target.status()}") from exc
    if case.closes:
        return closed(target, case)
    answers = []
    if case.kind == "request":  # replies may come out of order: wait for this one first
        while not any(a.get("id") == case.msg_id for a in answers):
            message = peer.answer(timeout=30)
            assert message is not None, f"closed after {case.data[:300]!r}"
            answers.append(message)
    sentinel = f"sentinel-{target.sent}"
    method = SENTINEL_METHOD[target.framing]
    sentinel_frame = peer.frame({"jsonrpc": "2.0", "id": sentinel, "method": method})
    target.used += len(sentinel_frame)
    peer.send(sentinel_frame)
    while True:
        message = peer.answer(timeout=30)
        if message is None and case.kind in ("unreadable", "maybe") and target.gated:
            return closed(target, case, answers, ended=True)  # a bad header before the token
        assert message is not None, f"the server closed the connection after {case.data[:300]!r}"
        if message.get("id") == sentinel:
            assert ("error" if target.gated else "result") in message, message
            break
        answers.append(message)
    check(target, case, answers)
    if mutating and answers and outcome(target, answers[0]) not in ("ok",):
        assert (target.snapshot or snapshot)(target) == before, (case.data[:300], answers)
    assert target.alive(), f"the server died: {target.status()}"


def check(target: Target, case: Case, answers: list[dict]) -> None:
    for a in answers:
        label = outcome(target, a)
        assert label not in ("-32603", "internal"), (case.data[:300], a)
        assert no_trace(a), (case.data[:300], a)
        assert not (target.gated and label in ("ok", "isError")), (case.data[:300], a)
    ids = [a.get("id") for a in answers]
    if case.kind == "request":
        assert ids == [case.msg_id], (case.data[:300], answers)
    elif case.kind in ("notification", "none"):
        assert answers == [], (case.data[:300], answers)
    elif case.kind == "unreadable":
        assert ids == [None], (case.data[:300], answers)
    else:  # "maybe"
        assert ids in ([], [None]), (case.data[:300], answers)
    if case.not_unicode and not target.gated:
        error = answers[0].get("error") or {}
        assert outcome(target, answers[0]) in ("-32602", "invalid_params"), (
            case.data[:300],
            answers,
        )
        named = (
            error.get("field")
            if target.framing == "owner"
            else (error.get("data") or {}).get("field")
        )
        assert named is not None and "Unicode" in error["message"], (case.data[:300], answers)
    label = outcome(target, answers[0]) if answers else "none"
    target.counts[label] = target.counts.get(label, 0) + 1
    edge = (
        "short body" if case.promised else "surrogate id" if case.msg_id in SURROGATE_IDS else None
    )
    if edge is not None:
        target.edges[edge] = target.edges.get(edge, 0) + 1


def closed(
    target: Target, case: Case, answers: list[dict] | None = None, *, ended: bool = False
) -> None:
    """A frame over a limit (or, before the token, a bad header): answered with id null, then
    the connection closed; a new connection (or server) for the next example."""
    answers = list(answers or [])
    while not ended:  # (ended: the end of the connection was read already)
        message = target.peer.answer(timeout=30)
        if message is None:
            break
        answers.append(message)
    assert [a.get("id") for a in answers] == [None], (case.data[:300], answers)
    assert no_trace(answers[0]), answers
    if len(case.data) > FRAME_LIMIT:
        error = answers[0]["error"]
        assert "limit" in json.dumps(error) or "LIMIT" in json.dumps(error), answers
    assert target.reopen is not None
    target.peer = target.reopen()
    target.used = 0
    target.reopened += 1
    label = "closed"
    target.counts[label] = target.counts.get(label, 0) + 1
