"""Reaching the owner from a light process: the hook command and `memls mcp`.

Both start on every prompt or session, before anything heavy could load, so this module
imports the standard library only (and nothing of memls): the owner socket's address, one
connection that speaks its JSON lines, and starting the daemon (`memls serve --socket`) when
nobody serves the data directory, waiting for it to say it serves (a pipe it writes to, not a
poll of the socket file).
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time

TYPE_CHECKING = False  # `typing` is a third of a light process's imports: not loaded
if TYPE_CHECKING:
    from typing import Any

SOCKET_NAME = "memls.sock"
LOG_NAME = "daemon.log"
MAX_UNIX_PATH = 100


class Unavailable(Exception):
    """Nobody serves the data directory (no socket, refused, or silent)."""


class Failed(Exception):
    """The owner answered with an error: `body` is its error object (kind, message, field)."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        field = f"{body.get('field')}: " if body.get("field") else ""
        super().__init__(f"{field}{body.get('message', 'error')}")


def _address(path: str) -> str:
    """The socket's address; a long path through /proc/self/fd (as the owner binds it)."""
    if len(os.fsencode(path)) <= MAX_UNIX_PATH:
        return path
    fd = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)  # open until the end
    return f"/proc/self/fd/{fd}/{os.path.basename(path)}"


class Connection:
    """One connection to the owner socket, after the hello; requests one at a time."""

    def __init__(self, data_dir: str, front: str, timeout: float) -> None:
        path = os.path.join(data_dir, SOCKET_NAME)
        if not os.path.exists(path):
            raise Unavailable(f"no owner socket at {path}")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(_address(path))
        except OSError as exc:
            self.sock.close()
            raise Unavailable(f"{path}: {exc}") from None
        self.reader = self.sock.makefile("rb")
        self.next_id = 0
        self.hello = {"front": front}
        self._sent_hello = False

    def request(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        """The result of one request; Unavailable when the owner goes, Failed on an error."""
        if timeout is not None:
            self.sock.settimeout(timeout)
        lines = b""
        if not self._sent_hello:
            self.next_id += 1
            hello = {"id": self.next_id, "method": "$/hello", "params": self.hello}
            lines += json.dumps(hello).encode() + b"\n"
            self._sent_hello = True
        self.next_id += 1
        wanted = self.next_id
        call = {"id": wanted, "method": method, "params": params}
        lines += json.dumps(call, ensure_ascii=False).encode() + b"\n"
        try:
            self.sock.sendall(lines)
        except OSError as exc:
            raise Unavailable(f"the daemon went: {exc}") from None
        while True:
            try:
                line = self.reader.readline()
            except OSError as exc:  # a timeout included
                raise Unavailable(f"no answer from the daemon: {exc}") from None
            if not line:
                raise Unavailable("the daemon closed the connection")
            reply = json.loads(line)
            if reply.get("id") != wanted:
                continue  # the hello's answer, or a notification
            if "error" in reply:
                raise Failed(reply["error"] or {})
            return reply.get("result")

    def alive(self) -> bool:
        """False when the owner has closed this connection (it went away since)."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
            return not readable or self.sock.recv(1, socket.MSG_PEEK) != b""
        except OSError:
            return False

    def close(self) -> None:
        try:
            self.reader.close()
        finally:
            self.sock.close()


def start_daemon(data_dir: str, wait: float) -> bool:
    """`memls serve --socket` in the background, detached (it goes on after this process):
    it owns the store. Waits up to `wait` seconds for it to say it serves; True if it did (or
    exited at once because another process serves already)."""
    import subprocess  # only when it starts one: a warm call does not pay for it

    log_fd: int | None = None
    read_end, write_end = os.pipe()
    try:
        try:
            os.makedirs(data_dir, mode=0o700, exist_ok=True)
            log_fd = os.open(
                os.path.join(data_dir, LOG_NAME), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
            )
        except OSError:
            log_fd = None
        out = log_fd if log_fd is not None else subprocess.DEVNULL
        command = [sys.executable, "-m", "memls", "--data-dir", data_dir, "serve", "--socket"]
        subprocess.Popen(
            [*command, "--ready-fd", str(write_end)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
            pass_fds=(write_end,),
        )
        os.close(write_end)
        write_end = -1
        if wait <= 0:
            return False
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([read_end], [], [], left)
            if ready:
                # "ready" once it serves; nothing (end of file) when it exited: another
                # process serves the directory, or it failed (its log says why)
                return bool(os.read(read_end, 64)) or os.path.exists(
                    os.path.join(data_dir, SOCKET_NAME)
                )
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
        if log_fd is not None:
            os.close(log_fd)


def connect(data_dir: str, front: str, timeout: float, start_wait: float) -> Connection:
    """A connection to the owner; when none serves, the daemon is started and waited for (up
    to `start_wait` seconds; 0: started for next time, Unavailable now)."""
    try:
        return Connection(data_dir, front, timeout)
    except Unavailable:
        if not start_daemon(data_dir, start_wait):
            raise
    return Connection(data_dir, front, timeout)
