"""What a tool does on the engine, when it is more than one engine method. Runs on a worker
thread with the engine handle (LocalEngine or RemoteEngine: only their public methods)."""

from __future__ import annotations

from typing import Any

import msgspec

from memls import protocol
from memls.mcp import render
from memls.mcp.wire import (
    Contradiction,
    RecallResult,
    Recalled,
    RememberParams,
    RememberResult,
    store_params,
)
from memls.scope import VISIBLE_TRUST

CHECK_SECONDS = 10.0


def _against(conflicts: list[protocol.Conflict], ids: set[str]) -> dict[str, list[Contradiction]]:
    """For each id, the other side of each of its contradictions."""
    found: dict[str, list[Contradiction]] = {}
    for c in conflicts:
        for this, other, newer in ((c.newer, c.older, "this"), (c.older, c.newer, "other")):
            if this.id in ids:
                found.setdefault(this.id, []).append(Contradiction(
                    id=other.id, newer=newer, confidence=c.confidence, content=other.content,
                    type=other.type, trust=other.trust, source_uri=other.source_uri,
                    source_range=other.source_range))
    return found


def recall(engine: Any, params: protocol.QueryParams) -> RecallResult:
    """The query, then the open contradictions of its hits."""
    result = engine.query(params)
    ids = {h.id for h in result.results}
    against: dict[str, list[Contradiction]] = {}
    if ids:
        found = engine.conflicts(protocol.ConflictsParams(project=result.project, status="open",
                                                          limit=1000))
        against = _against(found.conflicts, ids)
    hits = [Recalled(**msgspec.structs.asdict(h), contradicted_by=against.get(h.id, []))
            for h in result.results]
    return RecallResult(notice=render.DATA_NOTICE, project=result.project, results=hits,
                        degraded=result.degraded, took_ms=result.took_ms)


def remember(engine: Any, params: RememberParams) -> RememberResult:
    """Store; with `check`, wait for the statement's contradiction check (bounded) and list
    the open contradictions it took part in."""
    stored = engine.store(store_params(params))
    checked, contradicts = False, []
    if params.check:
        checked = bool(engine.flush(CHECK_SECONDS)) if stored.created else True
        found = engine.conflicts(protocol.ConflictsParams(project=stored.project, id=stored.id,
                                                          status="open"))
        contradicts = _against(found.conflicts, {stored.id}).get(stored.id, [])
    return RememberResult(**msgspec.structs.asdict(stored), checked=checked,
                          contradicts=contradicts)


def conventions(engine: Any, project: str) -> list[protocol.Memory]:
    """The project's active decisions and conventions that retrieval would show."""
    found: list[protocol.Memory] = []
    for kind in ("decision", "convention"):
        listed = engine.list(protocol.ListParams(project=project, status="active", type=kind,
                                                 limit=1000))
        found += [m for m in listed.memories if m.trust in VISIBLE_TRUST]
    return found
