"""What each agent session was given by the briefing (schema 7), per project."""

from __future__ import annotations

from collections.abc import Iterable

from memls.store.base import Repository


class BriefingSessions(Repository):
    table = "briefing_given"

    def given(self, session: str) -> set[str]:
        """The ids of the memories `session` was given already."""
        rows = self._all(
            "SELECT memory_id FROM briefing_given WHERE project = :project AND session = :session",
            session=session,
        )
        return {row[0] for row in rows}

    def add(self, session: str, ids: Iterable[str], at: str) -> None:
        for memory_id in ids:
            self._exec(
                "INSERT INTO briefing_given (project, session, memory_id, at) "
                "VALUES (:project, :session, :id, :at) ON CONFLICT DO NOTHING",
                session=session,
                id=memory_id,
                at=at,
            )

    def reset(self, session: str) -> None:
        self._exec(
            "DELETE FROM briefing_given WHERE project = :project AND session = :session",
            session=session,
        )

    def prune(self, before: str) -> None:
        """Drop what sessions were given before `before` (they are long over)."""
        self._exec(
            "DELETE FROM briefing_given WHERE project = :project AND at < :before", before=before
        )
