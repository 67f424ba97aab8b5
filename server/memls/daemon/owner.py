"""The owner's socket: how every other process reaches the one engine of a data directory.

`<data dir>/memls.sock` (a UNIX domain socket, mode 0600, in the 0700 data directory) speaks
one JSON object per line:

    -> {"id": 1, "method": "memory/store", "params": {...camelCase...}}
    <- {"id": 1, "result": {...}}   or   {"id": 1, "error": {"kind", "message", "field"}}

Besides every entry of `protocol.METHODS` the owner answers:

    $/hello        -> {"pid", "version", "dataDir", "front", "vectors"}   (the handshake)
    $/subscribe    {"projects": [...]}? -> {"subscribed": true}; afterwards the engine's
                      notifications arrive as {"method": "memory/conflicts", "params": {...}}
                      (no id) - only those of the named projects when `projects` is given (a
                      window's own), every project's otherwise. Sending it again replaces the
                      scope. May be sent without an id, then there is no reply.
    $/unsubscribe  -> {"subscribed": false}
    $/flush        {"timeout": s} -> {"flushed": bool}   (Engine.flush: writes are indexed)
    memory/export  {"project"} -> {"lines": [{...}, ...]}  (Engine.export)
    memory/import  {"project", "lines": ["...", ...], "redact"} -> {"imported": {...}}  (import_)
    $/mcp          {"method", "params", "scope"} -> the MCP result  (the `memls mcp` relay's
                      calls, run by `memls.agent.calls`)

Requests run on a small thread pool (the engine is thread-safe), so one slow call does not hold
up another client; replies carry the request's id and may come back out of order. A bad client
never takes the server down: malformed lines get an error reply, a line over `max_frame_bytes`
closes its connection, a vanished client is cleaned up (`connection.py`: one client; `sockets.py`:
the socket file).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from memls import __version__, protocol
from memls.agent import calls as mcp_calls
from memls.daemon.connection import OwnerConnection
from memls.daemon.sockets import (
    SOCKET_NAME,
    peer_uid,
    remove_stale_socket,
    socket_path,
    unix_address,
)
from memls.errors import MemlsError, StoreError

log = logging.getLogger("memls.daemon")

__all__ = ["SOCKET_NAME", "MethodNotFound", "OwnerServer", "remove_stale_socket", "socket_path"]


class MethodNotFound(MemlsError):
    kind = "method_not_found"


# ---------------------------------------------------------------- the server


class OwnerServer:
    """Serves an engine on <data dir>/memls.sock. Start it only while holding the owner lock."""

    def __init__(
        self, engine: Any, directory: str | os.PathLike | None = None, *, workers: int = 8
    ) -> None:
        self.engine = engine
        self.directory = Path(directory if directory is not None else engine.directory)
        self.path = socket_path(self.directory)
        self.workers = workers
        self._listener: socket.socket | None = None
        self._inode: int | None = None
        self._accept_thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._pool: ThreadPoolExecutor | None = None
        self._conns: set[OwnerConnection] = set()
        self._conns_lock = threading.Lock()
        self._count = 0
        self._handlers: dict[str, Callable[[Any], Any]] = {
            "$/flush": lambda p: protocol.FlushResult(flushed=bool(self.engine.flush(p.timeout))),
            "memory/export": lambda p: protocol.ExportResult(
                lines=list(self.engine.export(p.project))
            ),
            "memory/import": lambda p: protocol.ImportResult(
                imported=self.engine.import_(p.project, p.lines, redact=p.redact)
            ),
            "$/mcp": lambda p: mcp_calls.handle(self.engine, p),
        }

    @property
    def running(self) -> bool:
        return self._accept_thread is not None and not self._stopping.is_set()

    def start(self) -> OwnerServer:
        """Bind (replacing a stale socket file), listen, and accept in a background thread."""
        if self._accept_thread is not None:
            return self
        remove_stale_socket(self.path)
        temp = self.path.with_name(f".{SOCKET_NAME}.{os.getpid()}.tmp")
        remove_stale_socket(temp)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with unix_address(temp) as address:
                listener.bind(address)
            os.chmod(temp, 0o600)
            listener.listen(64)
            listener.settimeout(0.2)
            os.replace(temp, self.path)  # appears atomically, already 0600 and listening
            self._inode = self.path.stat().st_ino
        except OSError as exc:
            listener.close()
            temp.unlink(missing_ok=True)
            raise StoreError(f"cannot serve {self.path}: {exc.strerror or exc}") from None
        self._listener = listener
        self._pool = ThreadPoolExecutor(
            max_workers=self.workers, thread_name_prefix="memls-owner-call"
        )
        self.engine.listeners.append(self._forward)
        self._accept_thread = threading.Thread(
            target=self._accept_loop, name="memls-owner", daemon=True
        )
        self._accept_thread.start()
        log.info("memls owner: serving %s (pid %d)", self.path, os.getpid())
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop accepting, drop every client, wait for calls in flight, remove the socket."""
        if self._accept_thread is None or self._stopping.is_set():
            return
        self._stopping.set()
        self._accept_thread.join(timeout=2.0)
        if self._listener is not None:
            self._listener.close()
        try:
            if self._inode is not None and self.path.stat().st_ino == self._inode:
                self.path.unlink()
        except FileNotFoundError:
            pass
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            conn.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        try:
            self.engine.listeners.remove(self._forward)
        except ValueError:
            pass

    def __enter__(self) -> OwnerServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -------------------------------------------------------- internals

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                if self._stopping.is_set():
                    return
                log.warning("memls owner: accept failed: %s", exc)
                self._stopping.wait(0.1)
                continue
            try:
                sock.settimeout(None)
                uid = peer_uid(sock)
                if uid is not None and uid != os.getuid():
                    log.warning("memls owner: refused a client of uid %d", uid)
                    sock.close()
                    continue
                with self._conns_lock:
                    self._count += 1
                    conn = OwnerConnection(self, sock, self._count)
                    self._conns.add(conn)
                conn.start()
            except Exception:
                log.exception("memls owner: could not start a client")
                sock.close()

    def _forget(self, conn: OwnerConnection) -> None:
        with self._conns_lock:
            self._conns.discard(conn)

    def _forward(self, method: str, payload: Any) -> None:
        """An engine listener: pass notifications to every subscribed client."""
        project = getattr(payload, "project", None)
        with self._conns_lock:
            targets = [
                c
                for c in self._conns
                if c.subscribed and (c.projects is None or project in c.projects)
            ]
        if not targets:
            return
        line = msgspec.json.encode({"method": method, "params": protocol.to_wire(payload)}) + b"\n"
        for conn in targets:
            conn.send_line(line, block=False)

    def dispatch(self, method: str, params: Any, conn: OwnerConnection | None = None) -> Any:
        """Run one request on the engine; returns plain (camelCase) data."""
        if method == "$/hello":
            hello = protocol.parse(protocol.HelloParams, params)
            if conn is not None and hello.front:
                conn.front = hello.front
            if hello.version and hello.version != __version__:
                log.warning(
                    "memls owner: client %s runs memls %s, this owner %s",
                    hello.pid,
                    hello.version,
                    __version__,
                )
            return protocol.to_wire(
                protocol.HelloResult(
                    pid=os.getpid(),
                    version=__version__,
                    data_dir=str(self.directory),
                    front=self.engine.front,
                    vectors=bool(self.engine.vectors_enabled),
                )
            )
        spec = protocol.METHODS.get(method)
        if spec is not None:
            parsed: Any = protocol.parse(spec.params, params)
            with self.engine.acting_for(conn.front if conn is not None else None):
                return protocol.to_wire(getattr(self.engine, spec.engine)(parsed))
        handler = self._handlers.get(method)
        if handler is not None:
            with self.engine.acting_for(conn.front if conn is not None else None):
                params_type = protocol.OWNER_METHODS[method][0]
                return protocol.to_wire(handler(protocol.parse(params_type, params)))
        raise MethodNotFound(f"unknown method {method!r}")
