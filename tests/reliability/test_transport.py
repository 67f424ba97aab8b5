"""Regressions at the wire: frames, envelopes, exit, internal errors.

Each test drives a real `memls serve` process (stdio or TCP) with raw frames, as an attacker or
a careless client would, and checks that every request is answered with the right JSON-RPC
code, that no answer carries a traceback or a path, and that the server is still there.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from lsp_helpers import free_port, wait_for_port
from memls import limits
from reliability.wire import TOKEN, StdioServer, TcpDaemon, data_dir, frame, no_trace, rss_kib


@pytest.fixture
def stdio(tmp_path, root):
    server = StdioServer(data_dir(tmp_path))
    assert "result" in server.peer.initialize(root)
    yield server
    server.close()


@pytest.fixture
def daemon(tmp_path):
    port = free_port()
    d = TcpDaemon(data_dir(tmp_path), port)
    assert wait_for_port(port), d.log()
    yield d
    d.stop()


def health_ok(peer) -> bool:
    reply = peer.call("memory/health", {}, timeout=30)
    return "version" in reply.get("result", {})


# ---------------------------------------------------------------- frames


def test_a_huge_content_length_on_stdio_is_refused_unread_and_the_server_exits_to_restart(stdio):
    peer = stdio.peer
    peer.send(b"Content-Length: 100000000000\r\n\r\n{}")
    reply = peer.answer(timeout=30)
    assert reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert "max_frame_bytes" in reply["error"]["message"]
    assert reply["error"]["data"]["limit"] == "max_frame_bytes"
    assert peer.answer(timeout=30) is None  # the connection is closed, not left waiting
    assert stdio.proc.wait(timeout=30) == 1  # LSP: an exit without shutdown is status 1
    stdio.stderr.close()
    said = stdio.log()[stdio.log().rfind("memls: closing the connection") :]
    assert "max_frame_bytes" in said and "Traceback" not in said, stdio.log()[-2000:]


def test_an_oversized_frame_of_an_authenticated_tcp_client_closes_only_its_connection(
    tmp_path, root
):
    port = free_port()
    config = "[index]\nvectors = false\n[limits]\nmax_frame_bytes = 65536\n"
    daemon = TcpDaemon(data_dir(tmp_path, config), port)
    try:
        assert wait_for_port(port), daemon.log()
        peer = daemon.connect()
        assert "result" in peer.initialize(root, TOKEN)
        big = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "memory/store", "params": {"text": "x" * 70_000}}
        )
        peer.send(frame(big))
        reply = peer.answer(timeout=30)
        assert reply["id"] is None and "max_frame_bytes = 65536" in reply["error"]["message"]
        assert peer.answer(timeout=30) is None  # closed
        other = daemon.connect()
        assert "result" in other.initialize(root, TOKEN) and health_ok(other)
        listed = other.call("memory/list", {"project": str(root)})["result"]["memories"]
        assert listed == []
        other.close()
        assert daemon.alive()
    finally:
        assert daemon.stop() == 0


def test_a_lone_surrogate_is_answered_with_the_id_naming_the_field(stdio):
    peer = stdio.peer
    peer.send(
        frame(b'{"jsonrpc":"2.0","id":7,"method":"memory/store","params":{"text":"a\\ud800b"}}')
    )
    reply = peer.answer(timeout=30)
    assert reply["id"] == 7 and reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["field"] == "text" and "Unicode" in reply["error"]["message"]
    assert health_ok(peer)


@pytest.mark.parametrize("arguments", [[{"uri": 5}], "notalist", [5], [{"uri": "x", "range": 3}]])
def test_bad_command_arguments_are_invalid_params(stdio, arguments):
    reply = stdio.peer.call(
        "workspace/executeCommand", {"command": "memls.open", "arguments": arguments}
    )
    assert reply["error"]["code"] == -32602, reply
    assert no_trace(reply)


def test_a_200_mb_frame_without_the_token_costs_the_daemon_nothing(daemon):
    before = rss_kib(daemon.proc.pid)
    stranger = daemon.connect()
    stranger.send(b"Content-Length: 200000000\r\n\r\n")
    chunk = b"x" * (1 << 20)
    sent = 0
    try:
        while sent < 200_000_000:
            stranger.sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass  # the daemon closed the connection
    reply = stranger.answer(timeout=30)
    assert reply is not None and reply["error"]["code"] == -32600, reply
    assert "PREAUTH_BYTES" in reply["error"]["message"]
    assert stranger.answer(timeout=30) is None  # and then closed the connection
    stranger.close()
    grown = rss_kib(daemon.proc.pid) - before
    assert grown < 16 * 1024, f"the daemon's peak memory grew by {grown} KiB"
    assert sent < 200_000_000, "the daemon kept reading a frame it had refused"
    assert daemon.alive()


def flood(port: int, head: bytes, chunk: bytes, total: int) -> tuple[int, bytes]:
    """One client without the token: `head`, then `chunk` until `total` bytes or the daemon
    closes; returns (bytes sent, what the daemon answered)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sent = 0
    try:
        sock.sendall(head)
        while sent < total:
            sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass  # the daemon closed the connection
    answer = b""
    try:
        sock.settimeout(30)
        while data := sock.recv(65536):
            answer += data
    except OSError:
        pass
    sock.close()
    return sent, answer


