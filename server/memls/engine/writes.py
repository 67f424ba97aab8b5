"""Writing memories: store (tombstones, dedup), supersede, forget, the merge of restatements
after indexing; and the two steps of a store that note syncing shares (`clear_tombstone`,
`insert`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from memls import protocol, secrets, textnorm, timeutil
from memls.dedup.lookup import NearDuplicates
from memls.engine import cite
from memls.engine.shared import (
    Announcer,
    Clock,
    Indexing,
    Units,
    checked_text,
    fetch_memory,
    require,
)
from memls.errors import InvalidInput, Refused
from memls.scope import project_key
from memls.store.unit import Tx


class Writes:
    """store, supersede, forget: each one unit of work, then the indexer kicked and the
    fronts told. A store's text is checked for secrets (refused, or redacted when asked or
    when `redact` is the setting: [privacy] secrets = "redact") and exact duplicates before it
    is acknowledged. Restatements are found after it (`merge_restated`, on the indexer's
    thread, for a whole batch at once): the new memory is merged into the one it restates
    (`near`, None: exact duplicates only)."""

    def __init__(
        self,
        units: Units,
        clock: Clock,
        indexing: Indexing,
        announcer: Announcer,
        *,
        near: NearDuplicates | None = None,
        redact: bool = False,
    ) -> None:
        self.units = units
        self.clock = clock
        self.indexing = indexing
        self.announcer = announcer
        self.near = near
        self.redact = redact

    def store(self, params: protocol.StoreParams) -> protocol.StoreResult:
        project = project_key(params.project)
        text = checked_text(params.text, "text")
        assert text is not None
        text = secrets.screen(text, "text", redact_it=params.redact or self.redact)
        now = self.clock()
        valid_from = (
            timeutil.parse_ts(params.valid_from, field="validFrom") if params.valid_from else now
        )
        valid_until = (
            timeutil.parse_ts(params.valid_until, field="validUntil")
            if params.valid_until
            else None
        )
        if valid_until is not None and valid_until < valid_from:
            raise InvalidInput("must not be before validFrom", field="validUntil")
        canonical = textnorm.canonical_hash(text)
        cited = cite.prepare(
            project,
            params.citations,
            text=text,
            infer=params.infer_citations,
            source_uri=params.source_uri,
        )
        with self.units.write(project) as tx:
            if params.derived_from:
                require(tx, params.derived_from, "derivedFrom")
            cleared = clear_tombstone(tx, canonical, now, force=params.force)
            existing = tx.memories.active_by_canonical(canonical)
            if existing is not None and existing["trust"] == "rejected":
                raise Refused(
                    f"this content is memory {existing['id']}, rejected on review; restore it "
                    "(review restore) to use it again",
                    field="text",
                )
            if existing is not None:
                tx.memories.seen_again(existing["id"], now)
                memory = fetch_memory(tx, existing["id"])
                return protocol.StoreResult(
                    id=memory.id,
                    project=project,
                    created=False,
                    duplicate=True,
                    memory=memory,
                    tombstone_cleared=cleared,
                )
            memory_id = insert(
                tx,
                text,
                params.type,
                valid_from,
                valid_until,
                now,
                source_uri=params.source_uri,
                source_range=params.source_range,
                derived_from=params.derived_from,
                canonical=canonical,
                force=params.force,
            )
            if cited:
                tx.citations.add(memory_id, cited, now)
            memory = fetch_memory(tx, memory_id)
        self.indexing.kick()
        self.announcer.changed(project, "store", [memory_id])
        return protocol.StoreResult(
            id=memory_id,
            project=project,
            created=True,
            duplicate=False,
            memory=memory,
            tombstone_cleared=cleared,
        )

    def after_index(
        self,
        project: str,
        rows: list[sqlite3.Row],
        vectors: Any,
        *,
        then: Callable[[str, list[sqlite3.Row], Any], None],
    ) -> None:
        """The indexer's callback for a batch: restatements merged, `then` (the contradiction
        check) for the rest."""
        rows, vectors = self.merge_restated(project, rows, vectors)
        if rows:
            then(project, rows, vectors)

    def merge_restated(
        self, project: str, rows: list[sqlite3.Row], vectors: Any
    ) -> tuple[list[sqlite3.Row], Any]:
        """The near-duplicate check of a batch the indexer has just embedded (before the
        contradiction check, which gets what is left): each new memory that restates an
        earlier one of its type (`NearDuplicates.restated`) is merged into it in one unit of
        work: the earlier one counts it (`seenAgain`, `lastSeenAt`), the new row goes (no
        tombstone: storing the text again is answered by the earlier one), audited `merge`
        with `into`; then `memory/changed` (op `merge`, ids: the new, then the earlier).
        Returns the rows (and vectors) not merged."""
        if self.near is None or vectors is None:
            return rows, vectors
        found = self.near.restated(project, rows, vectors, self.clock())
        if not found:
            return rows, vectors
        now = self.clock()
        merged: dict[str, str] = {}
        with self.units.write(project) as tx:
            for new_id, old_id in found.items():
                new, old = tx.memories.fetch(new_id), tx.memories.fetch(old_id)
                if new is None or old is None or {new["status"], old["status"]} != {"active"}:
                    continue  # forgotten or superseded meanwhile: nothing to merge
                tx.memories.seen_again(old_id, now)
                tx.memories.delete(new_id)
                tx.outbox.enqueue(new_id, "delete", now)
                tx.audit("merge", new_id, now, into=old_id)
                merged[new_id] = old_id
        for new_id, old_id in merged.items():
            self.announcer.changed(project, "merge", [new_id, old_id])
        kept = [k for k, r in enumerate(rows) if r["id"] not in merged]
        return [rows[k] for k in kept], vectors[kept]

    def supersede(self, params: protocol.SupersedeParams) -> protocol.SupersedeResult:
        project = project_key(params.project)
        now = self.clock()
        with self.units.write(project) as tx:
            old = require(tx, params.old, "old")
            new = require(tx, params.by, "by")
            self._check_supersede(old, new)
            until = new["valid_from"]
            if old["valid_until"] is not None and old["valid_until"] < until:
                until = old["valid_until"]
            tx.memories.supersede(old["id"], until, now)
            tx.edges.add(new["id"], old["id"], "supersedes", now)
            tx.outbox.enqueue(old["id"], "meta", now)
            tx.conflicts.close(old["id"], new["id"], "resolved", now, only_open=True)
            tx.audit("supersede", old["id"], now, by=new["id"], validUntil=until)
            old_m, new_m = tx.records(
                [tx.memories.existing(old["id"]), tx.memories.existing(new["id"])]
            )
        self.indexing.kick()
        self.announcer.changed(project, "supersede", [old_m.id, new_m.id])
        return protocol.SupersedeResult(project=project, old=old_m, new=new_m)

    @staticmethod
    def _check_supersede(old: Any, new: Any) -> None:
        if old["id"] == new["id"]:
            raise InvalidInput("a memory cannot supersede itself", field="by")
        if old["status"] != "active":
            raise Refused(f"memory {old['id']} is already superseded", field="old")
        if new["status"] != "active":
            raise Refused(f"memory {new['id']} is itself superseded", field="by")
        if new["valid_from"] < old["valid_from"]:
            raise Refused(
                f"memory {new['id']} became valid ({new['valid_from']}) before memory "
                f"{old['id']} ({old['valid_from']}); it cannot supersede it",
                field="by",
            )

    def forget(self, params: protocol.ForgetParams) -> protocol.ForgetResult:
        project = project_key(params.project)
        now = self.clock()
        with self.units.write(project) as tx:
            row = require(tx, params.id)
            tx.forget(row, params.reason, now)
        self.indexing.kick()
        self.announcer.changed(project, "forget", [row["id"]])
        return protocol.ForgetResult(project=project, id=row["id"], reason=params.reason, at=now)


def clear_tombstone(tx: Tx, canonical: str, now: str, *, force: bool) -> bool:
    """Forgotten content comes back only with force (refused, naming why, otherwise);
    clearing its tombstone is audited. True when a tombstone was cleared."""
    tomb = tx.tombstones.find(canonical)
    if tomb is None:
        return False
    if not force:
        raise Refused(
            f"this content was forgotten on {tomb['at']} (reason {tomb['reason']}, "
            f"memory {tomb['memory_id']}); store it with force to keep it again",
            field="text",
        )
    tx.tombstones.clear(canonical)
    tx.audit("tombstone_cleared", tomb["memory_id"], now, reason=tomb["reason"])
    return True


def insert(
    tx: Tx,
    text: str,
    type_: str,
    valid_from: str,
    valid_until: str | None,
    now: str,
    *,
    canonical: str,
    source_uri: str | None = None,
    source_range: str | None = None,
    derived_from: str | None = None,
    force: bool = False,
    path_scope: str | None = None,
) -> str:
    """One new row + its outbox row + audit, inside the caller's transaction (`force`:
    audited, so that the near-duplicate check after indexing keeps it apart)."""
    memory_id = tx.memories.insert(
        content=text,
        type_=type_,
        valid_from=valid_from,
        valid_until=valid_until,
        recorded_at=now,
        content_hash=textnorm.content_hash(text),
        canonical=canonical,
        source_uri=source_uri,
        source_range=source_range,
        derived_from=derived_from,
        path_scope=path_scope,
    )
    if derived_from:
        tx.edges.add(memory_id, derived_from, "derived_from", now)
    tx.outbox.enqueue(memory_id, "index", now)
    detail: dict[str, Any] = {"type": type_, "canonicalHash": canonical}
    if force:
        detail["force"] = True
    tx.audit("store", memory_id, now, **detail)
    return memory_id
