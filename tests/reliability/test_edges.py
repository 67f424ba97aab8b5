"""The wire's edges on every transport (test_transport.py has more of LSP stdio's): LSP over
stdio and TCP, the owner socket, MCP over stdio, each against a real process.

- JSON that is not valid Unicode (a lone surrogate escape, as JavaScript's JSON.stringify
  writes a string cut inside an emoji) is answered with the request's id, naming the field;
  an id that holds one is answered as sent, written back as the same escape (the replies
  are read as strict UTF-8: one that is not fails the test); input that is not JSON keeps
  id null;
- a JSON text cut short is answered -32700 with id null on every transport;
- a frame whose body is shorter than its Content-Length is answered once (-32700, id null)
  when the next frame's header comes, and that frame is read;
- a frame (line) over max_frame_bytes is answered with id null and the connection closed;
  a stdio server exits with status 1 and says so on stderr; the daemon serves on.
"""

from __future__ import annotations

import json
import queue

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_helpers import free_port, wait_for_port
from memls.lsp.frames import HEADER_LINE, HEADER_START
from reliability.wire import (
    TOKEN,
    McpServer,
    OwnerPeer,
    StdioServer,
    TcpDaemon,
    data_dir,
    frame,
    line,
    no_trace,
)

SMALL_FRAMES = "[index]\nvectors = false\n[limits]\nmax_frame_bytes = 65536\n"
SURROGATE_STORE = b'{"jsonrpc":"2.0","id":7,"method":"memory/store","params":{"text":"a\\ud800b"}}'


@pytest.fixture
def daemon(tmp_path):
    port = free_port()
    d = TcpDaemon(data_dir(tmp_path, SMALL_FRAMES), port)
    d.data = tmp_path / "data"
    assert wait_for_port(port), d.log()
    yield d
    d.stop()


def test_the_owner_socket_answers_a_lone_surrogate_with_its_id_and_the_field(daemon, root):
    peer = OwnerPeer(daemon.data)
    try:
        peer.send(
            line(
                b'{"id":7,"method":"memory/store","params":{"text":"a\\ud800b","project":"'
                + str(root).encode()
                + b'"}}'
            )
        )
        reply = peer.answer(timeout=30)
        assert reply["id"] == 7 and reply["error"]["kind"] == "invalid_params", reply
        assert reply["error"]["field"] == "text" and "Unicode" in reply["error"]["message"]
        peer.send(line(b'{"id": 8, "method": "memory/health"'))  # not JSON: id unknown
        reply = peer.answer(timeout=30)
        assert reply["id"] is None and reply["error"]["kind"] == "parse_error", reply
        stats = peer.call("memory/stats", {"project": str(root)})["result"]
        assert stats["memories"] == 0
    finally:
        peer.close()


def test_a_line_over_the_limit_closes_only_that_owner_connection(daemon, root):
    peer = OwnerPeer(daemon.data)
    peer.send(b"{" * 70_000 + b"\n")
    reply = peer.answer(timeout=30)
    assert reply["id"] is None and reply["error"]["kind"] == "invalid_request", reply
    assert reply["error"]["limit"] == "max_frame_bytes"
    assert peer.answer(timeout=30) is None  # closed
    peer.close()
    other = OwnerPeer(daemon.data)
    try:
        assert "version" in other.call("memory/health", {})["result"]
    finally:
        other.close()
    assert daemon.alive()


def test_tcp_answers_a_lone_surrogate_with_its_id(daemon, root):
    peer = daemon.connect()
    try:
        assert "result" in peer.initialize(root, TOKEN)
        peer.send(frame(SURROGATE_STORE))
        reply = peer.answer(timeout=30)
        assert reply["id"] == 7 and reply["error"]["code"] == -32602, reply
        assert reply["error"]["data"]["field"] == "text"
    finally:
        peer.close()


@pytest.fixture
def mcp(tmp_path, root):
    server = McpServer(data_dir(tmp_path, SMALL_FRAMES), root)
    assert "result" in server.initialize()
    yield server
    if server.alive():
        server.close()


