"""An LSP connection's frames: header blocks checked, bodies read, a stream that slipped found
again at the next `Content-Length:`.

- Headers: at most `limits.MAX_HEADER_BYTES`; `Content-Length` required, digits only.
  Bytes that are not a header block (a body without its header, garbage, a block over
  MAX_HEADER_BYTES) are answered once (-32700, id null) and skipped to the next
  `Content-Length:`, so an editor's session survives its own slip (docs/reliability.md).
  A `Content-Length` line after another one, or after a line that is not `Name: value`,
  starts a new frame: what came before it (a header with neither its blank line nor its
  body, a stray line) is answered once.
- A body shorter than its Content-Length (the header promises N bytes, fewer come before
  the next frame's header) is found while it is read: a complete header line,
  `Content-Length: <digits>` and its line end, can never lie inside a JSON text (the name
  can only be inside a string, and a JSON string holds no raw line break), so the body ends
  where one begins. It is answered once (-32700, id null) as soon as that line has come,
  without waiting for the N bytes, and the header is read again as the next frame's.
  When the N bytes end inside such a line (`...}Content-Len`), the next line read is joined
  to that tail; if together they make the line, the next frame starts there (the body,
  which cannot be JSON either, has been answered already).
- A TCP client that has not initialized with the token may send `PREAUTH_BYTES` (64 KiB)
  in all, headers included, whatever the number of frames. Past that it is answered (id
  null, naming the limit) and closed; so is a header block over MAX_HEADER_BYTES or a bad
  header before the token.
- A frame over `max_frame_bytes` (or over what is left of `PREAUTH_BYTES`) is answered
  (id null, naming the limit) and the connection is closed without reading it: the stream
  cannot be trusted after a frame that was not read (a claim of 10^11 bytes would otherwise
  be waited for).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from memls import limits

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
SKIPPED = "; skipped to the next Content-Length header"
RESTART = "; the next Content-Length header starts a new frame"
HEADER_NAME = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 7230 token
CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
CONTENT_LENGTH_SPAN = 32  # the longest match: kept across two reads while skipping
# a whole `Content-Length: N` line: never inside a JSON text (see the module)
HEADER_LINE = re.compile(rb"content-length[ \t]{0,16}:[ \t]{0,16}[0-9]{1,18}[ \t]{0,16}\r?\n", re.I)
HEADER_LINE_SPAN = 96  # longer than any match
_NAME = b"content-length"
# what the N bytes of a body may end with when the next header line has begun inside them
HEADER_START = re.compile(
    b"(?:"
    + b"|".join(re.escape(_NAME[:n]) for n in range(1, len(_NAME)))
    + rb"|content-length[ \t]*(?::[ \t]*[0-9]*[ \t]*\r?)?)",
    re.IGNORECASE,
)

Answer = Callable[[Any, int, str, Any], None]


class Closed(Exception):
    """The input ended or the connection must close."""


class Frames:
    """The bodies of one client's frames, in order; what could not be read is answered here."""

    def __init__(self, source, answer: Answer, gated: Callable[[], bool]) -> None:
        self.source = source
        self.answer = answer  # (id, code, message, data): one JSON-RPC error to the client
        self.gated = gated  # a TCP client without the token (PREAUTH_BYTES, closed on errors)
        self.refused: str | None = None  # why the connection was closed on a frame
        self.received = 0  # bytes read from the client (PREAUTH_BYTES before the token)
        self.pending = b""  # bytes read and not yet used: the start of the next header block
        self.tail = b""  # a body's last bytes that may begin the next header line

    async def next(self) -> bytes | None:
        """The next frame's body; None when the frame was answered here; Closed at the end
        of the input or when the connection must close."""
        length = await self.read_header()
        if length is None:
            return None
        if self.gated():  # bytes already read (pending) were counted when they came
            limit, name = limits.PREAUTH_BYTES - self.received + len(self.pending), "PREAUTH_BYTES"
        else:
            limit, name = limits.current().max_frame_bytes, "max_frame_bytes"
        if length > limit:
            if name == "PREAUTH_BYTES":
                message = limits.preauth_exceeded(self.received - len(self.pending) + length)
            else:
                message = limits.frame_too_large(length, limit, name).message
            self.refuse(INVALID_REQUEST, message, {"limit": name, "max": limit})
            raise Closed
        return await self.read_body(length)

    def refuse(self, code: int, message: str, data: dict[str, Any]) -> None:
        """A frame over a limit: answered, not read; the connection ends (see the module)."""
        self.answer(None, code, message, data)
        self.refused = message

    # -------------------------------------------------------- bytes

    def counted(self, data: bytes) -> bytes:
        self.received += len(data)
        if self.gated() and self.received > limits.PREAUTH_BYTES:
            self.refuse(
                INVALID_REQUEST,
                limits.preauth_exceeded(self.received),
                {"limit": "PREAUTH_BYTES", "max": limits.PREAUTH_BYTES},
            )
            raise Closed
        return data

    async def next_line(self) -> bytes:
        """One line of at most MAX_HEADER_BYTES + 1 bytes, pending bytes first; joined to the
        last body's tail when together they make a `Content-Length: N` line."""
        line = await self.read_line(limits.MAX_HEADER_BYTES + 1)
        if self.tail:
            joined, self.tail = self.tail + line, b""
            if HEADER_LINE.match(joined):
                return joined
        return line

    async def read_line(self, limit: int) -> bytes:
        head = b""
        if self.pending:
            end = self.pending.find(b"\n", 0, limit)
            if end >= 0 or len(self.pending) >= limit:
                cut = end + 1 if end >= 0 else limit
                line, self.pending = self.pending[:cut], self.pending[cut:]
                return line
            head, self.pending = self.pending, b""
        return head + self.counted(await self.source.readline(limit - len(head)))

    async def take(self, n: int) -> bytes:
        """At most n bytes, at least one unless the input ended: pending ones first."""
        if self.pending:
            data, self.pending = self.pending[:n], self.pending[n:]
            return data
        return self.counted(await self.source.read_some(n))

    # -------------------------------------------------------- bodies

    async def read_body(self, length: int) -> bytes | None:
        """The frame's `length` bytes, read as they come; None when they were answered here:
        a body shorter than its Content-Length (see the module). Closed when the input ends
        inside the frame (answered when something of it came)."""
        body = bytearray()
        while len(body) < length:
            searched = len(body)
            chunk = await self.take(length - len(body))
            if not chunk:
                if body.strip():
                    self.answer(
                        None,
                        PARSE_ERROR,
                        f"the input ended inside a frame ({len(body)} of {length} bytes): "
                        "not valid JSON",
                        None,
                    )
                raise Closed
            body += chunk
            found = self.header_line(body, searched)
            if found is not None:
                at = found.start()
                self.pending = bytes(body[at:]) + self.pending
                self.answer(
                    None,
                    PARSE_ERROR,
                    f"a frame's body ended after {at} of its {length} bytes, where the next "
                    "frame's Content-Length header began: not valid JSON",
                    None,
                )
                return None
        start = max(0, length - HEADER_LINE_SPAN)
        for at in range(start, length):
            if body[at] in b"cC" and HEADER_START.fullmatch(body, at):
                self.tail = bytes(body[at:])  # joined to the next line if it completes it
                break
        return bytes(body)

    @staticmethod
    def header_line(body: bytearray, start: int) -> re.Match[bytes] | None:
        """The first `Content-Length: N` line that ends in body[start:]: one is looked for only
        where a line ends (memchr is fast; most bodies hold no raw line break at all)."""
        end = body.find(b"\n", start)
        while end >= 0:
            found = HEADER_LINE.search(body, max(0, end - HEADER_LINE_SPAN), end + 1)
            if found is not None:
                return found
            end = body.find(b"\n", end + 1)
        return None

    # -------------------------------------------------------- headers

    async def read_header(self) -> int | None:
        """The next frame's Content-Length; None when the header block was unusable (it has
        been answered); Closed at the end of the input or after a refused header block.

        Bytes that are not a header block (a body sent without its header, garbage, a block
        over MAX_HEADER_BYTES) are answered once with -32700 and skipped up to the next
        `Content-Length:`; a TCP client without the token is cut off instead."""
        seen = 0
        length: int | None = None
        bad: str | None = None
        lines = 0
        while True:
            line = await self.next_line()
            if not line:
                if lines:
                    self.answer(None, PARSE_ERROR, "the input ended inside a frame's headers", None)
                raise Closed
            seen += len(line)
            if seen > limits.MAX_HEADER_BYTES:
                message = (
                    f"frame headers over {limits.MAX_HEADER_BYTES} bytes (MAX_HEADER_BYTES); "
                    "they were not read"
                )
                data = {"limit": "MAX_HEADER_BYTES", "max": limits.MAX_HEADER_BYTES}
                if self.gated():
                    self.refuse(PARSE_ERROR, message, data)
                    raise Closed
                self.answer(
                    None,
                    PARSE_ERROR,
                    f"over {limits.MAX_HEADER_BYTES} bytes (MAX_HEADER_BYTES) with no complete "
                    "frame header" + SKIPPED,
                    data,
                )
                await self.skip_to_header()
                return None
            text = line.strip()
            if not text:
                if lines == 0:
                    continue  # stray blank line between frames
                break
            found = CONTENT_LENGTH.search(line)
            if found is not None and line[: found.start()].strip() and not self.gated():
                # bytes with no header of their own, then a frame: answer, resume there
                self.answer(None, PARSE_ERROR, "bytes that are not a frame" + SKIPPED, None)
                self.resume_at(line[found.start() :])
                return None
            name, colon, value = text.partition(b":")
            if not colon or not HEADER_NAME.fullmatch(name.strip()):
                bad = bad or "a header line that is not `Name: value`"
                lines += 1
                continue
            lines += 1
            if name.strip().lower() == b"content-length":
                if length is not None or bad is not None:
                    # what came before had no blank line and no body: a frame of its own
                    why = bad or "a frame header with no blank line and no body"
                    self.answer(None, PARSE_ERROR, f"bad frame: {why}" + RESTART, None)
                    if self.gated():
                        raise Closed
                    self.resume_at(line)
                    return None
                value = value.strip()
                if not value.isdigit() or len(value) > 18:
                    bad = f"Content-Length {value[:40].decode('latin-1')!r} is not a byte count"
                    length = -1
                else:
                    length = int(value)
        if length is None or bad is not None:
            self.answer(None, PARSE_ERROR, f"bad frame: {bad or 'no Content-Length header'}", None)
            if self.gated():
                raise Closed
            return None
        return length

    async def skip_to_header(self) -> None:
        """Discard input up to the next `Content-Length:` (kept as the next line to read),
        holding at most two lines' worth in memory; Closed at the end of the input."""
        tail = b""
        while True:
            line = await self.next_line()
            if not line:
                raise Closed
            window = tail + line
            found = CONTENT_LENGTH.search(window)
            if found is not None:
                return self.resume_at(window[found.start() :])
            tail = b"" if line.endswith(b"\n") else line[-CONTENT_LENGTH_SPAN:]

    def resume_at(self, start: bytes) -> None:
        """`start` (from a `Content-Length:` on) becomes the next line to read."""
        self.pending = start + self.pending
