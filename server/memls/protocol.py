"""Wire types: every memory/* params and result, defined once as msgspec Structs.

Python attributes are snake_case; on the wire (JSON, CLI --json, LSP) fields are camelCase.
Fronts build params with `parse(Type, data)`, which validates and names the bad field.
"""

from __future__ import annotations

import functools
import re
import typing
from typing import Annotated, Any, Literal

import msgspec

from memls import limits
from memls.conflicts.scorer import Signal, Verdict
from memls.errors import InvalidInput

MemoryType = Literal[
    "decision", "convention", "preference", "fact", "lesson", "note", "constraint"
]
Status = Literal["active", "superseded"]
Trust = Literal["candidate", "verified", "flagged", "rejected"]
ForgetReason = Literal[
    "user_deleted", "superseded", "ttl_expired", "decay", "dedup", "feedback_flagged",
    "source_removed",
]
FeedbackSignal = Literal["helpful", "unhelpful", "outdated"]
ReviewAction = Literal["list", "approve", "reject", "restore"]

MEMORY_TYPES: tuple[str, ...] = typing.get_args(MemoryType)
STATUSES: tuple[str, ...] = typing.get_args(Status)
TRUST_STATES: tuple[str, ...] = typing.get_args(Trust)
FORGET_REASONS: tuple[str, ...] = typing.get_args(ForgetReason)
FEEDBACK_SIGNALS: tuple[str, ...] = typing.get_args(FeedbackSignal)
REVIEW_ACTIONS: tuple[str, ...] = typing.get_args(ReviewAction)

Limit = Annotated[int, msgspec.Meta(ge=1, le=1000)]
Project = Annotated[str, msgspec.Meta(pattern=r"\S", max_length=512,
                                      description="project key: never empty")]
MemoryId = Annotated[str, msgspec.Meta(pattern=r"\S", max_length=200)]
Content = Annotated[str, msgspec.Meta(
    max_length=4 * limits.MiB,  # the configurable bound (bytes) is applied by `parse`
    extra_json_schema={"x-memls-limit": "max_content_bytes"},
    description="free text: at most max_content_bytes of UTF-8 (default 32 KiB)")]
"""A memory's text, a query, a note: bounded by the `[limits] max_content_bytes` setting."""
Timestamp = Annotated[str, msgspec.Meta(max_length=64, description="ISO 8601")]
Uri = Annotated[str, msgspec.Meta(max_length=4096)]
SourceRange = Annotated[str, msgspec.Meta(max_length=64)]


