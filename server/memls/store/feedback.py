"""Feedback signals (with the query that surfaced the memory) and trust transitions (every
state change of the review queue, and its cause)."""

from __future__ import annotations

from memls.store.base import Repository


class Feedback(Repository):
    table = "feedback"

    def add(
        self,
        memory_id: str,
        signal: str,
        delta: int,
        score_after: int,
        query: str | None,
        at: str,
        front: str,
    ) -> None:
        self._exec(
            "INSERT INTO feedback (memory_id, project, signal, delta, score_after, query, at, "
            "front) VALUES (:id, :project, :signal, :delta, :score, :query, :at, :front)",
            id=memory_id,
            signal=signal,
            delta=delta,
            score=score_after,
            query=query,
            at=at,
            front=front,
        )


class Transitions(Repository):
    table = "trust_transitions"

    def add(
        self,
        memory_id: str,
        from_trust: str,
        to_trust: str,
        cause: str,
        note: str | None,
        at: str,
        front: str,
    ) -> None:
        self._exec(
            "INSERT INTO trust_transitions (memory_id, project, from_trust, to_trust, cause, "
            "note, at, front) VALUES (:id, :project, :from_trust, :to_trust, :cause, :note, "
            ":at, :front)",
            id=memory_id,
            from_trust=from_trust,
            to_trust=to_trust,
            cause=cause,
            note=note,
            at=at,
            front=front,
        )
