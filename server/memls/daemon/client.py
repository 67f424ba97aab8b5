"""RemoteEngine: the engine of another process, reached over its socket, with the same methods.

Every entry of `protocol.METHODS` becomes a method named like the engine's (`store`, `query`,
`check_pair`, ...) taking the same params Struct and returning the same result Struct; errors
come back as the same exception classes with the same message and field.

One connection per RemoteEngine. Calls may come from any thread: each request carries an id, a
reader thread matches replies to callers, so calls run concurrently on the owner's side.
Notifications (after `subscribe()`, or as soon as a listener is added to `listeners`) are
delivered to the listeners on a separate thread, so a listener may call the engine again.

With a `deadline` (a time.monotonic() value, set by open_engine) no call waits past it: the
call raises `OwnerSilent`, its outcome unknown.

When the owner goes away the connection closes: every call in flight and every later call raises
`OwnerExited` (a StoreError), and the callbacks in `on_close` run once. The handle is then dead;
`memls.daemon.reconnect(handle)` opens the directory again, taking ownership if it is free.
"""

from __future__ import annotations

import itertools
import logging
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from memls import __version__, limits, protocol
from memls.daemon.sockets import socket_path, unix_address
from memls.errors import InvalidInput, MemlsError, NotFound, Refused, StoreError

log = logging.getLogger("memls.daemon")

ERRORS: dict[str, type[MemlsError]] = {
    cls.kind: cls for cls in (InvalidInput, NotFound, Refused, StoreError)
}


class OwnerExited(StoreError):
    """The owning process exited (or stopped serving): this handle can no longer be used."""


class OwnerUnavailable(StoreError):
    """Nobody answers on the socket (absent, refused, or silent): the owner does not serve."""


class OwnerSilent(StoreError):
    """The owner did not answer a call by the handle's deadline (its outcome is unknown)."""


def error_from_wire(body: Any) -> MemlsError:
    """The exception an error reply stands for: same class, message and field as the owner's."""
    if not isinstance(body, dict):
        return MemlsError(f"malformed error reply from the owner: {body!r}")
    kind = str(body.get("kind") or "error")
    cls = ERRORS.get(kind, MemlsError)
    exc = cls(str(body.get("message") or kind), field=body.get("field"))
    if cls is MemlsError and kind != MemlsError.kind:
        exc.kind = kind  # method_not_found, internal, parse_error, ...
    return exc


class _Slot:
    __slots__ = ("done", "result", "error", "failure")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: Any = None
        self.failure: str | None = None


class _Listeners(list):
    """The engine's `listeners` list; adding a listener subscribes the connection."""

    def __init__(self, on_add: Callable[[], None]) -> None:
        super().__init__()
        self._on_add = on_add

    def append(self, item: Any) -> None:
        super().append(item)
        self._on_add()

    def extend(self, items: Iterable[Any]) -> None:
        items = list(items)
        super().extend(items)
        if items:
            self._on_add()

    def insert(self, index: int, item: Any) -> None:  # type: ignore[override]
        super().insert(index, item)
        self._on_add()

    def __iadd__(self, items: Iterable[Any]) -> _Listeners:  # type: ignore[misc]
        self.extend(items)
        return self


