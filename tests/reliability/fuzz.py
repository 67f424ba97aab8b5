"""The fuzzer: hypothesis over the real server, stdio and TCP.

Each example is one frame: a memory/* request with fuzzed params (every method of
`protocol.METHODS`, every field of its params, valid values mixed with wrong types, NUL,
lone surrogates, huge numbers and lists, deep nesting, unknown keys), a standard LSP method,
an envelope that is wrong (jsonrpc, id, method), a body that is not JSON, a header without
Content-Length, or a frame over max_frame_bytes. After it a sentinel request is sent; the
example passes when, before the sentinel's reply arrived:

- a request (an id the server can read) got exactly one answer with its id, an unreadable
  one an answer with id null, a notification none;
- no answer was -32603 or carried a traceback or a path;
- a refused mutating request changed nothing (stats and audit of both projects);
- the server is still running. No answer within 30 s is a hang.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from memls import protocol
from reliability.wire import Peer, frame, no_trace

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
    sent: int = 0
    counts: dict[str, int] = field(default_factory=dict)


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
            "é" * 20_000,
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
            st.just(["note"] * 100_000),
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
    message = {
        "jsonrpc": "2.0",
        "id": draw(
            st.one_of(
                st.integers(0, 2**31), st.text(alphabet="abcdef0123456789", min_size=1, max_size=12)
            )
        ),
        "method": method,
    }
    if params is not None or draw(st.booleans()):
        message["params"] = params
    return message


@st.composite
def lsp_request(draw, target: Target) -> dict:
    method = draw(st.sampled_from(LSP_METHODS))
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": draw(junk)}
    if draw(st.booleans()):
        message["id"] = draw(st.integers(0, 2**31))
    return message


@st.composite
def bad_envelope(draw, target: Target) -> dict:
    message = draw(memory_request(target))
    which = draw(st.sampled_from(["jsonrpc", "id", "method", "nomethod"]))
    if which == "jsonrpc":
        if draw(st.booleans()):
            del message["jsonrpc"]
        else:
            message["jsonrpc"] = draw(
                st.one_of(st.sampled_from(["1.0", "2", "2.0 "]), st.just(2.0), st.none())
            )
    elif which == "id":
        message["id"] = draw(
            st.one_of(
                st.lists(st.integers(), max_size=2),
                st.booleans(),
                st.floats(allow_nan=False),
                st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
            )
        )
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
    kind: str  # "request", "notification", "unreadable"
    msg_id: Any = None
    method: str | None = None


def encode(message: Any) -> bytes:
    return json.dumps(message).encode()  # lone surrogates go out as \udxxx escapes


@st.composite
def cases(draw, target: Target) -> Case:
    choice = draw(st.integers(min_value=0, max_value=99))
    if choice < 55:
        message = draw(memory_request(target))
    elif choice < 67:
        message = draw(lsp_request(target))
    elif choice < 82:
        message = draw(bad_envelope(target))
    elif choice < 88:
        body = draw(
            st.one_of(
                st.binary(max_size=120),
                st.sampled_from(
                    [
                        b"{",
                        b"[]",
                        b"[1, 2]",
                        b"null",
                        b'"x"',
                        b"\xff\xfe{}",
                        b"[" * 3000,
                        b'{"jsonrpc": "2.0", "id": 1, "method": "memory/health", '
                        b'"params": {"a": "\xc3"}}',
                        json.dumps(
                            [{"jsonrpc": "2.0", "id": 1, "method": "memory/health"}]
                        ).encode(),
                    ]
                ),
            )
        )
        return Case(frame(body), "unreadable")
    elif choice < 93:
        header = draw(
            st.sampled_from(
                [
                    b"Content-Type: x\r\n\r\n",
                    b"Content-Length: -1\r\n\r\n",
                    b"Content-Length: 1e3\r\n\r\n",
                    b"garbage\r\n\r\n",
                    b"Content-Length: 99999999999999999999999\r\n\r\n",
                ]
            )
        )
        return Case(header, "unreadable")
    elif choice < 96:
        size = draw(st.integers(min_value=FRAME_LIMIT + 1, max_value=FRAME_LIMIT + 5000))
        return Case(b"Content-Length: %d\r\n\r\n" % size + b"{" * size, "unreadable")
    else:
        depth = draw(st.integers(min_value=65, max_value=5000))
        body = (
            '{"jsonrpc": "2.0", "id": 1, "method": "memory/health", "params": {"a": '
            + "[" * depth
            + "1"
            + "]" * depth
            + "}}"
        )  # json.dumps would recurse
        return Case(frame(body), "unreadable")
    body = encode(message)
    readable_id = (
        "id" in message
        and isinstance(message["id"], (int, str))
        and not isinstance(message["id"], bool)
    )
    try:
        json.dumps(message, allow_nan=False)
        strict = True
    except ValueError:  # Infinity / NaN: not JSON, the frame is unreadable
        strict = False
    if (
        not strict
        or len(body) > FRAME_LIMIT
        or _depth(message) > 64
        or ("\\ud" in body.decode() and _has_lone_surrogate(message))
    ):
        kind = "unreadable"
    elif readable_id:
        kind = "request"
    elif "id" in message and message["id"] is not None:
        kind = "unreadable"  # an id the server cannot use: answered with id null
    elif (
        "method" not in message
        or not isinstance(message.get("method"), str)
        or message.get("jsonrpc") != "2.0"
    ):
        kind = "maybe"  # invalid, with no usable id: answered null or (notification) not
    else:
        kind = "notification"
    return Case(
        frame(body),
        kind,
        message.get("id") if readable_id else None,
        message.get("method") if isinstance(message.get("method"), str) else None,
    )


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


def run_case(target: Target, case: Case) -> None:
    mutating = case.kind == "request" and case.method in MUTATING
    before = snapshot(target) if mutating else None
    target.sent += 1
    sentinel = f"sentinel-{target.sent}"
    target.peer.send(case.data)
    answers = []
    if case.kind == "request":  # replies may come out of order: wait for this one first
        while not any(a.get("id") == case.msg_id for a in answers):
            message = target.peer.answer(timeout=30)
            assert message is not None, f"closed after {case.data[:300]!r}"
            answers.append(message)
    target.peer.send(frame({"jsonrpc": "2.0", "id": sentinel, "method": "memory/health"}))
    while True:
        message = target.peer.answer(timeout=30)
        assert message is not None, f"the server closed the connection after {case.data[:300]!r}"
        if message.get("id") == sentinel:
            assert "result" in message, message
            break
        answers.append(message)
    for a in answers:
        assert "error" not in a or a["error"]["code"] != -32603, (case.data[:300], a)
        assert no_trace(a), (case.data[:300], a)
    ids = [a.get("id") for a in answers]
    if case.kind == "request":
        assert ids == [case.msg_id], (case.data[:300], answers)
    elif case.kind == "notification":
        assert answers == [], (case.data[:300], answers)
    elif case.kind == "unreadable":
        assert ids == [None], (case.data[:300], answers)
    else:  # "maybe"
        assert ids in ([], [None]), (case.data[:300], answers)
    outcome = (
        "ok"
        if answers and "result" in answers[0]
        else (str(answers[0]["error"]["code"]) if answers else "none")
    )
    target.counts[outcome] = target.counts.get(outcome, 0) + 1
    if mutating and answers and "error" in answers[0]:
        assert snapshot(target) == before, (case.data[:300], answers)
    assert target.alive(), "the server died"
