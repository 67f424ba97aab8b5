"""Acting on verdicts (the scorer only judges): contradiction edges, dismissals, supersession.

A contradiction is stored as two `contradicts` edges (newer -> older and older -> newer) with
the same confidence, status and detail. Dismissed pairs are remembered by the canonical hashes
of both texts, so the same two statements are never raised again, whatever their ids.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from memls.protocol import Verdict
from memls.store.edges import Conflicts


def proposes_supersede(verdict: Verdict, newer: sqlite3.Row, older: sqlite3.Row) -> bool:
    """The newer statement says it replaces something ("now", "switched to", "no longer").
    Never for an older statement from a note: the note is the source of truth, and which note
    supersedes which is stated by the notes themselves (links resolved by number or link in
    `engine.notes`), not guessed by similarity."""
    return (
        verdict.update_marker
        and newer["valid_from"] >= older["valid_from"]
        and older["source_uri"] is None
    )


def detail(verdict: Verdict, newer: sqlite3.Row, older: sqlite3.Row) -> dict[str, Any]:
    """What an edge keeps of the verdict: which side is newer, the signals, the similarity."""
    return {
        "newer": newer["id"],
        "older": older["id"],
        "signals": [
            {"kind": s.kind, "weight": s.weight, "triggers": list(s.triggers)}
            for s in verdict.signals
        ],
        "similarity": verdict.similarity,
        "similaritySource": verdict.similarity_source,
        "proposal": "supersede" if proposes_supersede(verdict, newer, older) else None,
    }


def record(
    conflicts: Conflicts, newer: sqlite3.Row, older: sqlite3.Row, verdict: Verdict, at: str
) -> bool:
    """Write the pair of edges unless the pair is known or dismissed; True when written."""
    if conflicts.exists(newer["id"], older["id"]):
        return False
    if conflicts.is_dismissed(newer["canonical_hash"], older["canonical_hash"]):
        return False
    conflicts.add(newer["id"], older["id"], verdict.confidence, detail(verdict, newer, older), at)
    return True
