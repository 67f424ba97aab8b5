"""Citations (schema 8): what each memory cites in the project's code, where it stands now and
in which state. The tracker's `anchor` is opaque JSON here; every other field is a column."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from memls.store.base import Repository
from memls.store.db import Database
from memls.store.memories import among

_NAMES = (
    "memory_id, ordinal, path, start_line, end_line, symbol, kind, inferred, cited_path, "
    "fingerprint, anchor, commit_id, state, diff, cited_at, checked_at"
)
COLUMNS = _NAMES
PREFIXED = ", ".join(f"c.{name.strip()}" for name in _NAMES.split(","))


@dataclass(frozen=True)
class NewCitation:
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    inferred: bool
    fingerprint: str
    anchor: str
    commit_id: str | None
    state: str = "fresh"
    diff: str | None = None


class Citations(Repository):
    table = "citations"

    def add(self, memory_id: str, citations: Iterable[NewCitation], at: str) -> int:
        count = 0
        for ordinal, c in enumerate(citations):
            self._exec(
                f"INSERT INTO citations ({COLUMNS}, project) VALUES (:memory_id, :ordinal, :path, "
                ":start_line, :end_line, :symbol, :kind, :inferred, :path, :fingerprint, "
                ":anchor, :commit_id, :state, :diff, :at, :at, :project)",
                memory_id=memory_id,
                ordinal=ordinal,
                path=c.path,
                start_line=c.start_line,
                end_line=c.end_line,
                symbol=c.symbol,
                kind=c.kind,
                inferred=int(c.inferred),
                fingerprint=c.fingerprint,
                anchor=c.anchor,
                commit_id=c.commit_id,
                state=c.state,
                diff=c.diff,
                at=at,
            )
            count += 1
        return count

    def of(self, ids: Iterable[str]) -> dict[str, list[sqlite3.Row]]:
        """memory id -> its citations in order (memories without any are left out)."""
        rows = self._all(
            f"SELECT {PREFIXED} FROM json_each(:among) AS w JOIN citations c "
            "ON c.project = :project AND c.memory_id = w.value ORDER BY c.memory_id, c.ordinal",
            among=among(ids),
        )
        out: dict[str, list[sqlite3.Row]] = {}
        for row in rows:
            out.setdefault(row["memory_id"], []).append(row)
        return out

    def at_paths(self, paths: Iterable[str]) -> list[sqlite3.Row]:
        """The citations that stand at, or were made at, any of `paths`."""
        return self._all(
            f"SELECT {COLUMNS} FROM citations WHERE project = :project AND (path IN "
            "(SELECT value FROM json_each(:paths)) OR cited_path IN "
            "(SELECT value FROM json_each(:paths))) ORDER BY memory_id, ordinal",
            paths=among(paths),
        )

    def all(self) -> list[sqlite3.Row]:
        return self._all(
            f"SELECT {COLUMNS} FROM citations WHERE project = :project ORDER BY memory_id, ordinal"
        )

    def paths(self) -> list[str]:
        """Every path that a citation of the project stands at."""
        rows = self._all("SELECT DISTINCT path FROM citations WHERE project = :project")
        return [row["path"] for row in rows]

    def stale_ids(self) -> list[str]:
        rows = self._all(
            "SELECT DISTINCT memory_id FROM citations WHERE project = :project "
            "AND state IN ('changed', 'missing') ORDER BY memory_id"
        )
        return [row["memory_id"] for row in rows]

    def update(
        self,
        memory_id: str,
        ordinal: int,
        *,
        path: str,
        start_line: int,
        end_line: int,
        state: str,
        diff: str | None,
        at: str,
    ) -> None:
        self._exec(
            "UPDATE citations SET path = :path, start_line = :start_line, end_line = :end_line, "
            "state = :state, diff = :diff, checked_at = :at "
            "WHERE project = :project AND memory_id = :memory_id AND ordinal = :ordinal",
            memory_id=memory_id,
            ordinal=ordinal,
            path=path,
            start_line=start_line,
            end_line=end_line,
            state=state,
            diff=diff,
            at=at,
        )

    def replace_anchor(
        self,
        memory_id: str,
        ordinal: int,
        *,
        path: str,
        start_line: int,
        end_line: int,
        fingerprint: str,
        anchor: str,
        commit_id: str | None,
        at: str,
    ) -> None:
        """Re-confirm: the citation takes the current text (and place) as what it cites."""
        self._exec(
            "UPDATE citations SET path = :path, cited_path = :path, start_line = :start_line, "
            "end_line = :end_line, fingerprint = :fingerprint, anchor = :anchor, "
            "commit_id = :commit_id, state = 'fresh', diff = NULL, cited_at = :at, "
            "checked_at = :at "
            "WHERE project = :project AND memory_id = :memory_id AND ordinal = :ordinal",
            memory_id=memory_id,
            ordinal=ordinal,
            path=path,
            start_line=start_line,
            end_line=end_line,
            fingerprint=fingerprint,
            anchor=anchor,
            commit_id=commit_id,
            at=at,
        )


def cited_projects(db: Database) -> list[str]:
    """Every project with at least one citation (the owner's watcher watches their files)."""
    return [row[0] for row in db.read("SELECT DISTINCT project FROM citations ORDER BY project")]
