"""Params and results of the memory/* requests that read and write memories."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from memls.protocol.base import (
    AgentOrigin,
    Content,
    FeedbackSignal,
    ForgetReason,
    Limit,
    MemoryId,
    MemoryType,
    NoteKind,
    Project,
    RangeText,
    ReviewAction,
    Status,
    Timestamp,
    Trust,
    Uri,
    Wire,
)
from memls.protocol.citations import MAX_CITATIONS, CitationSpec, CitedPath
from memls.protocol.records import (
    AuditEntry,
    DeadLetter,
    ForgetEntry,
    Memory,
    QueryHit,
    TrustTransition,
)


class StoreParams(Wire):
    text: Content
    project: Project | None = None
    type: MemoryType = "note"
    valid_from: Timestamp | None = None
    valid_until: Timestamp | None = None
    source_uri: Uri | None = None
    source_range: RangeText | None = None
    derived_from: MemoryId | None = None
    # store anyway: forgotten content (its tombstone cleared) and a near duplicate
    force: bool = False
    citations: Annotated[list[CitationSpec], msgspec.Meta(max_length=MAX_CITATIONS)] = []
    # a project-relative path or a `symbol` named in the text that exists in the project
    # becomes an inferred citation (project folders only)
    infer_citations: bool = True
    # a secret in the text is replaced by [REDACTED:kind] instead of refusing the memory
    redact: bool = False


class StoreResult(Wire):
    id: str
    project: str
    created: bool
    # true: this exact content is memory `id`; "near": `id` states the same claim in other
    # words (the new text was not stored; `memory.seenAgain` counts such restatements)
    duplicate: bool | Literal["near"]
    memory: Memory
    tombstone_cleared: bool = False


class GetParams(Wire):
    id: MemoryId
    project: Project | None = None


class ListParams(Wire):
    project: Project | None = None
    status: Status | None = None
    trust: Trust | None = None
    type: MemoryType | None = None
    limit: Limit = 100
    include_user: bool = False


class ListResult(Wire):
    project: str
    memories: list[Memory]


Depth = Literal["none", "interactive", "default"]


class QueryParams(Wire):
    query: Content
    project: Project | None = None
    k: Limit = 10
    valid_at: Timestamp | None = None
    as_of: Timestamp | None = None
    types: Annotated[list[MemoryType], msgspec.Meta(max_length=32)] | None = None
    include_user: bool = False
    mode: Literal["default", "interactive", "lexical"] = "default"
    rerank: bool | None = None
    rerank_depth: Annotated[int, msgspec.Meta(ge=0, le=200)] | None = None
    explain: bool = False
    # Project-relative paths (the files a developer or an agent works on): memories that cite
    # them rank first among equally relevant ones, and a memory whose path scope covers none
    # of them (a rule of another folder, `Memory.scope`) is left out; unscoped ones stay.
    paths: Annotated[list[CitedPath], msgspec.Meta(max_length=64)] = []
    # How much re-ranking: none (fused order), interactive (the shallow head of
    # [retrieval] interactive_depth), default ([retrieval] rerank_depth). None: the mode's
    # (interactive for mode interactive, none for lexical), else default. rerankDepth wins.
    depth: Depth | None = None


class QueryResult(Wire):
    project: str
    results: list[QueryHit]
    degraded: list[str] = []
    took_ms: float | None = None
    cached: bool = False  # answered from the project's result cache (no write since)


class QueryCacheStats(Wire):
    """The per-project result cache of memory/query (docs/retrieval.md)."""

    enabled: bool
    hits: int  # of this project, since the engine started
    misses: int
    entries: int  # cached answers of this project now
    capacity: int  # entries of all projects together, least recently used dropped first


class SupersedeParams(Wire):
    old: MemoryId
    by: MemoryId
    project: Project | None = None


class SupersedeResult(Wire):
    project: str
    old: Memory
    new: Memory


class FeedbackParams(Wire):
    id: MemoryId
    signal: FeedbackSignal
    project: Project | None = None
    query: Content | None = None


class FeedbackResult(Wire):
    project: str
    id: str
    signal: FeedbackSignal
    score: int
    trust: Trust
    transition: TrustTransition | None = None


class ReviewParams(Wire):
    action: ReviewAction
    project: Project | None = None
    id: MemoryId | None = None
    note: Content | None = None
    state: Trust = "flagged"


class ReviewResult(Wire):
    project: str
    action: ReviewAction
    memories: list[Memory] = []
    transition: TrustTransition | None = None
    # "Cited code changed" (action list): memories whose cited code changed or is gone, to
    # re-confirm (memory/reconfirm), edit, or forget with reason source_changed
    cited_code_changed: list[Memory] = []


class ForgetParams(Wire):
    id: MemoryId
    reason: ForgetReason
    project: Project | None = None


class ForgetResult(Wire):
    project: str
    id: str
    reason: ForgetReason
    at: str


class ForgottenParams(Wire):
    project: Project | None = None
    reason: ForgetReason | None = None
    limit: Limit = 100


class ForgottenResult(Wire):
    project: str
    entries: list[ForgetEntry]


class StatsParams(Wire):
    project: Project | None = None


class StatsResult(Wire):
    project: str
    memories: int
    by_status: dict[str, int]
    by_trust: dict[str, int]
    by_type: dict[str, int]
    review_queue: int
    forgotten: int
    tombstones: int
    feedback_signals: int
    dead_letters: int
    schema_version: int
    data_dir: str
    index_pending: int = 0
    degraded: list[str] = []
    query_cache: QueryCacheStats | None = None


class AuditParams(Wire):
    project: Project | None = None
    id: MemoryId | None = None
    limit: Limit = 100


class AuditResult(Wire):
    project: str
    entries: list[AuditEntry]


class MaintainParams(Wire):
    project: Project | None = None


class MaintainResult(Wire):
    project: str
    expired: list[str]
    retried: int
    failed: list[DeadLetter]


class ReindexParams(Wire):
    project: Project | None = None


class ReindexResult(Wire):
    project: str
    queued: int
    indexed: bool


class DoctorParams(Wire):
    project: Project | None = None
    secrets: bool = False  # also look for secrets in the stored memories
    repair: bool = False  # with secrets: redact the ones found ([REDACTED:kind])


class StoredSecret(Wire):
    """A secret found in a stored memory (by `memory/doctor` with secrets)."""

    id: str
    kind: str
    line: int  # 1-based, in the memory's text
    column: int  # 1-based
    # where: the memory's text, or the preview the forgetting log keeps of a forgotten one
    place: Literal["memory", "forgetting_log"] = "memory"


class DoctorResult(Wire):
    project: str
    ok: bool
    problems: list[str]
    models: dict[str, Any]
    memories: int
    indexed: int
    pending: int
    missing: list[str] = []
    extra: list[str] = []
    stale: list[str] = []
    secrets: list[StoredSecret] = []  # with params.secrets: what was found
    redacted: list[str] = []  # with params.repair: the memories whose secrets were redacted


class HealthParams(Wire):
    pass


class HealthResult(Wire):
    """Is the engine usable, and is anything degraded (models, index)? No project data."""

    ok: bool
    version: str
    data_dir: str
    schema_version: int
    vectors: bool
    models: dict[str, Any]
    degraded: list[str]
    index_pending: int


class SyncNoteParams(Wire):
    """Index one note file (its text as the editor or the disk has it; null: file removed)."""

    uri: Uri
    text: str | None  # a whole note file: bounded by max_frame_bytes
    project: Project | None = None
    #: null: the default memory type of its lines, by the table of the agents' conventions
    default_type: MemoryType | None = None
    #: null: the engine decides by the note's path in the project folder (the table of the
    #: agents' conventions and the `[notes]` globs of its config.toml)
    kind: NoteKind | None = None
    #: the files its lines apply to (globs relative to the project folder; empty: all of
    #: them); null: read from its path and front matter, as its agent reads them
    scope: Annotated[list[ScopeGlob], msgspec.Meta(max_length=64)] | None = None
    #: true: `text` is an editor's open buffer, which wins over the disk: the owner's note
    #: watcher leaves this file alone until it is synced again with `open` false
    open: bool = False
    #: true: an editor closed its buffer; the owner reads the note from the disk (`text`
    #: is not used), and answers `note` false when its table names no note there
    from_disk: bool = False
    #: the note is an agent's own memory (outside the project's folder): read as that agent
    #: writes it (`memls.notes.agent_memory`); the records' `origin`. null: a note of the
    #: project, or, for a file synced before as an agent's memory, the origin it had then
    agent_memory: AgentOrigin | None = None


class SyncNoteResult(Wire):
    project: str
    uri: str
    added: list[str]
    removed: list[str]
    moved: list[str]
    unchanged: int
    shared: list[str] = []  # units whose text another source already holds (deduplicated)
    secrets: list[NoteSecret] = []  # secrets in the note: their units are indexed redacted
    #: false: no note by the owner's table (an editor's buffer of another file): nothing kept
    note: bool = True
    origin: str = ""  # whose convention the file is ("Codex AGENTS.md", "Claude Code rules")
    scope: list[str] = []  # the files its lines apply to (globs); empty: the whole project
    warnings: list[NoteWarning] = []  # what could not be read (front matter, a scope glob)


ScopeGlob = Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]


class NoteWarning(Wire):
    """Something of a note the owner could not read as its agent meant it (front matter that
    is not YAML, a glob that cannot be matched): the note is read all the same, its lines
    as applying to the whole project. 0-based line, as LSP."""

    uri: str
    line: int
    message: str


class NoteSecret(Wire):
    """A secret in a note's text, 0-based like an LSP range (one line)."""

    line: int
    start: int  # character of the line
    end: int
    kind: str


class ChangedNotification(Wire):
    """memory/changed (server to client): memories of a project were written."""

    project: str
    op: str
    ids: list[str]


class ProgressNotification(Wire):
    """memory/progress (server to client): long work on a project (reindex, import, ingest),
    begin (done 0) -> reports -> end (finished). One `token` per piece of work; a phase
    ("writing", "indexing") counts its own done/total. The LSP daemon shows it to the editor
    as `$/progress` (work-done progress) and does not forward it as it is."""

    project: str
    token: str
    title: Literal["reindex", "import", "ingest"]
    phase: str
    done: int
    total: int
    finished: bool = False
    message: str | None = None


class IngestParams(Wire):
    """Many memories at once (a JSON Lines file of the CLI): each item as memory/store takes
    it, all stored or none; answered once every one is in the vector index (or the wait ends)."""

    items: Annotated[list[StoreParams], msgspec.Meta(min_length=1, max_length=100_000)]
    project: Project | None = None
    redact: bool = False  # every item's secrets redacted (as an item's own redact)


class IngestResult(Wire):
    project: str
    stored: int
    duplicates: int
    ids: list[str]
    indexed: bool


class DeadLettersResult(Wire):
    project: str
    failed: list[DeadLetter]
