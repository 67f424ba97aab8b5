"""`memls serve --tcp`: loopback only, a token before anything, one server per connection."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from lsp_helpers import free_port, wait_for_port


class Rpc:
    """A bare JSON-RPC client over TCP (what any editor's TCP transport does)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.buf = b""
        self.next_id = 0

    def send(self, method: str, params: dict | None, *, notify: bool = False) -> int | None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return None if notify else self.next_id

    def read(self) -> dict:
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        while len(rest) < length:
            rest += self.sock.recv(65536)
        self.buf = rest[length:]
        return json.loads(rest[:length])

    def call(self, method: str, params: dict | None) -> dict:
        msg_id = self.send(method, params)
        while True:
            reply = self.read()
            if reply.get("id") == msg_id and "method" not in reply:
                return reply

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def daemon(tmp_path):
    port = free_port()
    env = {**os.environ, "MEMLS_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memls", "serve", "--tcp", f"127.0.0.1:{port}", "--token", "s3cret"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_for_port(port, proc=proc), (
        proc.stderr.read() if proc.poll() is not None else "memls serve --tcp did not start"
    )
    yield port, tmp_path
    proc.terminate()
    proc.wait(timeout=30)


def _initialize(rpc: Rpc, root, token: str | None) -> dict:
    options = {"token": token} if token is not None else {}
    return rpc.call(
        "initialize",
        {
            "processId": None,
            "capabilities": {},
            "rootUri": root.as_uri(),
            "initializationOptions": options,
        },
    )


def test_requests_before_the_token_are_refused_and_connections_are_separate(daemon, tmp_path):
    port, _ = daemon
    root = tmp_path / "proj"
    root.mkdir()
    stranger = Rpc(port)
    refused = stranger.call("memory/query", {"query": "x", "project": str(root)})
    assert refused["error"]["code"] == -32002
    wrong = _initialize(stranger, root, "guess")
    assert "token" in wrong["error"]["message"]
    assert stranger.call("memory/stats", {"project": str(root)})["error"]["code"] == -32002

    owner = Rpc(port)
    assert "result" in _initialize(owner, root, "s3cret")
    owner.send("initialized", {}, notify=True)
    stored = owner.call("memory/store", {"text": "We deploy on Tuesdays"})
    assert stored["result"]["project"] == str(root.resolve())
    # the stranger's connection still gets nothing, and the owner's replies stay on its own
    assert stranger.call("memory/list", {"project": str(root)})["error"]["code"] == -32002
    assert (
        owner.call("memory/get", {"id": stored["result"]["id"]})["result"]["content"]
        == "We deploy on Tuesdays"
    )
    stranger.close()
    owner.close()

    # a client leaving does not stop the daemon; the next one finds the memory
    again = Rpc(port)
    assert "result" in _initialize(again, root, "s3cret")
    again.send("initialized", {}, notify=True)
    found = again.call("memory/query", {"query": "Tuesdays deploy"})
    assert [r["content"] for r in found["result"]["results"]] == ["We deploy on Tuesdays"]
    again.close()


def test_non_loopback_is_refused_unless_forced(tmp_path):
    env = {**os.environ, "MEMLS_DATA_DIR": str(tmp_path / "data")}
    out = subprocess.run(
        [sys.executable, "-m", "memls", "serve", "--tcp", "0.0.0.0:7999"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "loopback" in out.stderr and out.stderr.count("\n") == 1
    out = subprocess.run(
        [sys.executable, "-m", "memls", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "--stdio" in out.stderr
