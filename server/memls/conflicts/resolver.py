"""Acting on verdicts (the scorer only judges): contradiction edges, dismissals, supersession.

A contradiction is stored as two `contradicts` edges (newer -> older and older -> newer) with
the same confidence, status and detail. Dismissed pairs are remembered by the canonical hashes
of both texts, so the same two statements are never raised again, whatever their ids.
"""

from __future__ import annotations

import json
import sqlite3

from memls.conflicts.scorer import Verdict

STATUSES = ("open", "dismissed", "resolved")


def dismissal_key(hash_a: str, hash_b: str) -> tuple[str, str]:
    return (hash_a, hash_b) if hash_a < hash_b else (hash_b, hash_a)


def is_dismissed(conn: sqlite3.Connection, project: str, hash_a: str, hash_b: str) -> bool:
    a, b = dismissal_key(hash_a, hash_b)
    return conn.execute(
        "SELECT 1 FROM conflict_dismissals WHERE project = ? AND hash_a = ? AND hash_b = ?",
        (project, a, b),
    ).fetchone() is not None


def existing(conn: sqlite3.Connection, a: str, b: str) -> sqlite3.Row | None:
    return conn.execute(
        "SELECT src, dst, status, detail FROM edges WHERE kind = 'contradicts' "
        "AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?)) LIMIT 1",
        (a, b, b, a),
    ).fetchone()


def proposes_supersede(verdict: Verdict, newer: sqlite3.Row, older: sqlite3.Row) -> bool:
    """The newer statement says it replaces something ("now", "switched to", "no longer")."""
    return verdict.update_marker and newer["valid_from"] >= older["valid_from"]


def record(conn: sqlite3.Connection, project: str, newer: sqlite3.Row, older: sqlite3.Row,
           verdict: Verdict, at: str) -> bool:
    """Write the pair of edges unless the pair is known or dismissed; True when written."""
    if existing(conn, newer["id"], older["id"]) is not None:
        return False
    if is_dismissed(conn, project, newer["canonical_hash"], older["canonical_hash"]):
        return False
    detail = json.dumps({
        "newer": newer["id"],
        "older": older["id"],
        "signals": [
            {"kind": s.kind, "weight": s.weight, "triggers": list(s.triggers)}
            for s in verdict.signals
        ],
        "similarity": verdict.similarity,
        "similaritySource": verdict.similarity_source,
        "proposal": "supersede" if proposes_supersede(verdict, newer, older) else None,
    })
    conn.executemany(
        "INSERT INTO edges (src, dst, kind, project, created_at, confidence, status, detail) "
        "VALUES (?, ?, 'contradicts', ?, ?, ?, 'open', ?)",
        [(newer["id"], older["id"], project, at, verdict.confidence, detail),
         (older["id"], newer["id"], project, at, verdict.confidence, detail)],
    )
    return True


def close(conn: sqlite3.Connection, a: str, b: str, status: str, at: str) -> int:
    """Set both edges of a pair to dismissed or resolved."""
    cur = conn.execute(
        "UPDATE edges SET status = ?, closed_at = ? WHERE kind = 'contradicts' "
        "AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?))",
        (status, at, a, b, b, a),
    )
    return cur.rowcount


def remember_dismissal(conn: sqlite3.Connection, project: str, hash_a: str, hash_b: str,
                       at: str, note: str | None) -> None:
    a, b = dismissal_key(hash_a, hash_b)
    conn.execute(
        "INSERT OR IGNORE INTO conflict_dismissals (project, hash_a, hash_b, at, note) "
        "VALUES (?, ?, ?, ?, ?)",
        (project, a, b, at, note),
    )
