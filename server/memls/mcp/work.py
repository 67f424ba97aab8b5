"""What a tool does on the engine, when it is more than one engine method. Runs on a worker
thread with the engine handle (LocalEngine or RemoteEngine: only their public methods)."""

from __future__ import annotations

from typing import Any

import msgspec

from memls import protocol
from memls.errors import NotFound
from memls.mcp import render
from memls.mcp.wire import (
    Contradiction,
    Newer,
    Recalled,
    RecallResult,
    RememberParams,
    RememberResult,
    store_params,
)
from memls.scope import VISIBLE_TRUST

CHECK_SECONDS = 10.0


def _side(this: str, newer: str) -> Newer:
    return "this" if newer == this else "other"


def _contradiction(
    this: str, other: protocol.Memory, confidence: float, newer: str, current: str | None
) -> Contradiction:
    return Contradiction(
        id=other.id,
        newer=_side(this, newer),
        confidence=confidence,
        content=other.content,
        type=other.type,
        trust=other.trust,
        source_uri=other.source_uri,
        source_range=other.source_range,
        stands=None if current is None else _side(this, current),
    )


def _against(conflicts: list[protocol.Conflict], ids: set[str]) -> dict[str, list[Contradiction]]:
    """For each id, the other side of each of its contradictions."""
    found: dict[str, list[Contradiction]] = {}
    for c in conflicts:
        for this, other in ((c.newer, c.older), (c.older, c.newer)):
            if this.id in ids:
                found.setdefault(this.id, []).append(
                    _contradiction(this.id, other, c.confidence, c.newer.id, None)
                )
    return found


def recall(engine: Any, params: protocol.QueryParams) -> RecallResult:
    """The query; then, for the hits the engine marks as contested (`contradicts`,
    `contradictedBy`), the other statements themselves, so the agent reads both sides."""
    result = engine.query(params)
    refs = {h.id: [*h.contradicts, *h.contradicted_by] for h in result.results}
    others: dict[str, protocol.Memory] = {}
    for ref in {r.id for found in refs.values() for r in found}:
        try:
            others[ref] = engine.get(protocol.GetParams(id=ref, project=result.project))
        except NotFound:  # forgotten since the query: nothing to show
            continue
    hits = [
        Recalled(
            **msgspec.structs.asdict(h),
            contradictions=[
                _contradiction(h.id, others[r.id], r.confidence, r.newer, r.current)
                for r in refs[h.id]
                if r.id in others
            ],
        )
        for h in result.results
    ]
    return RecallResult(
        notice=render.DATA_NOTICE,
        project=result.project,
        results=hits,
        degraded=result.degraded,
        took_ms=result.took_ms,
    )


def remember(engine: Any, params: RememberParams) -> RememberResult:
    """Store; with `check`, wait for the statement's contradiction check (bounded) and list
    the open contradictions it took part in."""
    stored = engine.store(store_params(params))
    checked, contradicts = False, []
    if params.check:
        checked = bool(engine.flush(CHECK_SECONDS)) if stored.created else True
        found = engine.conflicts(
            protocol.ConflictsParams(project=stored.project, id=stored.id, status="open")
        )
        contradicts = _against(found.conflicts, {stored.id}).get(stored.id, [])
    return RememberResult(
        **msgspec.structs.asdict(stored), checked=checked, contradicts=contradicts
    )


def conventions(engine: Any, project: str) -> list[protocol.Memory]:
    """The project's active decisions and conventions that retrieval would show."""
    found: list[protocol.Memory] = []
    for kind in ("decision", "convention"):
        listed = engine.list(
            protocol.ListParams(project=project, status="active", type=kind, limit=1000)
        )
        found += [m for m in listed.memories if m.trust in VISIBLE_TRUST]
    return found