FLOODS = {
    "one 200 MB frame": (b"Content-Length: 200000000\r\n\r\n", b"x" * (1 << 20)),
    "200 MB of 60 KB frames": (
        b"",
        frame(
            {"jsonrpc": "2.0", "id": 1, "method": "memory/stats", "params": {"pad": "x" * 60_000}}
        ),
    ),
}


@pytest.mark.parametrize("kind", sorted(FLOODS))
def test_twenty_clients_without_the_token_sending_200_mb_each_cost_the_daemon_little(daemon, kind):
    """20 connections at once, each trying to send 200 MB before the token (one frame, or
    frames under the per-frame limit): each is cut off after PREAUTH_BYTES (and the linger
    after a refusal), and the daemon's resident memory stays where it was."""
    from concurrent.futures import ThreadPoolExecutor

    head, chunk = FLOODS[kind]
    pid = daemon.proc.pid
    rss_before, peak_before = rss_kib(pid, "VmRSS"), rss_kib(pid)
    started = time.monotonic()
    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(lambda _: flood(daemon.port, head, chunk, 200_000_000), range(20)))
    took = time.monotonic() - started
    rss_after, peak_after = rss_kib(pid, "VmRSS"), rss_kib(pid)
    sent = [n for n, _ in results]
    print(
        f"\n20 clients without the token, {kind}: sent {min(sent) >> 10}..{max(sent) >> 10} KiB"
        f" each before the daemon closed (of 195,312 KiB) in {took:.1f} s; daemon RSS "
        f"{rss_before >> 10} -> {rss_after >> 10} MiB, peak {peak_before >> 10} -> "
        f"{peak_after >> 10} MiB"
    )
    for n, answer in results:
        assert n < 8 * 1024 * 1024, f"the daemon read {n} bytes from a client without the token"
        assert b"PREAUTH_BYTES" in answer, answer[-500:]
    assert peak_after - peak_before < 32 * 1024, "the daemon's peak memory grew over 32 MiB"
    assert daemon.alive()


def test_header_garbage_is_answered(stdio):
    peer = stdio.peer
    peer.send(b"Content-Length: lots\r\n\r\n")
    reply = peer.answer(timeout=30)
    assert reply["error"]["code"] == -32700 and "Content-Length" in reply["error"]["message"]
    peer.send(b"Hello: world\r\n\r\n")
    assert peer.answer(timeout=30)["error"]["code"] == -32700
    assert health_ok(peer)


NUMBER_IDS = [1.5, 100000000000, -7, 0.25, 10**30, 2**53 + 1, 1e300]


