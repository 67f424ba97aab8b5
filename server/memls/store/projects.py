"""Which projects a store holds."""

from __future__ import annotations


def with_memories(db) -> list[str]:
    """Every project key that has at least one memory, sorted."""
    return [r[0] for r in db.read("SELECT DISTINCT project FROM memories ORDER BY project")]