class RemoteEngine:
    """A thin client of the owner's socket with the Engine's methods (see module doc)."""

    def __init__(self, sock: socket.socket, directory: Path, *, front: str = "api") -> None:
        self.directory = directory
        self.front = front
        self.owner_pid: int | None = None
        self.owner_version: str | None = None
        self.owner_front: str | None = None
        self.vectors_enabled = False
        self.listeners: list[Callable[[str, Any], None]] = _Listeners(self._listener_added)
        self.on_close: list[Callable[[StoreError], None]] = []
        self.open_args: dict[str, Any] = {}  # set by open_engine; reused by reconnect()
        self.deadline: float | None = None  # time.monotonic() by which each call must end
        self._sock = sock
        self._ids = itertools.count(1)
        self._pending: dict[int, _Slot] = {}
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._dead: str | None = None  # why the handle cannot be used any more
        self._dead_cls: type[StoreError] = StoreError
        self._closing = False
        self._subscribed = False
        self.subscribed_projects: frozenset[str] | None = None  # None: every project
        self._notes: queue.Queue[tuple[str, Any] | None] = queue.Queue()
        self._notifier: threading.Thread | None = None
        self._reader = threading.Thread(target=self._read_loop, name="memls-remote-in", daemon=True)
        self._reader.start()

    # -------------------------------------------------------- connecting

    @classmethod
    def connect(
        cls, directory: str | os.PathLike, *, front: str = "api", timeout: float = 10.0
    ) -> RemoteEngine:
        """Connect to the owner of `directory` and shake hands; OwnerUnavailable when nobody
        answers (no socket, connection refused, or no hello within `timeout`)."""
        directory = Path(directory)
        path = socket_path(directory)
        if not path.exists():
            raise OwnerUnavailable(f"no owner socket at {path}")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            with unix_address(path) as address:
                sock.connect(address)
            sock.settimeout(None)
        except OSError as exc:
            sock.close()
            raise OwnerUnavailable(
                f"the owner socket {path} refuses connections ({exc.strerror or exc})"
            ) from None
        engine = cls(sock, directory, front=front)
        try:
            hello = engine._request(
                "$/hello",
                {"front": front, "version": __version__, "pid": os.getpid()},
                timeout=timeout,
            )
        except (MemlsError, TimeoutError) as exc:
            engine.close()
            raise OwnerUnavailable(f"the owner socket {path} did not answer ({exc})") from None
        engine.owner_pid = hello.get("pid")
        engine.owner_version = hello.get("version")
        engine.owner_front = hello.get("front")
        engine.vectors_enabled = bool(hello.get("vectors"))
        if engine.owner_version != __version__:
            log.warning(
                "memls: the owner (pid %s) runs memls %s, this process %s",
                engine.owner_pid,
                engine.owner_version,
                __version__,
            )
        return engine

    # -------------------------------------------------------- requests

    @property
    def closed(self) -> bool:
        return self._dead is not None

    def _raise_dead(self) -> None:
        raise self._dead_cls(self._dead or "closed")

    def _request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Send one request and wait for its reply (plain data); raise its error if any."""
        slot = _Slot()
        with self._lock:
            if self._dead is not None:
                self._raise_dead()
            request_id = next(self._ids)
            self._pending[request_id] = slot
        line = msgspec.json.encode({"id": request_id, "method": method, "params": params})
        limit = limits.current().max_frame_bytes
        if len(line) > limit:  # the owner would refuse it and close: say so, keep the connection
            with self._lock:
                self._pending.pop(request_id, None)
            raise limits.LimitExceeded(
                f"{method}: a request of {len(line)} bytes is over the limit max_frame_bytes = "
                f"{limit} bytes of the owner socket; it was not sent",
                limit="max_frame_bytes",
            )
        deadline = self.deadline
        bounded = timeout is None and deadline is not None
        if timeout is None and deadline is not None:
            timeout = max(0.0, deadline - time.monotonic())
        try:
            with self._send_lock:
                self._sock.sendall(line + b"\n")
        except OSError:
            self._connection_lost()
        if not slot.done.wait(timeout):
            with self._lock:
                self._pending.pop(request_id, None)
            if bounded:
                raise OwnerSilent(
                    f"the owning memls process (pid {self.owner_pid}) of {self.directory} did "
                    f"not answer {method} in the time left to this call; its outcome is unknown"
                )
            raise TimeoutError(f"{method}: no reply from the owner within {timeout} s")
        if slot.failure is not None:
            raise self._dead_cls(slot.failure)
        if slot.error is not None:
            raise error_from_wire(slot.error)
        return slot.result

    def _read_loop(self) -> None:
        try:
            reader = self._sock.makefile("rb")
            while True:
                line = reader.readline()
                if not line:
                    break
                try:
                    message = msgspec.json.decode(line)
                except msgspec.DecodeError:
                    log.warning("memls: unreadable line from the owner: %.200r", line)
                    continue
                if not isinstance(message, dict):
                    continue
                if "id" in message and ("result" in message or "error" in message):
                    with self._lock:
                        slot = self._pending.pop(message["id"], None)
                    if slot is None:
                        if message["id"] is None and "error" in message:
                            log.warning("memls: the owner reported %s", message["error"])
                        continue
                    slot.result = message.get("result")
                    slot.error = message.get("error")
                    slot.done.set()
                elif isinstance(message.get("method"), str):
                    self._notes.put((message["method"], message.get("params")))
        except (OSError, ValueError):
            pass
        self._connection_lost()

    def _connection_lost(self) -> None:
        with self._lock:
            if self._dead is not None:
                return
            if self._closing:
                self._dead, self._dead_cls = "this memls engine handle is closed", StoreError
            else:
                self._dead = (
                    f"the owning memls process (pid {self.owner_pid}) of {self.directory} exited "
                    "or stopped serving; open the data directory again to take over "
                    "(memls.daemon.reconnect)"
                )
                self._dead_cls = OwnerExited
            pending, self._pending = self._pending, {}
            closing = self._closing
        for slot in pending.values():
            slot.failure = self._dead + (
                "" if closing else " — the outcome of the request in flight is unknown"
            )
            slot.done.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._notes.put(None)
        if not closing:
            error = OwnerExited(self._dead)
            for callback in list(self.on_close):
                try:
                    callback(error)
                except Exception:
                    log.exception("memls: on_close callback failed")

    # -------------------------------------------------------- notifications

    def subscribe(self, projects: Iterable[str] | None = None) -> None:
        """Ask the owner to forward its notifications: of `projects` only (a window's own), or
        of every project when None. Idempotent; a different scope replaces the last one."""
        scope = None if projects is None else frozenset(projects)
        if self._subscribed and scope == self.subscribed_projects:
            return
        with self._lock:
            if self._notifier is None:
                self._notifier = threading.Thread(
                    target=self._notify_loop, name="memls-remote-notify", daemon=True
                )
                self._notifier.start()
        self._request("$/subscribe", None if scope is None else {"projects": sorted(scope)})
        self._subscribed, self.subscribed_projects = True, scope

    def _listener_added(self) -> None:
        if not self._subscribed:
            self.subscribe(self.subscribed_projects)

    def _notify_loop(self) -> None:
        while True:
            item = self._notes.get()
            if item is None:
                return
            method, params = item
            kind = protocol.NOTIFICATIONS.get(method)
            try:
                payload = msgspec.convert(params, kind) if kind is not None else params
            except msgspec.ValidationError as exc:
                log.warning("memls: undecodable %s notification: %s", method, exc)
                continue
            for listener in list(self.listeners):
                try:
                    listener(method, payload)
                except Exception:
                    log.exception("memls: listener failed for %s", method)

    # -------------------------------------------------------- not in METHODS

    def flush(self, timeout: float = 120.0) -> bool:
        """Wait until the owner has indexed every acknowledged write (True when it has)."""
        return bool(self._request("$/flush", {"timeout": timeout})["flushed"])

    def export(self, project: str | None) -> Iterator[dict[str, Any]]:
        return iter(self._request("memory/export", {"project": project})["lines"])

    def import_(
        self, project: str | None, lines: Iterable[str], *, redact: bool = False
    ) -> dict[str, int]:
        params = {"project": project, "lines": list(lines), "redact": redact}
        return dict(self._request("memory/import", params)["imported"])

    # -------------------------------------------------------- life cycle

    def close(self, flush_timeout: float = 0.0) -> None:
        """Drop the connection (the owner and its store are untouched). Idempotent."""
        with self._lock:
            self._closing = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if threading.current_thread() is not self._reader:
            self._reader.join(timeout=5.0)
        self._connection_lost()
        self._sock.close()
        notifier = self._notifier
        if notifier is not None and threading.current_thread() is not notifier:
            notifier.join(timeout=5.0)

    def __enter__(self) -> RemoteEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"owner pid {self.owner_pid}"
        return f"<RemoteEngine {self.directory} ({state})>"


def _remote_method(wire: str, spec: protocol.Method) -> Callable[..., Any]:
    def call(self: RemoteEngine, params: Any) -> Any:
        if not isinstance(params, spec.params):
            raise InvalidInput(
                f"{spec.engine} takes a {spec.params.__name__}, not {type(params).__name__}"
            )
        result = self._request(wire, protocol.to_wire(params))
        return msgspec.convert(result, spec.result)

    call.__name__ = call.__qualname__ = spec.engine
    call.__doc__ = f"{wire} on the owner: {spec.params.__name__} -> {spec.result.__name__}."
    return call


for _wire, _spec in protocol.METHODS.items():
    setattr(RemoteEngine, _spec.engine, _remote_method(_wire, _spec))
del _wire, _spec
