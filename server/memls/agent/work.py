"""What a tool does on the engine, when it is more than one engine method. Runs on a worker
thread with the engine handle (LocalEngine or RemoteEngine: only their public methods)."""

from __future__ import annotations

from typing import Any

from memls import protocol, timeutil
from memls.agent import render
from memls.agent.wire import (
    Recalled,
    RecallResult,
    RememberParams,
    RememberResult,
    Side,
    Stored,
    cited,
    store_params,
)
from memls.errors import NotFound
from memls.protocol import wording
from memls.scope import VISIBLE_TRUST

CHECK_SECONDS = 10.0


def origin_name(m: protocol.Memory) -> str | None:
    """Whose memory it is when not the project's own: an agent's, or another tool's import."""
    if m.origin:
        return protocol.ORIGIN_NAMES.get(m.origin)
    if m.imported_from:
        return f"imported from {protocol.IMPORT_NAMES[m.imported_from]}"
    return None


def side(this: str, other: protocol.Memory, ref: protocol.ConflictRef | None, project: str) -> Side:
    """The other statement of one open contradiction of `this`."""
    newer = ref.newer if ref is not None else other.id
    current = ref.current if ref is not None else newer
    return Side(
        id=other.id,
        text=other.content,
        source=wording.place(other, project) if other.source_uri else None,
        origin=origin_name(other),
        trust=other.trust,
        newer=newer == other.id,
        stands=current == other.id,
        confidence=round(ref.confidence, 2) if ref is not None else 0.0,
    )


def lean(m: protocol.Memory, project: str, now: str) -> dict[str, Any]:
    """The fields of a memory a model needs (see `wire`), as keyword arguments."""
    return {
        "id": m.id,
        "type": m.type,
        "trust": m.trust,
        "age": wording.age(m.recorded_at, now),
        "source": wording.place(m, project) if m.source_uri else None,
        "origin": origin_name(m),
        "text": m.content,
        "stale": bool(m.stale),
        "valid_until": m.valid_until,
        "cites": cited(m),
        "supersedes": list(m.supersedes),
        "superseded_by": list(m.superseded_by),
    }


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
    now = timeutil.now()
    hits = [
        Recalled(
            **lean(h, result.project, now),
            score=round(h.score, 3),
            contested=[
                side(h.id, others[r.id], r, result.project) for r in refs[h.id] if r.id in others
            ],
            explain=h.explain if params.explain else None,
        )
        for h in result.results
    ]
    return RecallResult(
        notice=render.DATA_NOTICE,
        project=result.project,
        results=hits,
        degraded=result.degraded,
    )


def merged(engine: Any, r: protocol.StoreResult) -> protocol.StoreResult:
    """`r` again as the memory it was merged into, when the check after indexing found it a
    restatement of an earlier one (audited `merge`)."""
    entries = engine.audit(protocol.AuditParams(project=r.project, id=r.id, limit=1)).entries
    if not entries or entries[0].op != "merge" or not entries[0].detail:
        return r
    into = entries[0].detail["into"]
    return protocol.StoreResult(
        id=into,
        project=r.project,
        created=False,
        duplicate="near",
        memory=engine.get(protocol.GetParams(id=into, project=r.project)),
        tombstone_cleared=r.tombstone_cleared,
    )


def remember(engine: Any, params: RememberParams) -> RememberResult:
    """Store; with `check`, wait for the statement's contradiction check (bounded) and list
    the open contradictions it took part in."""
    stored = engine.store(store_params(params))
    checked, contradicts = False, []
    if params.check:
        checked = bool(engine.flush(CHECK_SECONDS)) if stored.created else True
        if checked and stored.created:
            stored = merged(engine, stored)
        found = engine.conflicts(
            protocol.ConflictsParams(project=stored.project, id=stored.id, status="open")
        )
        for c in found.conflicts:
            if stored.id in (c.newer.id, c.older.id):
                other = c.older if c.newer.id == stored.id else c.newer
                ref = protocol.ConflictRef(
                    id=other.id, confidence=c.confidence, newer=c.newer.id, current=c.newer.id
                )
                contradicts.append(side(stored.id, other, ref, stored.project))
    m = stored.memory
    return RememberResult(
        project=stored.project,
        id=stored.id,
        created=stored.created,
        duplicate=stored.duplicate,
        memory=Stored(id=m.id, type=m.type, trust=m.trust, text=m.content, cites=cited(m)),
        checked=checked,
        contradicts=contradicts,
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
