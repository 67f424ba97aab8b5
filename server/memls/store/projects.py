"""Which projects a store holds, and which of them the owner watches."""

from __future__ import annotations


def with_memories(db) -> list[str]:
    """Every project key that has at least one memory, sorted."""
    return [r[0] for r in db.read("SELECT DISTINCT project FROM memories ORDER BY project")]


def watched(db) -> list[tuple[str, str, str]]:
    """(project, via, since) of every watched project, oldest first."""
    rows = db.read("SELECT project, via, since FROM watched_projects ORDER BY since, project")
    return [(r[0], r[1], r[2]) for r in rows]


def watch(db, project: str, via: str, since: str) -> bool:
    """Add a project to the watched set; False when it was there already."""
    with db.transaction() as conn:
        cur = conn.execute(
            "INSERT OR IGNORE INTO watched_projects (project, via, since) VALUES (?, ?, ?)",
            (project, via, since),
        )
        return cur.rowcount > 0


def unwatch(db, project: str) -> bool:
    """Take a project out of the watched set; False when it was not in it."""
    with db.transaction() as conn:
        cur = conn.execute("DELETE FROM watched_projects WHERE project = ?", (project,))
        return cur.rowcount > 0