@pytest.mark.parametrize(
    "body,code,msg_id,named",
    [
        (
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
            b'"params":{"name":"remember","arguments":{"text":"a\\ud800b"}}}',
            -32602,
            7,
            "arguments.text",
        ),
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call"', -32700, None, None),
        (b"[1, 2]", -32600, None, None),
        (b'{"jsonrpc":"1.0","id":8,"method":"tools/list"}', -32600, 8, None),
        (b'{"jsonrpc":"2.0","id":9,"method":"no/such"}', -32601, 9, None),
        (
            b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":5}}',
            -32602,
            10,
            "name",
        ),
        (b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":"x"}', -32600, 11, None),
        (b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}', -32700, None, None),  # past a float
    ],
)
def test_mcp_answers_what_it_refuses_with_the_id(mcp, body, code, msg_id, named):
    mcp.peer.send(line(body))
    reply = mcp.peer.answer(timeout=30)
    assert reply["id"] == msg_id and reply["error"]["code"] == code, reply
    assert no_trace(reply)
    if named is not None:
        assert reply["error"]["data"]["field"] == named, reply
    assert mcp.peer.call("ping")["result"] == {}


def test_an_mcp_line_over_the_limit_is_refused_and_the_server_exits_to_restart(mcp):
    mcp.peer.send(b"{" * 70_000 + b"\n")
    reply = mcp.peer.answer(timeout=30)
    assert reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert reply["error"]["data"]["limit"] == "max_frame_bytes"
    assert mcp.peer.answer(timeout=30) is None
    assert mcp.proc.wait(timeout=60) == 1
    mcp.stderr.close()
    said = mcp.log()[mcp.log().rfind("memls: closing the connection") :]
    assert "max_frame_bytes" in said and "Traceback" not in said, mcp.log()[-2000:]


def test_a_client_of_the_owner_refuses_a_request_over_the_limit_before_sending_it(daemon, root):
    from memls import limits
    from memls.daemon import RemoteEngine

    before = limits.current()
    limits.configure(limits.Limits(max_frame_bytes=65536))  # as the daemon's config.toml
    remote = RemoteEngine.connect(daemon.data, front="test")
    try:
        with pytest.raises(limits.LimitExceeded) as refused:
            remote.import_(str(root), ["x" * 70_000])
        assert refused.value.limit == "max_frame_bytes" and "not sent" in refused.value.message
        assert list(remote.export(str(root))) is not None  # the connection is still there
        assert not remote.closed
    finally:
        remote.close()
        limits.configure(before)


def test_the_owner_socket_answers_every_number_id_as_sent(daemon):
    peer = OwnerPeer(daemon.data)
    try:
        for msg_id in [1.5, 100000000000, -3, 10**30]:
            peer.send(line({"id": msg_id, "method": "memory/health"}))
            reply = peer.answer(timeout=30)
            assert reply["id"] == msg_id and "result" in reply, reply
        peer.send(line(b'{"id": 2.5, "method": "no/such"}'))
        reply = peer.answer(timeout=30)
        assert reply["id"] == 2.5 and reply["error"]["kind"] == "method_not_found", reply
    finally:
        peer.close()


def test_tcp_answers_every_number_id_as_sent_and_skips_a_body_without_its_header(daemon, root):
    peer = daemon.connect()
    try:
        assert "result" in peer.initialize(root, TOKEN)
        for msg_id in [1.5, 100000000000, 10**30]:
            peer.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": "memory/health"}))
            assert peer.answer(timeout=30)["id"] == msg_id
        peer.send(
            b'{"jsonrpc": "2.0", "id": 1}'
            + frame({"jsonrpc": "2.0", "id": 2, "method": "memory/health"})
        )
        assert peer.answer(timeout=30)["error"]["code"] == -32700
        assert peer.answer(timeout=30)["id"] == 2
    finally:
        peer.close()


# ---------------------------------------------------------------- every transport


@pytest.fixture
def stdio(tmp_path, root):
    server = StdioServer(data_dir(tmp_path, SMALL_FRAMES))
    assert "result" in server.peer.initialize(root)
    yield server
    server.close()


def connect(transport, request):
    """A peer on `transport` ("stdio", "tcp", "owner", "mcp"), initialized where it must be."""
    if transport == "stdio":
        return request.getfixturevalue("stdio").peer
    if transport == "mcp":
        return request.getfixturevalue("mcp").peer
    daemon = request.getfixturevalue("daemon")
    if transport == "owner":
        peer = OwnerPeer(daemon.data)
    else:
        peer = daemon.connect()
        assert "result" in peer.initialize(request.getfixturevalue("root"), TOKEN)
    request.addfinalizer(peer.close)
    return peer


def envelope(framing: str, members: bytes, close: bool = True) -> bytes:
    """A JSON object with these members (and `jsonrpc` where the framing has it) as one
    message of that framing; `close=False` leaves the object unclosed: a text cut short."""
    text = (b"{" if framing == "owner" else b'{"jsonrpc":"2.0",') + members
    text += b"}" if close else b""
    return frame(text) if framing == "lsp" else line(text)


TRANSPORTS = ["stdio", "tcp", "owner", "mcp"]
NO_PARAMS = {  # methods a request may send without params
    "stdio": [b"memory/health", b"memory/stats", b"memory/list"],
    "tcp": [b"memory/health", b"memory/stats", b"memory/list"],
    "owner": [b"memory/health", b"memory/stats", b"memory/list"],
    "mcp": [b"ping", b"tools/list", b"prompts/list"],
}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_id_holding_a_lone_surrogate_is_answered_with_that_id(transport, request):
    """The id `"\\ud800"` is valid JSON and not valid Unicode. JSON-RPC: the reply's id MUST be
    the request's; it is written back as the escape `\\ud800` (ASCII: valid JSON and valid
    UTF-8), which the client's parser reads as the very string it sent."""
    peer = connect(transport, request)
    framing = peer.framing
    for method in NO_PARAMS[transport]:
        peer.send(envelope(framing, b'"id":"\\ud800","method":"' + method + b'"'))
        reply = peer.answer(timeout=30)
        assert reply is not None, "no reply, or one that is not UTF-8 JSON text"
        assert reply["id"] == "\ud800", reply
        assert "result" in reply or reply["error"].get("kind") not in ("internal", None), reply
        assert no_trace(reply)
    # a surrogate in the id and in params: the id kept, the field named
    params = (
        b'{"text":"a\\udfffb"}'
        if transport != "mcp"
        else b'{"name":"recall","arguments":{"query":"a\\udfffb"}}'
    )
    method = b"memory/store" if transport != "mcp" else b"tools/call"
    peer.send(envelope(framing, b'"id":"x\\udc00","method":"' + method + b'","params":' + params))
    reply = peer.answer(timeout=30)
    assert reply["id"] == "x\udc00", reply
    code = reply["error"].get("kind" if framing == "owner" else "code")
    assert code in ("invalid_params", -32602) and "Unicode" in reply["error"]["message"], reply


CUT_SHORT = [b'"id":10,"id":', b'"id":12,"meth']


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_json_text_cut_short_is_a_parse_error_with_id_null(transport, request):
    peer = connect(transport, request)
    parse_error = "parse_error" if peer.framing == "owner" else -32700
    after = b'"id":"after","method":"' + NO_PARAMS[transport][0] + b'"'
    for cut in CUT_SHORT:
        peer.send(envelope(peer.framing, cut, close=False) + envelope(peer.framing, after))
        reply = peer.answer(timeout=30)
        kind = reply["error"].get("kind" if peer.framing == "owner" else "code")
        assert reply["id"] is None and kind == parse_error, reply
        assert peer.answer(timeout=30)["id"] == "after"


NEXT = {"jsonrpc": "2.0", "id": "next", "method": "memory/health"}
WHOLE = b'{"jsonrpc": "2.0", "id": 41, "method": "memory/health"}'


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
def test_json_texts_cut_short_behind_a_short_body_are_answered(transport, request):
    """Where cut texts went unanswered: behind a frame whose header promised more bytes than
    its body held, the frames that followed were read as the rest of that body."""
    peer = connect(transport, request)
    peer.send(b"Content-Length: 160\r\n\r\n" + WHOLE)
    for cut in CUT_SHORT:
        peer.send(envelope("lsp", cut, close=False))
    peer.send(frame(NEXT))
    answers = [peer.answer(timeout=30) for _ in range(4)]
    assert [a["id"] for a in answers] == [None, None, None, "next"], answers
    assert all(a["error"]["code"] == -32700 for a in answers[:3]), answers


HEADER_OF_NEXT = len(b"Content-Length: %d\r\n" % len(json.dumps(NEXT)))


@pytest.mark.parametrize(
    "short",
    [1, 7, HEADER_OF_NEXT - 1, HEADER_OF_NEXT, HEADER_OF_NEXT + 2, 30, 5000],
    ids=[
        "1 byte",
        "7 bytes",
        "all but the line end",
        "the header line",
        "the blank line",
        "into the next body",
        "past the next frame",
    ],
)
@pytest.mark.parametrize("body", [WHOLE, WHOLE[:30], b""], ids=["whole", "cut", "empty"])
@pytest.mark.parametrize("transport", ["stdio", "tcp"])
def test_a_body_shorter_than_its_content_length_is_answered_and_the_next_frame_read(
    transport, body, short, request
):
    """The header promises `short` bytes more than come before the next frame's header: the
    frame is answered once (-32700, id null) as soon as that header has come (the client
    waits for its next reply; nothing else would come), and the next frame is read."""
    peer = connect(transport, request)
    peer.send(b"Content-Length: %d\r\n\r\n" % (len(body) + short) + body)
    peer.send(frame(NEXT))
    reply = peer.answer(timeout=30)
    assert reply["id"] is None and reply["error"]["code"] == -32700, reply
    assert peer.answer(timeout=30)["id"] == "next"
    peer.send(frame({**NEXT, "id": "after"}))
    assert peer.answer(timeout=30)["id"] == "after"  # nothing else was answered between


def test_a_short_body_before_the_token_is_answered_and_the_next_frame_read(daemon):
    peer = daemon.connect()
    try:
        peer.send(b"Content-Length: 500\r\n\r\n" + WHOLE[:20])
        peer.send(frame(NEXT))
        reply = peer.answer(timeout=30)
        assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        reply = peer.answer(timeout=30)
        assert reply["id"] == "next" and reply["error"]["code"] == -32002, reply
    finally:
        peer.close()


@pytest.mark.parametrize(
    "before",
    [b"Content-Length: 40\r\n", b"XXXX\r\n", b"Content-Length: x\r\n"],
    ids=["a header with no blank line and no body", "a stray line", "a bad header"],
)
def test_a_header_line_then_a_whole_frame_costs_one_answer_not_the_frame(stdio, before):
    stdio.peer.send(before + frame(NEXT))
    reply = stdio.peer.answer(timeout=30)
    assert reply["id"] is None and reply["error"]["code"] == -32700, reply
    assert stdio.peer.answer(timeout=30)["id"] == "next"


def test_a_body_shorter_than_promised_waits_only_for_the_next_header(stdio):
    """What the rule cannot know: until the next frame's header line has come, the N bytes may
    still be on their way; the short frame is answered when that line comes, not before."""
    body = json.dumps(NEXT).encode()
    stdio.peer.send(b"Content-Length: 90\r\n\r\n" + WHOLE[:20])
    with pytest.raises(queue.Empty):
        stdio.peer.answer(timeout=1)
    stdio.peer.send(b"Content-Length: %d\r" % len(body))  # the line is not whole yet
    with pytest.raises(queue.Empty):
        stdio.peer.answer(timeout=1)
    stdio.peer.send(b"\n\r\n" + body)
    assert stdio.peer.answer(timeout=30)["error"]["code"] == -32700
    assert stdio.peer.answer(timeout=30)["id"] == "next"


# ---------------------------------------------------------------- the rule's ground

texts = st.lists(
    st.sampled_from(["Content-Length", ": ", "12", "\r", "\n", "\t", " ", "c", "é", "x"]),
    max_size=20,
).map("".join)
values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        texts,
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(value=values, ascii_only=st.booleans(), indent=st.sampled_from([None, 0, 2]))
def test_no_json_text_holds_a_content_length_line_or_ends_inside_one(value, ascii_only, indent):
    """The ground of the short-body rule: a whole `Content-Length: N` line never lies inside a
    JSON text (the name only inside a string, and a string holds no raw line break), and a
    JSON text never ends with the start of one; so no valid body is ever cut by it."""
    for text in (
        json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode(),
        msgspec.json.encode(value),
    ):
        assert HEADER_LINE.search(text) is None, text
        assert not any(
            HEADER_START.fullmatch(text, at) for at in range(len(text)) if text[at] in b"cC"
        ), text
