"""The shapes the MCP front adds, each built on a `memls.protocol` Struct (so it carries
everything the `memory/*` request does) rather than beside it:

- `RecallResult`: the query's hits (each memory carries the engine's `contradicts` /
  `contradictedBy` references), each with `contradictions`: the other statements of its open
  contradictions, verbatim, so the agent reads both sides; and the notice that this is
  recalled data. The `recall` tool's output schema.
- `RememberParams` / `RememberResult`: `memory/store` plus `check` (wait for the statement's
  contradiction check) and what it found (`contradicts`).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from memls import protocol

Newer = Literal["this", "other"]


class Contradiction(protocol.Wire, kw_only=True):
    """An open contradiction of a memory: the other statement, verbatim, with its provenance."""

    id: str
    newer: Newer  # which side was recorded later
    confidence: float
    content: str
    type: protocol.MemoryType
    trust: protocol.Trust
    source_uri: str | None = None
    source_range: str | None = None
    stands: Newer | None = None  # which side stands now (the engine's `current`)


class Recalled(protocol.QueryHit, kw_only=True):
    contradictions: list[Contradiction] = []


class RecallResult(protocol.Wire, kw_only=True):
    kind: Literal["recalled_project_memory"] = "recalled_project_memory"
    notice: str
    project: str
    results: list[Recalled]
    degraded: list[str] = []
    took_ms: float | None = None


class RememberParams(protocol.StoreParams, kw_only=True):
    """`memory/store`'s params, and whether to wait for the statement's contradiction check."""

    check: bool = True


class RememberResult(protocol.StoreResult, kw_only=True):
    checked: bool = False  # the contradiction check finished within the wait
    contradicts: list[Contradiction] = []


def store_params(params: RememberParams) -> protocol.StoreParams:
    fields = msgspec.structs.asdict(params)
    fields.pop("check")
    return protocol.StoreParams(**fields)
