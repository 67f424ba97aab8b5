"""Records as the wire carries them: memories, query hits, log entries."""

from __future__ import annotations

from typing import Any, Literal

from memls.protocol.base import (
    AgentOrigin,
    FeedbackSignal,  # noqa: F401
    ForgetReason,
    ImportSource,
    MemoryType,
    Status,
    Trust,
    Wire,
)


class ConflictRef(Wire):
    """An open contradiction of a memory, as its readers see it: the other statement, how
    sure the scorer was, which of the two is newer, and which one stands now (the newer,
    unless the older one was approved on review after the newer was recorded, or the newer
    is an agent's own unreviewed memory and the older a note of the project: the project's
    files outrank what an agent told itself)."""

    id: str
    confidence: float
    newer: str
    current: str


CitationState = Literal["fresh", "moved", "changed", "missing"]
CitationKind = Literal["span", "symbol", "file"]


class Citation(Wire):
    """Code a memory cites, where it stands now and whether it still says what it said.

    `path` and the lines (1-based, inclusive) are where the citation stands now (they follow
    moves and renames; `citedPath` is where it was made when that differs). `state`: fresh
    (the text is where it was), moved (found elsewhere, or in the file it was renamed to),
    changed (the file is there, the cited text is not: `diff` says what changed, capped) or
    missing (the file or the symbol is gone)."""

    path: str
    start_line: int
    end_line: int
    state: CitationState
    kind: CitationKind = "span"
    symbol: str | None = None
    inferred: bool = False
    cited_path: str | None = None
    diff: str | None = None


class NoteSource(Wire):
    """A note file that states a memory, and the lines it stands on there (`SourceRange`)."""

    uri: str
    range: str | None = None


class RelationRef(Wire):
    """A named link between two memories that another memory tool kept (basic-memory's
    `- depends_on [[Other note]]`): the other memory, and the source's name for the link."""

    id: str
    label: str | None = None


class Memory(Wire):
    id: str
    project: str
    content: str
    type: MemoryType
    status: Status
    trust: Trust
    valid_from: str
    recorded_at: str
    content_hash: str
    canonical_hash: str
    valid_until: str | None = None
    invalidated_at: str | None = None
    feedback_score: int = 0
    source_uri: str | None = None
    source_range: str | None = None
    derived_from: str | None = None
    seen_again: int = 0  # times the same claim was stated again and not stored twice
    last_seen_at: str | None = None  # the last of those times
    #: whose own memory its note file is (an agent's, outside the project): `ORIGIN_NAMES`
    origin: AgentOrigin | None = None
    #: the memory tool whose store it was imported from (`memls import --from`):
    #: `IMPORT_NAMES`
    imported_from: ImportSource | None = None
    supersedes: list[str] = []
    superseded_by: list[str] = []
    contradicts: list[ConflictRef] = []  # open pairs where this is the newer statement
    contradicted_by: list[ConflictRef] = []  # open pairs where a newer statement contests it
    citations: list[Citation] = []  # the code it cites, with their states
    stale: bool = False  # a cited text changed or is gone
    #: the files it applies to, globs relative to the project folder (a nested instruction
    #: file's folder, a rules file's front matter); empty: the whole project
    scope: list[str] = []
    #: every note file that states it, first first (`sourceUri`/`sourceRange` are the first):
    #: it is forgotten only when none states it any more
    sources: list[NoteSource] = []
    #: memories of other note files that say the same in other words (the near-duplicate
    #: rule), either way: each kept, and forgotten, by its own files
    restates: list[str] = []
    #: the words another memory tool filed it under (its tags), in its order
    tags: list[str] = []
    #: named links from it to other memories, as another memory tool kept them
    related: list[RelationRef] = []
    #: named links from other memories to it
    related_by: list[RelationRef] = []


class Explain(Wire):
    """Why a result scored what it did."""

    fused: float
    stage: Literal["fused", "rerank"]
    bm25: float | None = None
    vector: float | None = None
    rerank: float | None = None
    boosts: dict[str, float] = {}
    lifted_by: str | None = None  # the re-ranked neighbour in its source that lifted this one


class QueryHit(Memory, kw_only=True):
    score: float
    explain: Explain | None = None


class TrustTransition(Wire):
    memory_id: str
    from_trust: Trust
    to_trust: Trust
    cause: Literal["approve", "reject", "restore", "feedback"]
    at: str
    note: str | None = None


class ForgetEntry(Wire):
    memory_id: str
    project: str
    reason: ForgetReason
    preview: str
    type: MemoryType
    at: str
    front: str


class AuditEntry(Wire):
    seq: int
    at: str
    project: str
    op: str
    front: str
    memory_id: str | None = None
    detail: dict[str, Any] | None = None


class DeadLetter(Wire):
    operation: str
    memory_id: str
    project: str
    error: str
    attempts: int
    first_at: str
    last_at: str
    resolved_at: str | None = None
