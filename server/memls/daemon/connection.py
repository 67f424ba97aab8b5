"""One client of the owner socket: a reader thread (lines in) and a writer thread (lines out).

A line is checked before any work, as the LSP front checks a frame:

- over `max_frame_bytes`: answered (id null, kind `invalid_request`, naming the limit) and the
  connection closed without reading the rest of it;
- not JSON text (bad JSON or UTF-8, nested deeper than `MAX_NESTING`): kind `parse_error`,
  id null;
- JSON but not valid Unicode (a lone surrogate escape): a request with a readable id is
  answered with that id, kind `invalid_params` naming the field; an id that holds one is
  answered as sent, written back as the `\\udxxx` escape (`limits.reply_json`);
- not `{"id"?, "method": str, "params"?}`: kind `invalid_request`, with the id when it can
  be read.

Requests run on the server's thread pool; replies carry the request's id and may come back
out of order. A client that does not read its replies is dropped (OUTBOX_LIMIT lines queued).
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
from concurrent.futures import Executor
from typing import Any, Protocol

from memls import limits, protocol
from memls.errors import MemlsError
from memls.scope import project_key

log = logging.getLogger("memls.daemon")

OUTBOX_LIMIT = 10_000  # queued lines per client before a client that does not read is dropped
LINGER_BYTES = 1024 * 1024  # after a refused line: discard at most this much, ...
LINGER_SECONDS = 1.0  # ... for at most this long, so the refusal is not lost to a reset
CHUNK = 64 * 1024


def error_body(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, MemlsError):
        body = protocol.OwnerError(kind=exc.kind, message=exc.message, field=exc.field)
    else:
        body = protocol.OwnerError(kind="internal", message=f"{type(exc).__name__}: {exc}")
    return {"kind": body.kind, "message": body.message, "field": body.field}


def subscription_scope(params: Any) -> frozenset[str] | None:
    """The projects a `$/subscribe` names (their keys), or None for every project."""
    projects = protocol.parse(protocol.SubscribeParams, params).projects
    return None if projects is None else frozenset(project_key(p) for p in projects)


def _failure(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "message": message, "field": None, **extra}


class Host(Protocol):
    """What a connection needs of the server that accepted it (`owner.OwnerServer`): this
    module never imports the owner, the owner imports it."""

    @property
    def _pool(self) -> Executor | None: ...

    def dispatch(self, method: str, params: Any, conn: OwnerConnection | None = None) -> Any: ...

    def _forget(self, conn: OwnerConnection) -> None: ...


class OwnerConnection:
    """One client: a reader thread (requests in) and a writer thread (replies out)."""

    def __init__(self, server: Host, sock: socket.socket, number: int) -> None:
        self.server = server
        self.sock = sock
        self.name = f"client-{number}"
        self.subscribed = False
        self.projects: frozenset[str] | None = None  # the subscription's scope (None: all)
        self.front: str | None = None
        self.closed = threading.Event()
        self._draining = False
        self._out: queue.Queue[bytes | None] = queue.Queue(maxsize=OUTBOX_LIMIT)
        self._reader = threading.Thread(
            target=self._read_loop, name=f"memls-owner-{self.name}-in", daemon=True
        )
        self._writer = threading.Thread(
            target=self._write_loop, name=f"memls-owner-{self.name}-out", daemon=True
        )

    def start(self) -> None:
        self._writer.start()
        self._reader.start()

    # -------------------------------------------------------- output

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(limits.reply_json(message) + b"\n")

    def send_line(self, line: bytes, *, block: bool = True) -> None:
        if self.closed.is_set():
            return
        try:
            if block:
                self._out.put(line, timeout=30.0)
            else:
                self._out.put_nowait(line)
        except queue.Full:
            log.warning("memls owner: %s does not read its socket; disconnecting it", self.name)
            self.close()

    def _write_loop(self) -> None:
        try:
            while True:
                line = self._out.get()
                if line is None:
                    return
                self.sock.sendall(line)
        except OSError:
            pass  # the client went away
        finally:
            if not self._draining:  # else the reader closes, after its linger
                self.close()

    # -------------------------------------------------------- input

    def _read_loop(self) -> None:
        refused = False
        try:
            reader = self.sock.makefile("rb")
            while not self.closed.is_set():
                limit = limits.current().max_frame_bytes
                line = reader.readline(limit + 1)
                if not line:
                    return
                if len(line) > limit and not line.endswith(b"\n"):
                    self._refuse(limit)
                    refused = True
                    return
                if line.strip():
                    self._handle(line)
        except (OSError, ValueError):
            pass  # reset by the client, or closed by stop()
        finally:
            if refused:
                self._linger()
            self.close()

    def _refuse(self, limit: int) -> None:
        """A line over the limit: answered, not read; the connection ends."""
        message = (
            f"a line over the limit max_frame_bytes = {limit} bytes; it was not read, "
            "and the connection is closed"
        )
        log.warning("memls owner: closing %s: %s", self.name, message)
        self.send(
            {"id": None, "error": _failure("invalid_request", message, limit="max_frame_bytes")}
        )
        self._draining = True
        try:
            self._out.put(None, timeout=5.0)  # the writer sends what is queued, then stops
        except queue.Full:
            pass
        self._writer.join(timeout=5.0)

    def _linger(self) -> None:
        """Discard what the client is still sending, a little while, so that closing does not
        reset the connection before the client has read the refusal."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
            deadline, left = time.monotonic() + LINGER_SECONDS, LINGER_BYTES
            while left > 0 and (wait := deadline - time.monotonic()) > 0:
                self.sock.settimeout(wait)
                chunk = self.sock.recv(min(CHUNK, left))
                if not chunk:
                    return
                left -= len(chunk)
        except OSError:
            pass

    def _handle(self, line: bytes) -> None:
        try:
            message, not_unicode = limits.decode_json(line)
        except limits.NotJson as exc:
            self.send(
                {
                    "id": None,
                    "error": _failure("parse_error", f"not a JSON line: {exc.message}"),
                }
            )
            return
        request_id = message.get("id") if isinstance(message, dict) else None
        method = message.get("method") if isinstance(message, dict) else None
        readable = limits.readable_id(request_id)  # any number or string, answered as sent
        if not isinstance(method, str) or (request_id is not None and not readable):
            expected = 'expected {"id": n, "method": name, "params": {...}}'
            reply_id = request_id if readable else None
            self.send({"id": reply_id, "error": _failure("invalid_request", expected)})
            return
        if not_unicode is not None:  # valid JSON, not valid Unicode: never handed on
            if request_id is not None:
                self.send({"id": request_id, "error": self._not_unicode(not_unicode)})
            return
        params = message.get("params")
        if method in ("$/subscribe", "$/unsubscribe"):
            try:
                scope = subscription_scope(params) if method == "$/subscribe" else None
            except MemlsError as exc:  # a bad scope changes nothing
                if request_id is not None:
                    self.send({"id": request_id, "error": error_body(exc)})
                return
            self.subscribed, self.projects = method == "$/subscribe", scope
            if request_id is not None:
                self.send({"id": request_id, "result": {"subscribed": self.subscribed}})
            return
        if method == "$/hello":
            self._reply(request_id, method, params)  # cheap: answer on the reader thread
            return
        pool = self.server._pool
        if pool is None:  # not started, or stopped
            self.close()
            return
        try:
            pool.submit(self._reply, request_id, method, params)
        except RuntimeError:  # the pool is shut down: the server is stopping
            self.close()

    @staticmethod
    def _not_unicode(path: str) -> dict[str, Any]:
        if path == "params" or path.startswith(("params.", "params[")):
            field = path.removeprefix("params").lstrip(".") or "params"
            return {"kind": "invalid_params", "message": limits.not_unicode(field), "field": field}
        return _failure("invalid_request", limits.not_unicode(path))

    def _reply(self, request_id: Any, method: str, params: Any) -> None:
        try:
            result = self.server.dispatch(method, params, self)
        except BaseException as exc:
            if not isinstance(exc, MemlsError):
                log.exception("memls owner: %s failed", method)
            if request_id is not None:
                self.send({"id": request_id, "error": error_body(exc)})
            if not isinstance(exc, Exception):
                raise
            return
        if request_id is not None:
            self.send({"id": request_id, "result": result})

    # -------------------------------------------------------- end

    def close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        self.server._forget(self)
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._out.put_nowait(None)
        except queue.Full:
            pass
        if threading.current_thread() is not self._writer:
            self._writer.join(timeout=1.0)
        self.sock.close()
