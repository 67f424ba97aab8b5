"""What a reader of another memory tool's store hands to the engine: one project's memories,
with the history memls can keep (validity, supersession, feedback, review flags, edges,
forgetting), and what it set apart (rows of no project, counts of other projects' rows)."""

from __future__ import annotations

from typing import Literal

import msgspec

from memls.protocol.base import ForgetReason, MemoryType

#: The tools a store can be imported from, as `memls import --from` names them.
Tool = Literal["omega", "basic-memory", "claude-mem"]
#: How each tool is named to people, and in an imported memory's origin.
TOOL_NAMES: dict[str, str] = {
    "omega": "OMEGA",
    "basic-memory": "basic-memory",
    "claude-mem": "claude-mem",
}


class ForeignCitation(msgspec.Struct, frozen=True, kw_only=True):
    """A file the memory names: a path relative to the project folder, and lines when known."""

    path: str
    start_line: int | None = None
    end_line: int | None = None
    #: "read" or "modified" (claude-mem's files_read / files_modified), "named" otherwise
    role: Literal["read", "modified", "named"] = "named"


class ForeignEdge(msgspec.Struct, frozen=True, kw_only=True):
    """A relation from this memory to another of the same store, by the other's `key`."""

    kind: Literal["supersedes", "contradicts", "relates"]
    target: str
    #: the source tool's own name for the relation (basic-memory's `[[…]]` relation type)
    label: str | None = None


class ForeignMemory(msgspec.Struct, frozen=True, kw_only=True):
    #: the source tool's own id, stable across reads: an import is idempotent by it
    key: str
    text: str
    type: MemoryType = "note"
    #: ISO 8601 UTC times, as the source kept them
    created_at: str
    valid_from: str | None = None
    valid_until: str | None = None
    status: Literal["active", "superseded"] = "active"
    #: the successor's `key`, for a superseded memory
    superseded_by: str | None = None
    tags: tuple[str, ...] = ()
    feedback_score: int = 0
    #: flagged for review in the source: enters memls's review queue (trust "flagged")
    flagged: bool = False
    citations: tuple[ForeignCitation, ...] = ()
    edges: tuple[ForeignEdge, ...] = ()
    #: the source's own type or category name when it has no memls counterpart
    source_type: str | None = None


class ForeignForgetting(msgspec.Struct, frozen=True, kw_only=True):
    """A deletion the source logged and that is tied to the importing project."""

    key: str
    reason: ForgetReason
    #: the source's own reason text
    source_reason: str
    forgotten_at: str
    text: str | None = None


class ForeignStore(msgspec.Struct, kw_only=True):
    tool: Tool
    #: the source's schema or package version the reader recognised
    version: str
    source: str
    memories: list[ForeignMemory] = []
    forgotten: list[ForeignForgetting] = []
    #: rows with no project (or an empty-string one): imported only with an explicit target
    unscoped: list[ForeignMemory] = []
    #: rows of other projects, never imported: counted so a report can say they were left
    other_projects: int = 0
    #: forgetting rows that could not be tied to the project, or that name a living memory
    forgetting_skipped: int = 0
