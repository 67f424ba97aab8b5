"""Is the vector index (Chroma) what SQLite says it should be? If not, rebuild it from SQLite.

SQLite is the record of truth; Chroma is a copy that can always be rebuilt from it. A Chroma
directory that was deleted, emptied, or corrupted is found when a long-lived owner starts
(`check_in_background`, right after the daemon takes the store) and on demand (`memls doctor
--repair`), said loudly (an ERROR in the daemon's log; `doctor` lists it until repaired), and
rebuilt: a store Chroma cannot open is moved aside (`chroma.broken-<time>`), then every
project that disagrees is re-indexed from SQLite. Nothing in SQLite is touched.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from memls import protocol
from memls.store import projects as store_projects

log = logging.getLogger("memls.index")


def disagrees(report: protocol.DoctorResult) -> bool:
    return bool(
        report.missing
        or report.extra
        or report.stale
        or any(p.startswith("chroma unreadable") for p in report.problems)
        or any("token vectors" in p for p in report.problems)
    )


def check(engine: Any, *, repair: bool = True, quick: bool = False) -> list[str]:
    """Compare every project's vectors with SQLite; rebuild those that disagree (when
    `repair`). Returns what was found, one line per problem (empty: all agree). `quick`
    (start-up): a project whose counts agree (`index_counts_agree`) is not compared vector by
    vector; a deleted, emptied or unreadable index still is, and is rebuilt."""
    index = getattr(engine, "index", None)
    if index is None:
        return []
    found: list[str] = []
    try:
        index.client  # noqa: B018 - opens the store
    except Exception as exc:  # noqa: BLE001 - a broken store is exactly what we look for
        found.append(f"the vector index {index.directory} cannot be opened: {exc}")
        log.error(
            "memls: the vector index %s cannot be opened (%s)%s",
            index.directory,
            exc,
            "; moving it aside and rebuilding it from SQLite" if repair else "",
        )
        if not repair:
            return found
        aside = index.set_aside()
        log.error("memls: the broken vector index was moved to %s", aside)
    for project in store_projects.with_memories(engine.db):
        if quick and engine.index_counts_agree(project):
            continue
        report = engine.doctor(protocol.DoctorParams(project=project))
        if not disagrees(report):
            continue
        line = (
            f"{project}: {report.memories} memories, {report.indexed} vectors "
            f"({len(report.missing)} missing, {len(report.extra)} extra, "
            f"{len(report.stale)} out of date)"
        )
        found.append(line)
        log.error(
            "memls: the vector index disagrees with SQLite for %s%s",
            line,
            "; rebuilding it from SQLite" if repair else "",
        )
        if repair:
            result = engine.reindex(protocol.ReindexParams(project=project))
            log.error(
                "memls: re-indexed %d memories of %r from SQLite%s",
                result.queued,
                project,
                "" if result.indexed else " (still indexing)",
            )
    return found


def check_in_background(engine: Any) -> threading.Thread | None:
    """`check` off the caller's thread (a daemon starting up must answer at once)."""
    if getattr(engine, "index", None) is None:
        return None

    def run() -> None:
        try:
            check(engine, repair=True, quick=True)
        except Exception:
            log.exception("memls: the vector index check failed")

    thread = threading.Thread(target=run, name="memls-index-check", daemon=True)
    thread.start()
    return thread
