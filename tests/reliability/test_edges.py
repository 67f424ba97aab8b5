"""The wire's edges on the transports besides LSP stdio (test_transport.py has those): the owner
socket, MCP over stdio and LSP over TCP, each against a real process.

- JSON that is not valid Unicode (a lone surrogate escape, as JavaScript's JSON.stringify
  writes a string cut inside an emoji) is answered with the request's id, naming the field;
  input that is not JSON keeps id null;
- a frame (line) over max_frame_bytes is answered with id null and the connection closed;
  a stdio server exits with status 1 and says so on stderr; the daemon serves on.
"""

from __future__ import annotations

import pytest

from lsp_helpers import free_port, wait_for_port
from reliability.wire import (
    TOKEN,
    McpServer,
    OwnerPeer,
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
