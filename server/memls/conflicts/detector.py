"""Write-time detection: the 10 most similar active, currently valid memories of the same
project (a scoped nearest-neighbour search in the project's own collection, or BM25 in the
project when vectors are off), each scored against the new memory by the pure scorer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memls.conflicts.scorer import Verdict, gate, score_pair
from memls.scope import Visibility
from memls.store import records

if TYPE_CHECKING:
    import sqlite3

    from memls.engine import Engine

CANDIDATES = 10


@dataclass(frozen=True)
class Finding:
    newer: sqlite3.Row
    older: sqlite3.Row
    verdict: Verdict


def candidates(engine: Engine, rows: list, vectors) -> list[list[tuple[str, float | None]]]:
    """For each new row: (id, cosine or None) of the nearest active, valid-now memories of its
    project, itself excluded. One batched Chroma query with vectors; BM25 without."""
    from memls.retrieval.pipeline import admitted, lexical

    if not rows:
        return []
    project = rows[0]["project"]
    seen = Visibility(projects=(project,), now=engine.clock())
    if vectors is not None and engine.index is not None:
        found = engine.index.nearest(project, vectors, CANDIDATES + 1, seen.chroma_where(),
                                     lambda ids: admitted(engine, seen, ids))
        return [[(i, s) for i, s in hits if i != row["id"]][:CANDIDATES]
                for row, hits in zip(rows, found)]
    out = []
    for row in rows:
        hits = lexical(engine, seen, row["content"], CANDIDATES + 1)
        ranked = sorted(hits, key=hits.get, reverse=True)
        out.append([(i, None) for i in ranked if i != row["id"]][:CANDIDATES])
    return out


def detect_all(engine: Engine, rows: list, vectors) -> list[list[Finding]]:
    """Findings for each of a batch of new rows of one project."""
    return [detect(engine, row, pairs)
            for row, pairs in zip(rows, candidates(engine, rows, vectors))]


def detect(engine: Engine, row, pairs: list[tuple[str, float | None]]) -> list[Finding]:
    if not pairs:
        return []
    ids = [i for i, _ in pairs]
    where, args = Visibility(projects=(row["project"],), now=engine.clock()).where("m")
    among, among_args = records.among(ids)
    with engine.db.transaction(write=False) as conn:
        rows = {  # the hard filters again: Chroma's metadata may lag the record
            r["id"]: r for r in conn.execute(
                f"SELECT {records.COLUMNS} FROM {among} WHERE {where}", [*among_args, *args],
            )
        }
    findings = []
    for memory_id, cosine in pairs:
        other = rows.get(memory_id)
        if other is None or (other["recorded_at"], other["seq"]) > (row["recorded_at"], row["seq"]):
            continue  # only what was there before: the later one's own check covers the pair
        if cosine is not None and gate(cosine, "cosine") == 0.0:
            continue  # too far apart to contradict: the scorer would give 0 (saves its analysis)
        verdict = score_pair(row["content"], other["content"], similarity=cosine,
                             similarity_kind="cosine")
        if verdict.contradiction:
            findings.append(Finding(newer=row, older=other, verdict=verdict))
    return findings
