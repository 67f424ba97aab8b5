"""Raw JSON-RPC frames to a real `memls serve` process, over stdio or TCP.

What an attacker or a careless client sends: any bytes, any header, any body. Replies are
read by a background thread into a queue, so a test can wait for one with a timeout (an
unanswered request shows up as a timeout, not as a hung test). A reply must be strict UTF-8
JSON text: one that is not ends the reading, and the test sees the connection closed.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

TOKEN = "reliability-token-0123456789abcdef"
FAST_CONFIG = "[index]\nvectors = false\n"


def frame(body: bytes | str | dict | list) -> bytes:
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def data_dir(root: Path, config: str = FAST_CONFIG) -> Path:
    d = root / "data"
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    (d / "config.toml").write_text(config)
    return d


def line(body: bytes | str | dict | list) -> bytes:
    """One message of a line transport (the owner socket, MCP stdio)."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    return body + b"\n"


class Peer:
    """One connection to the server: `send` raw bytes, `reply` waits for the next message.

    `framing` is "lsp" (Content-Length frames, JSON-RPC), "mcp" (JSON-RPC, one per line) or
    "owner" (the owner socket: one object per line, no `jsonrpc` member)."""

    def __init__(self, read_stream, write, framing: str = "lsp") -> None:
        self.framing = framing
        self._write = write
        self.replies: queue.Queue[dict | None] = queue.Queue()
        self.closed = threading.Event()
        self._reader = threading.Thread(target=self._read, args=(read_stream,), daemon=True)
        self._reader.start()
        self.next_id = 0

    def frame(self, message: dict) -> bytes:
        if self.framing == "owner":
            message = {k: v for k, v in message.items() if k != "jsonrpc"}
        return frame(message) if self.framing == "lsp" else line(message)

    def _read(self, stream) -> None:
        if self.framing != "lsp":
            return self._read_lines(stream)
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                body = stream.read(length)
                if len(body) < length:
                    return
                self.replies.put(json.loads(body.decode("utf-8")))
        except (OSError, ValueError):
            return
        finally:
            self.closed.set()
            self.replies.put(None)

    def _read_lines(self, stream) -> None:
        try:
            for raw in stream:
                if raw.strip():
                    self.replies.put(json.loads(raw.decode("utf-8")))
        except (OSError, ValueError):
            return
        finally:
            self.closed.set()
            self.replies.put(None)

    def send(self, data: bytes) -> None:
        self._write(data)

    def reply(self, timeout: float = 30.0) -> dict | None:
        """The next message from the server (None: the connection closed)."""
        return self.replies.get(timeout=timeout)

    def answer(self, timeout: float = 30.0) -> dict | None:
        """The next reply (a message with no method: server notifications and requests are
        skipped, requests answered null); None when the connection closed."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.replies.get(timeout=max(0.01, deadline - time.monotonic()))
            if message is None or "method" not in message:
                return message
            if "id" in message:
                self.send(self.frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))

    def call(
        self, method: str, params: Any = None, *, timeout: float = 60.0, msg_id: Any = None
    ) -> dict:
        """Send a request, return its reply (server requests and notifications are skipped;
        a server request is answered with null)."""
        if msg_id is None:
            self.next_id += 1
            msg_id = f"r{self.next_id}"
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(self.frame(message))
        return self.wait_for(msg_id, timeout)

    def wait_for(self, msg_id: Any, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no reply to {msg_id!r}")
            try:
                message = self.replies.get(timeout=left)
            except queue.Empty:
                raise TimeoutError(f"no reply to {msg_id!r}") from None
            if message is None:
                raise ConnectionError(f"closed before the reply to {msg_id!r}")
            if "method" in message:
                if "id" in message:  # the server asks us something: answer null
                    self.send(self.frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
                continue
            if message.get("id") == msg_id:
                return message

    def notify(self, method: str, params: Any = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(self.frame(message))

    def initialize(self, root: Path, token: str | None = None) -> dict:
        options = {"token": token} if token is not None else {}
        reply = self.call(
            "initialize",
            {
                "processId": None,
                "capabilities": {},
                "rootUri": root.as_uri(),
                "initializationOptions": options,
            },
        )
        if "result" in reply:
            self.notify("initialized", {})
        return reply

    def drain(self) -> list[dict]:
        """Replies waiting now (server notifications left out)."""
        out = []
        while True:
            try:
                message = self.replies.get_nowait()
            except queue.Empty:
                return out
            if message is not None and "method" not in message:
                out.append(message)


class StdioServer:
    """`memls --data-dir D serve --stdio` as a subprocess."""

    def __init__(self, data: Path, env: dict | None = None) -> None:
        self.stderr_path = data.parent / f"stdio-{os.getpid()}-{id(self)}.stderr"
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memls", "--data-dir", str(data), "serve", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env={**os.environ, **(env or {})},
        )

        def write(data: bytes) -> None:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

        self.peer = Peer(self.proc.stdout, write)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def status(self) -> str:
        """How it ended (a negative code: the signal that ended it) and its last words."""
        code = self.proc.poll()
        return (
            f"{'running' if code is None else f'exit status {code}'}; stderr: "
            + (self.log()[-2000:])
        )

    def close(self, timeout: float = 30.0) -> int:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.stderr.close()
        return code

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")


class TcpPeer(Peer):
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.settimeout(None)
        super().__init__(self.sock.makefile("rb"), self.sock.sendall)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class TcpDaemon:
    """`memls serve --tcp 127.0.0.1:PORT` with the token in $MEMLS_TOKEN."""

    def __init__(self, data: Path, port: int) -> None:
        self.port = port
        self.stderr_path = data.parent / f"tcp-{port}.stderr"
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memls",
                "--data-dir",
                str(data),
                "serve",
                "--tcp",
                f"127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
            env={**os.environ, "MEMLS_TOKEN": TOKEN},
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def connect(self) -> TcpPeer:
        return TcpPeer(self.port)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.stderr.close()
        return code

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")


def rss_kib(pid: int, field: str = "VmHWM") -> int:
    """A process's peak (VmHWM) or current (VmRSS) resident memory, KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def no_trace(reply: dict) -> bool:
    """True when an error reply carries no traceback and no file path."""
    text = json.dumps(reply.get("error", {}))
    return (
        "Traceback" not in text
        and "traceback" not in text
        and ".py" not in text
        and "site-packages" not in text
    )


class OwnerPeer(Peer):
    """A connection to the owner socket of a data directory (one JSON object per line)."""

    def __init__(self, data: Path) -> None:
        from memls.daemon.sockets import socket_path, unix_address

        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with unix_address(socket_path(data)) as address:
            self.sock.connect(address)
        super().__init__(self.sock.makefile("rb"), self.sock.sendall, framing="owner")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class McpServer(StdioServer):
    """`memls --data-dir D mcp --project P` as a subprocess, spoken to line by line."""

    def __init__(self, data: Path, project: Path) -> None:
        self.stderr_path = data.parent / f"mcp-{os.getpid()}-{id(self)}.stderr"
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memls", "--data-dir", str(data), "mcp"]
            + ["--project", str(project)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )

        def write(data: bytes) -> None:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

        self.peer = Peer(self.proc.stdout, write, framing="mcp")

    def initialize(self) -> dict:
        reply = self.peer.call(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "reliability", "version": "1"},
            },
        )
        if "result" in reply:
            self.peer.notify("notifications/initialized")
        return reply
