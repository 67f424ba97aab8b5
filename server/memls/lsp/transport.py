"""The LSP transport: frames in, one answer for every request, limits before work.

pygls' own reader (`pygls.io_.run_async`) pre-allocates whatever Content-Length a client
claims, parses bodies with `json.loads` (every nested object through `structure_message`),
and answers nothing it cannot parse; its `exit` handler calls `sys.exit`. This module
replaces the reader loop for stdio and for each TCP connection:

- Frames are read by `frames.Frames`: header blocks, bodies shorter than their
  Content-Length, bytes that are not a frame, PREAUTH_BYTES before the token, frames over
  `max_frame_bytes` (answered, then the connection is closed without reading them; on
  stdio the server says so on stderr and exits with status 1, the LSP rule for an exit
  without `shutdown`, so the editor starts it again).
- A body is decoded by `limits.decode_json`: bad JSON or UTF-8, nesting deeper than
  `MAX_NESTING`: `-32700`, id null. Text that is JSON but not valid Unicode (a lone
  surrogate escape) keeps its envelope: a request is answered with its id, `-32602` naming
  the field in params (`-32600` elsewhere). A batch (array), a non-object, `jsonrpc` other
  than "2.0", a `method` that is not a string, an `id` that is not a number or a string:
  `-32600`. Every number is an id (JSON-RPC: `1.5`, `100000000000`), answered as sent, and
  so is every string: one holding a lone surrogate (`"\\ud800"`) is written back as that
  escape (pygls writes ASCII JSON), the same JSON string the client sent.
- A TCP client that has not initialized with the token gets `-32002` for every request but
  `initialize`, and its notifications (`exit` included) are dropped.
- Unknown request methods (also LSP methods memls does not implement): `-32601`. A second
  `initialize`, and any request after `shutdown`: `-32600`. Params that do not fit the
  method's LSP type: `-32602` naming the field.
- `-32603` is kept for memls' own faults: logged with its traceback, sent without one, and
  `exit` on a TCP connection ends that connection, never the daemon (`wire.GuardedProtocol`).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

from memls import limits
from memls.lsp.frames import INVALID_REQUEST, PARSE_ERROR, Closed, Frames
from memls.lsp.sources import FileSource, StreamSource

log = logging.getLogger("memls.lsp.transport")

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
NOT_INITIALIZED = -32002


# ---------------------------------------------------------------- the loop


class Connection:
    """One client's frames: read, check, answer or hand to the pygls protocol."""

    def __init__(
        self,
        source,
        protocol: LanguageServerProtocol,
        *,
        authenticated: Callable[[], bool] = lambda: True,
        close_unauthenticated: bool = False,
    ) -> None:
        self.source = source
        self.protocol = protocol
        self.authenticated = authenticated
        self.close_unauthenticated = close_unauthenticated
        self.initialized = False  # an `initialize` was handed on
        self.initialized_once = False  # the `initialized` notification was handed on
        self.frames = Frames(source, self.error, self.gated)

    @property
    def refused(self) -> str | None:
        """Why the connection was closed on a frame (None: it was not)."""
        return self.frames.refused

    # -------------------------------------------------------- answers

    def error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})

    # -------------------------------------------------------- frames

    async def run(self, stop: Callable[[], bool] = lambda: False) -> None:
        while not stop():
            try:
                body = await self.frames.next()
            except Closed:
                if self.refused is not None:
                    log.error("memls: closing the connection: %s", self.refused)
                    await self.source.linger()
                return
            if body is None:
                continue
            try:
                self.dispatch(body)
            except Exception:
                log.exception("memls: could not handle a message")

    def gated(self) -> bool:
        """A TCP client that has not given the token: it may send PREAUTH_BYTES in all."""
        return self.close_unauthenticated and not self.authenticated()

    # -------------------------------------------------------- messages

    def dispatch(self, body: bytes) -> None:
        try:
            message, not_unicode = limits.decode_json(body)
        except limits.NotJson as exc:
            self.error(None, PARSE_ERROR, exc.message, {"limit": exc.limit} if exc.limit else None)
            return
        if isinstance(message, list):
            self.error(
                None,
                INVALID_REQUEST,
                "batches (JSON arrays) are not supported: send one message per frame",
            )
            return
        if not isinstance(message, dict):
            self.error(None, INVALID_REQUEST, "a message must be a JSON object")
            return
        has_id = "id" in message
        msg_id = message.get("id")
        if has_id and not (msg_id is None or limits.readable_id(msg_id)):
            self.error(None, INVALID_REQUEST, limits.BAD_ID)
            return
        if message.get("jsonrpc") != "2.0":
            self.error(msg_id, INVALID_REQUEST, 'jsonrpc must be "2.0"')
            return
        if "method" not in message:
            self.response(message)
            return
        method = message["method"]
        if not isinstance(method, str):
            self.error(msg_id, INVALID_REQUEST, "method must be a string")
            return
        request = has_id and msg_id is not None
        if has_id and msg_id is None:
            self.error(None, INVALID_REQUEST, "a request's id must not be null")
            return
        if "params" in message and not isinstance(message["params"], (dict, list, type(None))):
            if request:
                self.error(msg_id, INVALID_REQUEST, "params must be an object or an array")
            return
        if method != types.INITIALIZE and not self.authenticated():
            if request:
                self.error(msg_id, NOT_INITIALIZED, "not initialized with the token")
            return  # a notification (exit included) from a client without the token: dropped
        proto = self.protocol
        if proto._shutdown and method != types.EXIT:
            if request:
                self.error(
                    msg_id,
                    INVALID_REQUEST,
                    "the server is shutting down (shutdown was received): only exit is accepted",
                )
            return
        if method != types.CANCEL_REQUEST and not self.known(method):
            if request:
                self.error(
                    msg_id, METHOD_NOT_FOUND, f"method not found: {limits.printable(method)}"
                )
            return  # unknown notifications are ignored (LSP: $/ ones may be)
        if not_unicode is not None:  # valid JSON, not valid Unicode: never handed on
            if request:
                self.not_unicode(msg_id, not_unicode)
            return
        if method == types.WORKSPACE_EXECUTE_COMMAND and request:
            params = message.get("params")
            arguments = params.get("arguments") if isinstance(params, dict) else None
            if arguments is not None and not isinstance(arguments, list):
                self.error(
                    msg_id,
                    INVALID_PARAMS,
                    "params.arguments: must be an array",
                    {"field": "arguments"},
                )
                return
        if method == types.INITIALIZE:
            if not request:
                return
            if self.initialized and self.authenticated():
                self.error(msg_id, INVALID_REQUEST, "initialize was already received")
                return
        if method == types.INITIALIZED:
            if request or self.initialized_once:
                if request:
                    self.error(msg_id, INVALID_REQUEST, "initialized is a notification")
                return  # a second `initialized` would start the watchers again
            self.initialized_once = True
        try:
            structured = proto.structure_message(message)
        except JsonRpcException as exc:
            if request:
                self.error(msg_id, INVALID_PARAMS, self.bad_params(method, exc))
            return
        if request and getattr(structured, "id", None) is None:
            self.error(msg_id, INVALID_REQUEST, f"{method[:200]} is a notification, not a request")
            return
        if method == types.INITIALIZE:
            self.initialized = True
        proto.handle_message(structured)

    def not_unicode(self, msg_id: Any, path: str) -> None:
        if path == "params" or path.startswith(("params.", "params[")):
            field = path.removeprefix("params").lstrip(".")
            self.error(
                msg_id, INVALID_PARAMS, limits.not_unicode(field or "params"), {"field": field}
            )
        else:
            self.error(msg_id, INVALID_REQUEST, limits.not_unicode(path))

    def known(self, method: str) -> bool:
        fm = self.protocol.fm
        return method in fm.builtin_features or method in fm.features

    def response(self, message: dict) -> None:
        """A client's reply to one of our requests."""
        if "result" not in message and "error" not in message:
            if message.get("id") is not None:
                self.error(
                    message["id"],
                    INVALID_REQUEST,
                    "a message needs a method (request, "
                    "notification) or a result or error (response)",
                )
            return
        if not self.authenticated():
            return
        try:
            self.protocol.handle_message(self.protocol.structure_message(message))
        except Exception:
            log.warning("memls: dropped a malformed response from the client", exc_info=True)

    @staticmethod
    def bad_params(method: str, exc: Exception) -> str:
        cause = exc.__cause__
        where = ""
        if cause is not None:
            try:
                from cattrs import transform_error

                details = transform_error(cause)
                where = "; ".join(
                    d.replace("$.params.", "params.").replace("$.params", "params")
                    for d in details[:3]
                )
            except Exception:  # noqa: BLE001 - best effort: the method is still named
                where = ""
        return f"invalid params for {method}" + (f": {where}" if where else "")


# ---------------------------------------------------------------- runners


def run_stdio(server, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """pygls' start_io with memls' transport."""
    import threading

    from pygls.io_ import StdoutWriter

    server._stop_event = stop = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    source = FileSource(stdin or sys.stdin.buffer, server.thread_pool)
    connection = Connection(source, server.protocol)
    try:
        asyncio.run(connection.run(stop.is_set))
    except BrokenPipeError:
        log.error("memls: the client's pipe is gone; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
    if connection.refused is not None:
        log.error("memls: exiting: the client must start the server again")
        raise SystemExit(1)


async def run_connection(server, reader: asyncio.StreamReader, gated: bool) -> None:
    """One TCP connection: frames until the client leaves, sends `exit`, or is cut off."""
    connection = Connection(
        StreamSource(reader),
        server.protocol,
        authenticated=lambda: server.authenticated,
        close_unauthenticated=gated,
    )
    await connection.run()