class Wire(msgspec.Struct, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """Base of every wire type."""


# ---------------------------------------------------------------- records


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
    supersedes: list[str] = []
    superseded_by: list[str] = []


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


# ---------------------------------------------------------------- requests


class StoreParams(Wire):
    text: Content
    project: Project | None = None
    type: MemoryType = "note"
    valid_from: Timestamp | None = None
    valid_until: Timestamp | None = None
    source_uri: Uri | None = None
    source_range: SourceRange | None = None
    derived_from: MemoryId | None = None
    force: bool = False


class StoreResult(Wire):
    id: str
    project: str
    created: bool
    duplicate: bool
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


class QueryResult(Wire):
    project: str
    results: list[QueryHit]
    degraded: list[str] = []
    took_ms: float | None = None


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


class Conflict(Wire):
    """Two memories of one project that contradict each other (both edges carry this)."""

    project: str
    status: Literal["open", "dismissed", "resolved"]
    confidence: float
    similarity: float
    similarity_source: str
    signals: list[Signal]
    newer: Memory
    older: Memory
    detected_at: str
    proposal: Literal["supersede"] | None = None
    closed_at: str | None = None


class ConflictsParams(Wire):
    project: Project | None = None
    id: MemoryId | None = None
    status: Literal["open", "dismissed", "resolved"] | None = "open"
    limit: Limit = 100


class ConflictsResult(Wire):
    project: str
    conflicts: list[Conflict]


class ResolveParams(Wire):
    """Act on a detected pair: dismiss ("not a contradiction"), resolve, or supersede the
    older statement by the newer one."""

    a: MemoryId
    b: MemoryId
    action: Literal["dismiss", "resolve", "supersede"]
    project: Project | None = None
    note: Content | None = None


class ResolveResult(Wire):
    project: str
    conflict: Conflict


class CheckPairParams(Wire):
    """Score one pair of texts (no store involved)."""

    new: Content
    existing: Content


class ConflictsNotification(Wire):
    """memory/conflicts (server to client): contradictions found for a stored memory."""

    project: str
    id: str
    conflicts: list[Conflict]


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
    default_type: MemoryType = "note"


class SyncNoteResult(Wire):
    project: str
    uri: str
    added: list[str]
    removed: list[str]
    moved: list[str]
    unchanged: int
    shared: list[str] = []   # units whose text another source already holds (deduplicated)


class ChangedNotification(Wire):
    """memory/changed (server to client): memories of a project were written."""

    project: str
    op: str
    ids: list[str]


class DeadLettersResult(Wire):
    project: str
    failed: list[DeadLetter]


# ---------------------------------------------------------------- helpers

_PATH = re.compile(r" - at `\$\.?([A-Za-z_]*)[^`]*`$")

T = typing.TypeVar("T")


def parse(kind: type[T], data: Any) -> T:
    """Validate plain data (camelCase keys) into a params Struct; InvalidInput names the field."""
    if data is None:
        data = {}
    try:
        parsed = msgspec.convert(data, kind)
    except UnicodeError:  # a lone surrogate where msgspec compares text: name the field
        limits.check_strings(data)
        raise InvalidInput("must be valid Unicode text") from None
    except msgspec.ValidationError as exc:
        message = str(exc)
        match = _PATH.search(message)
        field = match.group(1) if match and match.group(1) else None
        text = _PATH.sub("", message)
        if field is None:
            missing = re.search(r"missing required field `(\w+)`", message)
            unknown = re.search(r"unknown field `(\w+)`", message)
            field = (missing or unknown).group(1) if (missing or unknown) else None
        if "matching regex '\\\\S'" in text:
            text = "must not be empty or white space"
        elif "Invalid enum value" in text and field is not None:
            allowed = _allowed(kind, field)
            if allowed:
                text = f"{text}; expected one of: {', '.join(allowed)}"
        raise InvalidInput(text, field=field) from None
    limits.check_strings(data)  # NUL, lone surrogates (after the bounds: lists are short now)
    for name, wire_name in _content_fields(kind):
        value = getattr(parsed, name)
        if isinstance(value, str):
            limits.check_content(value, wire_name)
    return parsed


@functools.cache
def _content_fields(kind: type) -> tuple[tuple[str, str], ...]:
    """(attribute, wire name) of the `Content` fields of a params Struct."""
    if not (isinstance(kind, type) and issubclass(kind, msgspec.Struct)):
        return ()
    hints = typing.get_type_hints(kind, include_extras=True)
    found = []
    for name, wire_name in zip(kind.__struct_fields__, kind.__struct_encode_fields__):
        hint = hints.get(name)
        if hint is Content or Content in typing.get_args(hint):
            found.append((name, wire_name))
    return tuple(found)


def _allowed(kind: type, field: str) -> list[str]:
    """The values a Literal field of a params Struct accepts (by its wire name)."""
    import msgspec.inspect as mi

    def literals(t) -> list[str]:
        if isinstance(t, mi.LiteralType):
            return [str(v) for v in t.values]
        for inner in getattr(t, "types", ()) or ((t.item_type,) if hasattr(t, "item_type")
                                                 else ()):
            found = literals(inner)
            if found:
                return found
        return []

    info = mi.type_info(kind)
    for f in getattr(info, "fields", ()):
        if f.encode_name == field:
            return literals(f.type)
    return []


def to_wire(value: Any) -> Any:
    """Plain JSON-ready data (camelCase), for every front's edge."""
    return msgspec.to_builtins(value)


def encode_json(value: Any) -> bytes:
    return msgspec.json.encode(value)


# ---------------------------------------------------------------- the method table

class Method(msgspec.Struct, frozen=True):
    """One memory/* request: the engine method behind it and its wire types."""

    engine: str
    params: type
    result: type


METHODS: dict[str, Method] = {
    "memory/store": Method("store", StoreParams, StoreResult),
    "memory/query": Method("query", QueryParams, QueryResult),
    "memory/get": Method("get", GetParams, Memory),
    "memory/list": Method("list", ListParams, ListResult),
    "memory/feedback": Method("feedback", FeedbackParams, FeedbackResult),
    "memory/forget": Method("forget", ForgetParams, ForgetResult),
    "memory/supersede": Method("supersede", SupersedeParams, SupersedeResult),
    "memory/review": Method("review", ReviewParams, ReviewResult),
    "memory/forgotten": Method("forgotten", ForgottenParams, ForgottenResult),
    "memory/conflicts": Method("conflicts", ConflictsParams, ConflictsResult),
    "memory/resolve": Method("resolve", ResolveParams, ResolveResult),
    "memory/checkPair": Method("check_pair", CheckPairParams, Verdict),
    "memory/stats": Method("stats", StatsParams, StatsResult),
    "memory/audit": Method("audit", AuditParams, AuditResult),
    "memory/maintain": Method("maintain", MaintainParams, MaintainResult),
    "memory/deadLetters": Method("dead_letters", MaintainParams, DeadLettersResult),
    "memory/reindex": Method("reindex", ReindexParams, ReindexResult),
    "memory/doctor": Method("doctor", DoctorParams, DoctorResult),
    "memory/syncNote": Method("sync_note", SyncNoteParams, SyncNoteResult),
    "memory/health": Method("health", HealthParams, HealthResult),
}
"""Every engine operation reachable over the wire (LSP requests and the owner's socket)."""

NOTIFICATIONS: dict[str, type] = {
    "memory/conflicts": ConflictsNotification,
    "memory/changed": ChangedNotification,
}
"""Server-to-client notifications."""
