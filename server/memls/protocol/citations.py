"""Params and results of the memory/* requests about the code that memories cite: the spec a
front gives, a project's check, the memories citing one document, and re-confirming one."""

from __future__ import annotations

from typing import Annotated

import msgspec

from memls.protocol.base import MemoryId, Project, Uri, Wire
from memls.protocol.records import CitationState, Memory

MAX_CITATIONS = 100
"""Citations on one memory at most (a memory cites a few places, not a code base)."""

CitedPath = Annotated[
    str,
    msgspec.Meta(
        min_length=1, max_length=4096, description="a path relative to the project folder"
    ),
]
Line = Annotated[int, msgspec.Meta(ge=1, le=10_000_000)]


class CitationSpec(Wire):
    """A citation as a front gives it: a project-relative path, optionally a line range
    (1-based, inclusive; no range: the whole file; only startLine: that line) and a symbol
    (a function, class or method: with no range, its definition is found by name)."""

    path: CitedPath
    start_line: Line | None = None
    end_line: Line | None = None
    symbol: Annotated[str, msgspec.Meta(min_length=1, max_length=512)] | None = None


class CheckParams(Wire):
    """memory/check: check every citation of a project against its folder now."""

    project: Project | None = None


class CitationStatus(Wire):
    memory: str
    path: str
    start_line: int
    end_line: int
    state: CitationState
    symbol: str | None = None
    diff: str | None = None


class CheckResult(Wire):
    project: str
    citations: list[CitationStatus]
    changed: list[str] = []  # memories whose citations' states changed in this check


class CitationsParams(Wire):
    """memory/citations: the memories that cite one document."""

    uri: Uri
    project: Project | None = None


class CitedRange(Wire):
    memory: str
    preview: str
    start_line: int
    end_line: int
    state: CitationState
    stale: bool
    symbol: str | None = None


class CitationsResult(Wire):
    project: str
    path: str
    ranges: list[CitedRange]


class ReconfirmParams(Wire):
    """memory/reconfirm: the memory's citations take the cited code as it is now."""

    id: MemoryId
    project: Project | None = None


class ReconfirmResult(Wire):
    project: str
    memory: Memory
