"""Secrets that older versions stored: found in a project's memories and in the previews the
forgetting log keeps of forgotten ones (doctor --secrets), and redacted on request (--repair),
in one unit of work: the text, its hashes, the index copy (re-queued) and an audit entry that
names the kinds, never the secret."""

from __future__ import annotations

from typing import Any, cast

from memls import protocol, secrets, textnorm
from memls.engine.shared import Announcer, Clock, Indexing, Units


class StoredSecrets:
    def __init__(
        self, units: Units, clock: Clock, indexing: Indexing, announcer: Announcer
    ) -> None:
        self.units = units
        self.clock = clock
        self.indexing = indexing
        self.announcer = announcer

    def check(self, project: str, *, repair: bool) -> tuple[list[protocol.StoredSecret], list[str]]:
        """(every secret found, the memories redacted: none unless `repair`)."""
        with self.units.read(project) as tx:
            rows = tx.memories.with_content()
            previews = tx.forgetting.previews()
        hits: dict[str, tuple[str, list[secrets.Finding]]] = {}
        found: list[protocol.StoredSecret] = []
        for row in rows:
            findings = secrets.find(row["content"])
            if not findings:
                continue
            hits[row["id"]] = (row["content"], findings)
            for f in findings:
                line_start = row["content"].rfind("\n", 0, f.start) + 1
                found.append(
                    protocol.StoredSecret(
                        id=row["id"], kind=f.kind, line=f.line + 1, column=f.start - line_start + 1
                    )
                )
        logged: dict[int, str] = {}
        for entry in previews:
            findings = secrets.find(entry["preview"])
            if not findings:
                continue
            logged[entry["seq"]] = secrets.redact(entry["preview"], findings)
            found += [
                protocol.StoredSecret(
                    id=entry["memory_id"],
                    kind=f.kind,
                    line=f.line + 1,
                    column=f.start - (entry["preview"].rfind("\n", 0, f.start) + 1) + 1,
                    place="forgetting_log",
                )
                for f in findings
            ]
        if not repair or not (hits or logged):
            return found, []
        now = self.clock()
        with self.units.write(project) as tx:
            for seq, preview in logged.items():
                tx.forgetting.set_preview(seq, preview)
            for memory_id, (content, findings) in hits.items():
                clean = secrets.redact(content, findings)
                canonical = textnorm.canonical_hash(clean)
                tx.audit("redact", memory_id, now, kinds=sorted({f.kind for f in findings}))
                twin = tx.memories.active_by_canonical(canonical)
                row = tx.memories.existing(memory_id)
                if twin is not None and twin["id"] != memory_id and row["status"] == "active":
                    # redacted, it is another active memory's text: one of them is enough (the
                    # forgetting log keeps a preview of the redacted text)
                    tx.forget(cast(Any, {**dict(row), "content": clean}), "dedup", now)
                    continue
                tx.memories.rewrite(memory_id, clean, textnorm.content_hash(clean), canonical)
                tx.outbox.enqueue(memory_id, "index", now)
        self.indexing.kick()
        self.announcer.changed(project, "redact", list(hits))
        return found, list(dict.fromkeys([*hits, *(f.id for f in found if f.place != "memory")]))
