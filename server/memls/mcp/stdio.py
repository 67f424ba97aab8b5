"""`memls mcp`'s stdio transport: one JSON-RPC message per line, checked before the SDK.

The SDK's own `stdio_server` hands each line to pydantic and, when that fails, passes the
exception to the session, which logs it and answers nothing: a client waits for ever on a
request whose JSON it cannot follow. This transport reads and checks each line the way the
LSP front checks a frame (`memls.lsp.transport`), answers what it refuses itself, and passes
only well-formed messages on:

- a line over `max_frame_bytes` (the LSP front's frame limit): `-32600` with id null naming
  the limit, unread; then the input is closed and the server exits (status 1, said on
  stderr), so the client starts it again;
- not JSON text (bad JSON or UTF-8, nested deeper than `MAX_NESTING`): `-32700`, id null;
- a batch, a non-object, an id that is not an integer or a string: `-32600`, id null;
- `jsonrpc` other than "2.0", a method that is not a string, neither a method nor a result:
  `-32600` with the id (null for a message without one); params that are not an object:
  `-32600` with the id;
- JSON that is not valid Unicode (a lone surrogate escape): `-32602` with the id, naming the
  field (`arguments.text`);
- a request method MCP does not define: `-32601`; params that do not fit its MCP type:
  `-32602` naming the field.

Notifications that fail a check are dropped (logged), as JSON-RPC wants.

Pipes are read and written on the event loop itself: the SDK's default hands every line read,
every write and every flush to a worker thread, and each hop between threads can wait out the
GIL's switch interval while the indexer thread embeds the last write. Anything that is not a
pipe (a file, a terminal) is read and written on worker threads.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import sys
import typing
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pydantic
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from mcp import types
from memls import limits

log = logging.getLogger("memls.mcp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

REQUESTS: dict[str, type[pydantic.BaseModel]] = {
    typing.get_args(kind.model_fields["method"].annotation)[0]: kind
    for kind in typing.get_args(types.ClientRequest.model_fields["root"].annotation)
}
"""The request types MCP defines for a client, by method."""


class TooLong(Exception):
    """A line over the frame limit (it was not read)."""


# ---------------------------------------------------------------- checking a line


def error(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": body}


def check(line: bytes) -> tuple[types.JSONRPCMessage | None, dict[str, Any] | None]:
    """(the message to pass on, or None; the error to answer, or None)."""
    try:
        message, not_unicode = limits.decode_json(line)
    except limits.NotJson as exc:
        return None, error(
            None, PARSE_ERROR, exc.message, {"limit": exc.limit} if exc.limit else None
        )
    if isinstance(message, list):
        return None, error(None, INVALID_REQUEST, "batches (JSON arrays) are not supported")
    if not isinstance(message, dict):
        return None, error(None, INVALID_REQUEST, "a message must be a JSON object")
    msg_id = message.get("id")
    readable = isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool)
    if readable and isinstance(msg_id, str) and limits.has_surrogate(msg_id):
        readable = False
    if "id" in message and not readable:
        return None, error(None, INVALID_REQUEST, "id must be an integer or a string")
    reply_id = msg_id if readable else None
    request = readable and "method" in message

    def refuse(code: int, text: str, data: Any = None) -> tuple[None, dict[str, Any] | None]:
        if not readable:
            log.warning("memls mcp: dropped a notification: %s", text)
            return None, None
        return None, error(reply_id, code, text, data)

    if message.get("jsonrpc") != "2.0":  # an invalid envelope: answered, id or not
        return None, error(reply_id, INVALID_REQUEST, 'jsonrpc must be "2.0"')
    if "method" not in message:
        return _response(message, not_unicode, reply_id)
    method = message["method"]
    if not isinstance(method, str):
        return None, error(reply_id, INVALID_REQUEST, "method must be a string")
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return refuse(INVALID_REQUEST, "params must be an object")
    if not_unicode is not None:
        if not_unicode.startswith("params."):
            field = not_unicode.removeprefix("params.")
            return refuse(INVALID_PARAMS, limits.not_unicode(field), {"field": field})
        return refuse(INVALID_REQUEST, limits.not_unicode(not_unicode))
    if request and method not in REQUESTS:
        return refuse(METHOD_NOT_FOUND, f"method not found: {limits.printable(method)}")
    if request:
        try:
            REQUESTS[method].model_validate({"method": method, "params": params})
        except pydantic.ValidationError as exc:
            return refuse(INVALID_PARAMS, _invalid(method, exc), {"field": _field(exc)})
    try:
        return types.JSONRPCMessage.model_validate(message), None
    except pydantic.ValidationError as exc:
        return refuse(INVALID_PARAMS, _invalid(method, exc), {"field": _field(exc)})


def _response(message: dict[str, Any], not_unicode: str | None, reply_id: Any) -> Any:
    """A client's answer to one of our requests (roots/list)."""
    if "result" not in message and "error" not in message:
        return None, error(
            reply_id,
            INVALID_REQUEST,
            "a message needs a method (request, notification) or a result or error",
        )
    if not_unicode is not None:
        log.warning("memls mcp: dropped a response that is not valid Unicode")
        return None, None
    try:
        return types.JSONRPCMessage.model_validate(message), None
    except pydantic.ValidationError as exc:
        log.warning("memls mcp: dropped a malformed response: %s", exc.errors()[:1])
        return None, None