def test_every_number_is_an_id_answered_as_sent(stdio):
    """JSON-RPC allows any number as an id (LSP's own types are narrower)."""
    peer = stdio.peer
    for msg_id in NUMBER_IDS:
        peer.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": "memory/health"}))
        reply = peer.answer(timeout=30)
        assert reply["id"] == msg_id and type(reply["id"]) is type(msg_id), reply
        assert "result" in reply, reply
    peer.send(frame({"jsonrpc": "2.0", "id": 2.5, "method": "no/such"}))
    assert peer.answer(timeout=30) == {
        "jsonrpc": "2.0",
        "id": 2.5,
        "error": {"code": -32601, "message": "method not found: no/such"},
    }


REQUEST = b'{"jsonrpc": "2.0", "id": 41, "method": "memory/health", "params": {}}'


@pytest.mark.parametrize("cut", [1, 2, 12, 30, 55, len(REQUEST) - 1])
def test_a_json_text_cut_short_is_a_parse_error(stdio, cut):
    stdio.peer.send(frame(REQUEST[:cut]))
    reply = stdio.peer.answer(timeout=30)
    assert reply["id"] is None and reply["error"]["code"] == -32700, reply
    assert health_ok(stdio.peer)


def test_the_input_ending_inside_a_frame_is_answered_before_the_server_ends(stdio):
    stdio.peer.send(b"Content-Length: 80\r\n\r\n" + REQUEST[:30])
    stdio.proc.stdin.close()
    reply = stdio.peer.answer(timeout=30)
    assert reply["id"] is None and reply["error"]["code"] == -32700, reply
    assert "ended inside a frame" in reply["error"]["message"]
    assert stdio.proc.wait(timeout=30) == 0  # the client left: a clean end


@pytest.mark.parametrize(
    "junk",
    [REQUEST, b"X" * 100, b"X" * 8_000, b"X" * 100_000, b"\r\n".join([b"XXXX"] * 5000)],
    ids=["a body without its header", "100 bytes", "8000 bytes", "100 kB", "5000 lines"],
)
def test_bytes_with_no_header_are_answered_once_and_skipped_to_the_next_frame(stdio, junk):
    """A stdio server keeps the editor's session: it answers the bytes it cannot read as a
    frame once and carries on at the next `Content-Length:` (docs/reliability.md)."""
    peer = stdio.peer
    peer.send(junk + frame({"jsonrpc": "2.0", "id": "next", "method": "memory/health"}))
    reply = peer.answer(timeout=30)
    assert reply["id"] is None and reply["error"]["code"] == -32700, reply
    assert "skipped to the next Content-Length header" in reply["error"]["message"]
    assert peer.answer(timeout=30)["id"] == "next"
    assert peer.drain() == [] and stdio.alive()


def test_a_header_block_may_name_content_type_first(stdio):
    body = b'{"jsonrpc": "2.0", "id": 5, "method": "memory/health"}'
    stdio.peer.send(
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )
    assert "result" in stdio.peer.answer(timeout=30)


def test_before_the_token_a_connection_may_send_only_what_initialize_needs(daemon, root):
    """PREAUTH_BYTES counts every byte before the token, whatever the number of frames."""
    stranger = daemon.connect()
    request = {"jsonrpc": "2.0", "id": 0, "method": "memory/stats", "params": {"pad": "x" * 900}}
    answered, sent = 0, 0
    for n in range(200):  # 200 frames of ~1 KiB: three times the limit
        data = frame({**request, "id": n})
        try:
            stranger.send(data)
        except OSError:
            break
        sent += len(data)
        reply = stranger.answer(timeout=30)
        if reply is None:
            break
        if reply["id"] is None:
            assert reply["error"]["data"]["limit"] == "PREAUTH_BYTES", reply
            assert sent > limits.PREAUTH_BYTES
            break
        assert reply["id"] == n and reply["error"]["code"] == -32002, reply
        answered += 1
    else:
        raise AssertionError("200 frames before the token were all read")
    assert stranger.answer(timeout=30) is None  # closed
    assert answered * 1000 < limits.PREAUTH_BYTES < (answered + 2) * 1100
    stranger.close()
    peer = daemon.connect()  # a client with the token is served as ever
    assert "result" in peer.initialize(root, TOKEN) and health_ok(peer)
    peer.close()


