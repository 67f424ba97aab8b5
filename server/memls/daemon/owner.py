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

Requests run on a small thread pool (the engine is thread-safe), so one slow call does not hold
up another client; replies carry the request's id and may come back out of order. A bad client
never takes the server down: malformed lines get an error reply, a vanished client is cleaned up.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import stat
import struct
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from memls import __version__, limits, protocol
from memls.errors import MemlsError, StoreError
from memls.scope import project_key

log = logging.getLogger("memls.daemon")

SOCKET_NAME = "memls.sock"
MAX_UNIX_PATH = 100  # sun_path is 108 bytes on Linux, 104 on macOS: stay under both
OUTBOX_LIMIT = 10_000  # queued lines per client before a client that does not read is dropped


class MethodNotFound(MemlsError):
    kind = "method_not_found"


# ---------------------------------------------------------------- socket paths


def socket_path(directory: str | os.PathLike) -> Path:
    return Path(directory) / SOCKET_NAME


@contextmanager
def unix_address(path: Path) -> Iterator[str]:
    """An address bind/connect accept for `path`, even when it is longer than sun_path allows.

    A long data directory is reached through /proc/self/fd/<fd of the directory> (Linux).
    """
    if len(os.fsencode(str(path))) <= MAX_UNIX_PATH:
        yield str(path)
        return
    if not hasattr(os, "O_PATH") or not Path("/proc/self/fd").is_dir():
        raise StoreError(
            f"the socket path {path} is too long for this system; use a shorter --data-dir"
        )
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def _peer_uid(sock: socket.socket) -> int | None:
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", raw)[1]
    except OSError:
        return None


def remove_stale_socket(path: Path) -> None:
    """Remove a socket file left by a dead owner. Only call this while holding the owner lock."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise StoreError(f"{path} exists and is not a socket; remove it to let memls serve")
    path.unlink(missing_ok=True)


def error_body(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, MemlsError):
        body = protocol.OwnerError(kind=exc.kind, message=exc.message, field=exc.field)
    else:
        body = protocol.OwnerError(kind="internal", message=f"{type(exc).__name__}: {exc}")
    return {"kind": body.kind, "message": body.message, "field": body.field}


# ---------------------------------------------------------------- the server


def subscription_scope(params: Any) -> frozenset[str] | None:
    """The projects a `$/subscribe` names (their keys), or None for every project."""
    projects = protocol.parse(protocol.SubscribeParams, params).projects
    return None if projects is None else frozenset(project_key(p) for p in projects)


class _Connection:
    """One client: a reader thread (requests in) and a writer thread (replies out)."""

    def __init__(self, server: OwnerServer, sock: socket.socket, number: int) -> None:
        self.server = server
        self.sock = sock
        self.name = f"client-{number}"
        self.subscribed = False
        self.projects: frozenset[str] | None = None  # the subscription's scope (None: all)
        self.front: str | None = None
        self.closed = threading.Event()
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
        self.send_line(msgspec.json.encode(message) + b"\n")

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
            self.close()

    # -------------------------------------------------------- input

    def _read_loop(self) -> None:
        try:
            reader = self.sock.makefile("rb")
            while not self.closed.is_set():
                limit = limits.current().max_frame_bytes
                line = reader.readline(limit + 1)
                if not line:
                    return
                if len(line) > limit:  # refused before it is read whole: skip to its end
                    self.send(
                        {
                            "id": None,
                            "error": {
                                "kind": "invalid_params",
                                "field": None,
                                "limit": "max_frame_bytes",
                                "message": "a line over the limit max_frame_bytes = "
                                f"{limit} bytes; "
                                "it was not read",
                            },
                        }
                    )
                    while line and not line.endswith(b"\n"):
                        line = reader.readline(64 * 1024)
                    continue
                if line.strip():
                    self._handle(line)
        except (OSError, ValueError):
            pass  # reset by the client, or closed by stop()
        finally:
            self.close()

    def _handle(self, line: bytes) -> None:
        try:
            message = msgspec.json.decode(line)
        except (msgspec.DecodeError, RecursionError) as exc:
            why = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
            self.send(
                {
                    "id": None,
                    "error": {
                        "kind": "parse_error",
                        "message": f"not a JSON line: {why}",
                        "field": None,
                    },
                }
            )
            return
        request_id = message.get("id") if isinstance(message, dict) else None
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(method, str) or (
            request_id is not None and not isinstance(request_id, (int, str))
        ):
            self.send(
                {
                    "id": request_id if isinstance(request_id, (int, str)) else None,
                    "error": {
                        "kind": "invalid_request",
                        "message": 'expected {"id": n, "method": name, "params": {...}}',
                        "field": None,
                    },
                }
            )
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
        self._conns: set[_Connection] = set()
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
                uid = _peer_uid(sock)
                if uid is not None and uid != os.getuid():
                    log.warning("memls owner: refused a client of uid %d", uid)
                    sock.close()
                    continue
                with self._conns_lock:
                    self._count += 1
                    conn = _Connection(self, sock, self._count)
                    self._conns.add(conn)
                conn.start()
            except Exception:
                log.exception("memls owner: could not start a client")
                sock.close()

    def _forget(self, conn: _Connection) -> None:
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

    def dispatch(self, method: str, params: Any, conn: _Connection | None = None) -> Any:
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
