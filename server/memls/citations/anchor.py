"""What a citation remembers about the code it cites, and where it stands now.

An `Anchor` is built once, when the memory is stored (`anchor_span`, `anchor_file`,
`anchor_symbol`), from the file's text; `memls.citations.locate` finds it again in newer text.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from memls.citations.fingerprint import FileView, display, fingerprint_lines

State = Literal["fresh", "moved", "changed", "missing"]
STATES: tuple[State, ...] = ("fresh", "moved", "changed", "missing")
STALE_STATES: frozenset[str] = frozenset({"changed", "missing"})

CONTEXT_LINES = 2
"""Normalised lines kept on each side of a span: they pick among several copies of the cited
text, when it was moved and the file holds it more than once."""

MAX_SNAPSHOT_LINES = 400
"""A span longer than this keeps only its fingerprint (no move detection, no diff): a memory
cites a function, not a module."""


class Anchor(msgspec.Struct, frozen=True, kw_only=True):
    """A citation as the tracker sees it.

    `kind` is "span" (lines), "symbol" (a named definition: its range follows the definition)
    or "file" (the whole file: it is fresh while the file exists, wherever it was moved).
    `coarse` spans (files too big or binary) are compared by the whole file's fingerprint.
    """

    path: str
    kind: Literal["span", "symbol", "file"]
    start_line: int
    end_line: int
    fingerprint: str
    lines: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    symbol: str | None = None
    coarse: bool = False
    #: the cited lines as a diff shows them (`display`), when they differ from `lines`
    shown: tuple[str, ...] = ()


class Located(msgspec.Struct, frozen=True, kw_only=True):
    """Where a citation stands in the current text."""

    state: State
    path: str
    start_line: int
    end_line: int

    @property
    def stale(self) -> bool:
        return self.state in STALE_STATES


def _context(view: FileView, start: int, end: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    first = view.index_at[start]
    last = view.index_at[end + 1]
    return (
        tuple(view.norm[max(0, first - CONTEXT_LINES) : first]),
        tuple(view.norm[last : last + CONTEXT_LINES]),
    )


def anchor_span(path: str, view: FileView, start: int, end: int) -> Anchor:
    """A citation of lines start..end (1-based, inclusive; the caller checked the range)."""
    block = view.span(start, end)
    keep = tuple(block) if len(block) <= MAX_SNAPSHOT_LINES else ()
    before, after = _context(view, start, end) if keep else ((), ())
    shown = tuple(x for x in (display(line) for line in view.lines[start - 1 : end]) if x)
    return Anchor(
        path=path,
        kind="span",
        start_line=start,
        end_line=end,
        fingerprint=fingerprint_lines(block),
        lines=keep,
        before=before,
        after=after,
        shown=shown if keep and shown != keep else (),
    )


def anchor_symbol(path: str, view: FileView, symbol: str, start: int, end: int) -> Anchor:
    """A citation of a named definition found at start..end."""
    span = anchor_span(path, view, start, end)
    return msgspec.structs.replace(span, kind="symbol", symbol=symbol)


def anchor_file(path: str, view: FileView) -> Anchor:
    """A citation of a whole file."""
    return Anchor(
        path=path,
        kind="file",
        start_line=1,
        end_line=max(1, view.line_count),
        fingerprint=fingerprint_lines(view.norm),
    )


def anchor_coarse(path: str, digest: str, line_count: int, kind: str = "file") -> Anchor:
    """A citation of a file that is not read line by line (binary, or over the size limit):
    only the file's fingerprint is kept."""
    return Anchor(
        path=path,
        kind="file" if kind == "file" else "span",
        start_line=1,
        end_line=max(1, line_count),
        fingerprint=digest,
        coarse=True,
    )
