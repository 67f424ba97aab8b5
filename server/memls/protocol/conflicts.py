"""Contradictions on the wire: the scorer's verdict and signals, detected pairs, acting on them."""

from __future__ import annotations

from typing import Literal

import msgspec

from memls.protocol.base import Content, Limit, MemoryId, Project, Wire
from memls.protocol.records import Memory

SignalKind = Literal[
    "negation", "antonym", "value_change", "choice_change", "temporal_override", "meaning"
]
SimilarityKind = Literal["cosine", "probability"]
SimilaritySource = Literal["lexical", "cosine", "probability"]
ConflictStatus = Literal["open", "dismissed", "resolved"]


class Signal(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One reason the scorer saw a contradiction, with the words that triggered it."""

    kind: SignalKind
    weight: float
    triggers: list[str]


class Verdict(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The scorer's judgement of one pair (memory/checkPair returns it as it is)."""

    contradiction: bool
    confidence: float
    signals: list[Signal]
    similarity: float
    similarity_source: SimilaritySource
    update_marker: bool


class ConflictWords(Wire):
    """How a person reads the pair (`protocol.wording`): its kind in words ("a later switch",
    "opposite instructions", "different values", "different choices"), each side quoted (one
    line, at most 120 characters, cut at a word) and placed (`path:line`, the path relative
    to the project's folder; "a stored memory" for one that comes from no file)."""

    kind: str
    newer_quote: str
    newer_place: str
    older_quote: str
    older_place: str


class Conflict(Wire):
    """Two memories of one project that contradict each other (both edges carry this)."""

    project: str
    status: ConflictStatus
    confidence: float
    similarity: float
    similarity_source: str
    signals: list[Signal]
    newer: Memory
    older: Memory
    detected_at: str
    proposal: Literal["supersede"] | None = None
    closed_at: str | None = None
    words: ConflictWords | None = None


class ConflictsParams(Wire):
    project: Project | None = None
    id: MemoryId | None = None
    status: ConflictStatus | None = "open"
    limit: Limit = 100


class NoteLink(Wire):
    """A note that supersedes or amends another, as the notes state it (an ADR's status line
    or link: "Superseded by [ADR-7](0007-x.md)", "Supersedes 0003", "Amended by 12"),
    resolved by link target or record number, never by similarity. Lines are 0-based."""

    newer_uri: str
    older_uri: str
    relation: Literal["supersedes", "amends"]
    label: str
    stated_in: str
    line: int


class ConflictsResult(Wire):
    project: str
    conflicts: list[Conflict]
    #: the project's supersession/amendment links between notes (every one, whatever `id`)
    links: list[NoteLink] = []


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