# ---------------------------------------------------------------- envelopes

ENVELOPES = [
    # (body, expected code, expected id)
    (b"{not json", -32700, None),
    (
        b'{"jsonrpc": "2.0", "id": 1, "method": "memory/health", "params": {"x": "\xff"}}',
        -32700,
        None,
    ),
    (b"[" * 5000 + b"]" * 5000, -32700, None),
    (
        '{"jsonrpc": "2.0", "id": 2, "method": "memory/health", "params": {"a": '
        + "[" * 80
        + "]" * 80
        + "}}",
        -32700,
        None,
    ),
    (json.dumps([{"jsonrpc": "2.0", "id": 3, "method": "memory/health"}]), -32600, None),
    (json.dumps([]), -32600, None),
    (json.dumps("hello"), -32600, None),
    (json.dumps({"id": 4, "method": "memory/health"}), -32600, 4),
    (json.dumps({"jsonrpc": "1.0", "id": 5, "method": "memory/health"}), -32600, 5),
    (json.dumps({"jsonrpc": 2.0, "id": 6, "method": "memory/health"}), -32600, 6),
    (json.dumps({"jsonrpc": "2.0", "id": 7, "method": None}), -32600, 7),
    (json.dumps({"jsonrpc": "2.0", "id": 8, "method": ["memory/health"]}), -32600, 8),
    (json.dumps({"jsonrpc": "2.0", "id": [9], "method": "memory/health"}), -32600, None),
    (json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "memory/health"}), -32600, None),
    (json.dumps({"jsonrpc": "2.0", "id": 10, "method": "memory/health", "params": 3}), -32600, 10),
    (json.dumps({"jsonrpc": "2.0", "id": 11}), -32600, 11),
    # standard methods memls does not implement, with params a client may well send
    (
        json.dumps({"jsonrpc": "2.0", "id": 12, "method": "textDocument/hover", "params": {}}),
        -32601,
        12,
    ),
    (json.dumps({"jsonrpc": "2.0", "id": 13, "method": "workspace/symbol"}), -32601, 13),
    (json.dumps({"jsonrpc": "2.0", "id": 14, "method": "no/such"}), -32601, 14),
    (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 15,
                "method": "initialize",
                "params": {"processId": None, "capabilities": {}},
            }
        ),
        -32600,
        15,
    ),
    (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 16,
                "method": "textDocument/codeAction",
                "params": {"textDocument": {"uri": 5}},
            }
        ),
        -32602,
        16,
    ),
]


@pytest.mark.parametrize(
    "body,code,msg_id",
    ENVELOPES,
    ids=[f"{i}:{str(b)[:40]}" for i, (b, _, _) in enumerate(ENVELOPES)],
)
def test_every_malformed_message_is_answered(stdio, body, code, msg_id):
    peer = stdio.peer
    peer.send(frame(body))
    reply = peer.answer(timeout=30)
    assert reply is not None, "no answer"
    assert reply.get("id") == msg_id and reply["error"]["code"] == code, reply
    assert no_trace(reply), reply
    assert health_ok(peer)
    assert peer.drain() == []  # exactly one answer


# ---------------------------------------------------------------- params that used to be -32603


