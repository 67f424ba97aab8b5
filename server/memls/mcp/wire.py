"""The one result shape the MCP front adds: a recalled memory with its open contradictions.

Built on `protocol.QueryHit` (so it carries everything `memory/query` returns) rather than
beside it; the JSON Schema of `RecallResult` is the `recall` tool's output schema.
"""

from __future__ import annotations

from typing import Literal

from memls import protocol


class Contradiction(protocol.Wire, kw_only=True):
    """An open contradiction of a recalled memory: the other statement, verbatim."""

    id: str
    newer: Literal["this", "other"]   # which side was recorded later
    confidence: float
    content: str
    type: protocol.MemoryType
    trust: protocol.Trust
    source_uri: str | None = None
    source_range: str | None = None


class Recalled(protocol.QueryHit, kw_only=True):
    contradicted_by: list[Contradiction] = []


class RecallResult(protocol.Wire, kw_only=True):
    kind: Literal["recalled_project_memory"] = "recalled_project_memory"
    notice: str
    project: str
    results: list[Recalled]
    degraded: list[str] = []
    took_ms: float | None = None
