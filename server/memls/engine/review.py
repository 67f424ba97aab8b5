"""Trust: feedback signals and the review queue, every state of which can be left again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, cast

from memls import lifecycle, protocol, secrets
from memls.engine.shared import (
    Announcer,
    Clock,
    Indexing,
    Units,
    checked_text,
    fetch_memory,
    require,
)
from memls.errors import InvalidInput
from memls.scope import project_key
from memls.store.unit import Tx

Cause = Literal["approve", "reject", "restore", "feedback"]


class Review:
    """feedback and review; the review queue is listed through `list_memories` (the reads'
    `list`), its "Cited code changed" group through `cited_code_changed` (the citations')."""

    def __init__(
        self,
        units: Units,
        clock: Clock,
        indexing: Indexing,
        announcer: Announcer,
        *,
        list_memories: Callable[[protocol.ListParams], protocol.ListResult],
        cited_code_changed: Callable[[str], list[protocol.Memory]] = lambda project: [],
    ) -> None:
        self.units = units
        self.clock = clock
        self.indexing = indexing
        self.announcer = announcer
        self.list_memories = list_memories
        self.cited_code_changed = cited_code_changed

    def _transition(
        self, tx: Tx, memory_id: str, old: str, new: str, cause: str, note: str | None, at: str
    ) -> protocol.TrustTransition:
        tx.memories.set_trust(memory_id, new)
        tx.transitions.add(memory_id, old, new, cause, note, at, tx.front)
        tx.outbox.enqueue(memory_id, "meta", at)
        tx.audit("trust", memory_id, at, fromTrust=old, toTrust=new, cause=cause)
        return protocol.TrustTransition(
            memory_id=memory_id,
            from_trust=cast(protocol.Trust, old),
            to_trust=cast(protocol.Trust, new),
            cause=cast(Cause, cause),
            note=note,
            at=at,
        )

    def feedback(self, params: protocol.FeedbackParams) -> protocol.FeedbackResult:
        project = project_key(params.project)
        query = checked_text(params.query, "query", required=False)
        if query is not None:  # kept with the signal: a secret in it is kept redacted
            query = secrets.redact(query)
        now = self.clock()
        with self.units.write(project) as tx:
            row = require(tx, params.id)
            delta = lifecycle.SIGNAL_DELTA[params.signal]
            score = row["feedback_score"] + delta
            tx.memories.set_feedback_score(row["id"], score)
            tx.feedback.add(row["id"], params.signal, delta, score, query, now, tx.front)
            tx.audit("feedback", row["id"], now, signal=params.signal, score=score)
            target = lifecycle.feedback_transition(row["trust"], row["feedback_score"], score)
            transition = None
            if target is not None:
                transition = self._transition(
                    tx, row["id"], row["trust"], target, "feedback", None, now
                )
        self.indexing.kick()
        self.announcer.changed(project, "feedback", [row["id"]])
        return protocol.FeedbackResult(
            project=project,
            id=row["id"],
            signal=params.signal,
            score=score,
            trust=cast(protocol.Trust, target or row["trust"]),
            transition=transition,
        )

    def review(self, params: protocol.ReviewParams) -> protocol.ReviewResult:
        project = project_key(params.project)
        if params.action == "list":
            listed = self.list_memories(
                protocol.ListParams(project=project, trust=params.state, limit=1000)
            )
            return protocol.ReviewResult(
                project=project,
                action="list",
                memories=listed.memories,
                cited_code_changed=self.cited_code_changed(project),
            )
        note = checked_text(params.note, "note", required=False)
        now = self.clock()
        with self.units.write(project) as tx:
            if params.id is None:
                raise InvalidInput(f"review {params.action} needs a memory id", field="id")
            row = require(tx, params.id)
            target = lifecycle.review_target(params.action, row["trust"], row["id"])
            transition = self._transition(
                tx, row["id"], row["trust"], target, params.action, note, now
            )
            memory = fetch_memory(tx, row["id"])
        self.indexing.kick()
        self.announcer.changed(project, "review", [memory.id])
        return protocol.ReviewResult(
            project=project, action=params.action, memories=[memory], transition=transition
        )