def test_bad_text_is_refused_naming_the_field_and_nothing_is_stored(stdio, root):
    peer = stdio.peer
    project = str(root)
    surrogate = (
        b'{"jsonrpc": "2.0", "id": "s", "method": "memory/store", '
        b'"params": {"text": "a\\ud800b", "project": "p"}}'
    )
    peer.send(frame(surrogate))
    reply = peer.answer()
    assert reply["id"] == "s"  # valid JSON, not valid Unicode: its id is read and answered
    assert reply["error"]["code"] == -32602 and no_trace(reply), reply
    cases = [
        ({"text": "nul \u0000 inside", "project": project}, "text"),
        ({"text": "x" * 40_000, "project": project}, "text"),
        ({"text": "ok", "project": "\u200b"}, "project"),
        ({"text": "ok", "project": project, "validFrom": "9" * 1000}, "validFrom"),
    ]
    for params, field in cases:
        reply = peer.call("memory/store", params)
        assert reply["error"]["code"] == -32602, (params, reply)
        assert reply["error"]["data"]["field"] == field and no_trace(reply), reply
    reply = peer.call(
        "memory/query", {"query": "x", "project": project, "types": ["note"] * 1_000_000}
    )
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["field"] == "types"
    assert "32" in reply["error"]["message"]
    reply = peer.call("memory/store", {"text": "x" * 40_000, "project": project})
    assert "max_content_bytes" in reply["error"]["message"]
    assert reply["error"]["data"]["limit"] == "max_content_bytes"
    stats = peer.call("memory/stats", {"project": project})["result"]
    assert stats["memories"] == 0
    assert health_ok(peer)


def test_requests_after_shutdown_are_answered(stdio):
    peer = stdio.peer
    assert peer.call("shutdown")["result"] is None
    reply = peer.call("memory/health", {})
    assert reply["error"]["code"] == -32600 and "shutting down" in reply["error"]["message"]
    peer.notify("exit")
    assert stdio.proc.wait(timeout=30) == 0


# ---------------------------------------------------------------- the TCP daemon


def test_exit_without_the_token_does_not_stop_the_daemon(daemon, root):
    stranger = daemon.connect()
    stranger.notify("shutdown")
    stranger.notify("exit")
    stranger.send(frame({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}))
    assert stranger.answer(timeout=30)["error"]["code"] == -32002
    stranger.notify("exit")
    time.sleep(0.5)
    assert daemon.alive(), daemon.log()[-2000:]
    client = daemon.connect()
    assert "result" in client.initialize(root, TOKEN)
    assert health_ok(client)
    stranger.close()
    client.close()


def test_shutdown_and_exit_of_a_client_end_only_its_connection(daemon, root):
    first = daemon.connect()
    assert "result" in first.initialize(root, TOKEN)
    stored = first.call("memory/store", {"text": "We deploy on Tuesdays"})["result"]
    other = daemon.connect()
    assert "result" in other.initialize(root, TOKEN)
    assert first.call("shutdown")["result"] is None
    first.notify("exit")
    assert first.answer(timeout=30) is None  # its connection closed
    time.sleep(0.5)
    assert daemon.alive(), daemon.log()[-2000:]
    assert (
        other.call("memory/get", {"id": stored["id"]})["result"]["content"]
        == "We deploy on Tuesdays"
    )
    third = daemon.connect()
    assert "result" in third.initialize(root, TOKEN) and health_ok(third)
    for peer in (first, other, third):
        peer.close()
    assert daemon.stop() == 0  # SIGTERM: a clean stop
    assert "Traceback" not in daemon.log()


def test_nothing_before_the_token_not_even_a_second_initialize_trick(daemon, root):
    stranger = daemon.connect()
    wrong = stranger.initialize(root, "guess")
    assert "token" in wrong["error"]["message"]
    reply = stranger.call("memory/stats", {"project": str(root)})
    assert reply["error"]["code"] == -32002
    # a frame over the pre-token limit closes the connection at once
    stranger.send(b"Content-Length: 1000000\r\n\r\n")
    assert stranger.answer(timeout=30)["error"]["code"] == -32600
    assert stranger.answer(timeout=30) is None
    stranger.close()


def test_a_raw_socket_that_sends_a_header_line_forever_is_cut_off(daemon):
    sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=30)
    try:
        sock.sendall(b"Content-Length: 1" + b"0" * 20000)
        data = sock.recv(65536)
        assert b"MAX_HEADER_BYTES" in data
        assert sock.recv(65536) == b""  # closed
    finally:
        sock.close()
    assert daemon.alive()