def _field(exc: pydantic.ValidationError) -> str | None:
    errors = exc.errors()
    if not errors:
        return None
    loc = [str(part) for part in errors[0]["loc"] if part != "params"]
    return ".".join(loc) or None


def _invalid(method: str, exc: pydantic.ValidationError) -> str:
    details = []
    for err in exc.errors()[:3]:
        where = ".".join(str(part) for part in err["loc"] if part != "params")
        details.append(f"{where}: {err['msg']}" if where else err["msg"])
    return f"invalid params for {limits.printable(method)}: " + "; ".join(details)


# ---------------------------------------------------------------- the streams


class _PipeLines:
    """stdin's lines (bytes), read on the event loop; TooLong past the limit."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def readline(self) -> bytes:
        try:
            return await self.reader.readline()
        except ValueError:  # asyncio: the separator is further than the limit
            raise TooLong from None


class _FileLines:
    """A file's lines (bytes), read on a worker thread."""

    def __init__(self, stream: typing.BinaryIO, limit: int) -> None:
        self.stream = stream
        self.limit = limit

    async def readline(self) -> bytes:
        line = await anyio.to_thread.run_sync(self.stream.readline, self.limit + 1)
        if len(line) > self.limit and not line.endswith(b"\n"):
            raise TooLong
        return line


class _PipeOut:
    """The protocol's stdout, written on the event loop."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


async def streams() -> tuple[Any, Any]:
    """stdin and a private duplicate of stdout for the protocol; file descriptor 1 then points
    at stderr, so nothing printed by a library (Python or C) can corrupt the MCP stream."""
    limit = limits.current().max_frame_bytes
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    loop = asyncio.get_running_loop()
    try:
        reader = asyncio.StreamReader(limit=limit)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
        writer = asyncio.StreamWriter(transport, flow, None, loop)
        return _PipeLines(reader), _PipeOut(writer)
    except (OSError, ValueError):
        stdout = anyio.wrap_file(io.TextIOWrapper(out, encoding="utf-8", write_through=True))
        return _FileLines(sys.stdin.buffer, limit), stdout


class Transport:
    """The checked stdio transport; `refused` says why the input was closed early, if it was."""

    def __init__(self, lines: Any, out: Any) -> None:
        self.lines = lines
        self.out = out
        self.refused: str | None = None
        self._lock = anyio.Lock()

    async def emit(self, data: str) -> None:
        async with self._lock:
            await self.out.write(data + "\n")
            await self.out.flush()

    async def _read(self, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        async with sink:
            while True:
                try:
                    line = await self.lines.readline()
                except TooLong:
                    limit = limits.current().max_frame_bytes
                    self.refused = (
                        f"a line over the limit max_frame_bytes = {limit} bytes; "
                        "it was not read, and the input is closed"
                    )
                    answer = error(
                        None,
                        INVALID_REQUEST,
                        self.refused,
                        {"limit": "max_frame_bytes", "max": limit},
                    )
                    await self.emit(_dump(answer))
                    log.error(
                        "memls: closing the connection: %s; exiting: the client must start "
                        "the server again",
                        self.refused,
                    )
                    return
                if not line:
                    return
                if not line.strip():
                    continue
                message, refusal = check(line)
                if refusal is not None:
                    await self.emit(_dump(refusal))
                if message is not None:
                    await sink.send(SessionMessage(message))

    async def _write(self, source: MemoryObjectReceiveStream[SessionMessage]) -> None:
        async with source:
            async for session_message in source:
                await self.emit(
                    session_message.message.model_dump_json(by_alias=True, exclude_none=True)
                )

    @asynccontextmanager
    async def open(self) -> AsyncIterator[tuple[Any, Any]]:
        """(read stream, write stream) for `Server.run`, as the SDK's `stdio_server` gives."""
        read_sink, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_source = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._read, read_sink)
            tg.start_soon(self._write, write_source)
            yield read_stream, write_stream


def _dump(answer: dict[str, Any]) -> str:
    return msgspec.json.encode(answer).decode("utf-8")
