"""Looking after the store: health, doctor and reindex of the vector copy, maintenance, and
export / import."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any, cast

import msgspec

from memls import maintenance, protocol, secrets, textnorm, transfer
from memls.engine.conflicts import ConflictOps
from memls.errors import InvalidInput, MemlsError, Refused
from memls.index.chroma import metadata
from memls.models.late import MODEL_TAG
from memls.scope import project_key


class Admin(ConflictOps):
    def health(self, params: protocol.HealthParams | None = None) -> protocol.HealthResult:
        from memls import __version__

        degraded = self.degraded()
        return protocol.HealthResult(
            ok=not degraded,
            version=__version__,
            data_dir=str(self.directory),
            schema_version=self.storage.version,
            vectors=self.vectors_enabled,
            models=self._model_states(),
            degraded=degraded,
            index_pending=self.indexer.pending(),
        )

    def _model_states(self) -> dict[str, Any]:
        if self.models is None:
            return {}
        return {s.name: protocol.to_wire(s) for s in self.models.statuses()}

    def reindex(self, params: protocol.ReindexParams) -> protocol.ReindexResult:
        """Rebuild the project's Chroma collection and token vectors from SQLite."""
        project = project_key(params.project)
        if self.index is None or self.worker is None:
            raise Refused("vectors are switched off (settings: [index] vectors = false)")
        work = self._work(project, "reindex")
        work.start("waiting", 0, "waiting for the index to be idle")
        self.worker.flush(timeout=600)
        self.index.drop(project)
        self.storage.tokens.clear(project)
        with self._write(project) as tx:
            tx.outbox.clear()
            queued = tx.outbox.enqueue_all(self.clock())
        self._kick()
        indexed = self._await_index(work, project, queued, timeout=3600)
        work.end(f"re-indexed {queued} memories" + ("" if indexed else " (not finished)"))
        return protocol.ReindexResult(project=project, queued=queued, indexed=indexed)

    def _await_index(self, work: Any, project: str, total: int, timeout: float) -> bool:
        """Wait until the indexer has drained the outbox (True) or fails or `timeout` ends
        (False), telling `work` how many of the project's `total` rows are in the index."""
        if self.worker is None:
            return True
        work.start("indexing", total)
        deadline = time.monotonic() + timeout
        while True:
            drained = self.worker.flush(timeout=max(0.0, min(0.25, deadline - time.monotonic())))
            work.advance(total - self.indexer.pending(project))
            if drained:
                return True
            if (self.indexer.last_error and self.indexer.pending()) or (
                time.monotonic() >= deadline
            ):
                return False

    def ingest(self, params: protocol.IngestParams) -> protocol.IngestResult:
        """Store many memories, all or none (one transaction), then wait until the vector
        index holds them; progress as memory/progress ("writing", then "indexing")."""
        project = project_key(params.project)
        items = []
        for number, item in enumerate(params.items, start=1):
            if item.project is not None and project_key(item.project) != project:
                raise InvalidInput(
                    f"item {number} names project {item.project!r}, not {project!r}",
                    field="items",
                )
            items.append(
                msgspec.structs.replace(item, project=project, redact=item.redact or params.redact)
            )
        work = self._work(project, "ingest")
        work.start("writing", len(items))
        ids: list[str] = []
        duplicates = 0
        try:
            with self._write(project):  # the stores below nest in it: all or nothing
                for number, item in enumerate(items, start=1):
                    try:
                        stored = self.store(item)
                    except MemlsError as exc:
                        exc.message = f"item {number}: {exc.message}"
                        raise
                    ids.append(stored.id)
                    duplicates += bool(stored.duplicate)
                    work.advance(number)
        except BaseException:
            work.end("nothing stored")
            raise
        self._kick()
        indexed = (
            self._await_index(work, project, len(items) - duplicates, timeout=3600)
            if self.index is not None
            else True
        )
        work.end(f"stored {len(items) - duplicates} memories ({duplicates} duplicates)")
        return protocol.IngestResult(
            project=project,
            stored=len(items) - duplicates,
            duplicates=duplicates,
            ids=ids,
            indexed=indexed,
        )

    def index_counts_agree(self, project: str) -> bool:
        """The start-up check's first look: do the vector index and the token vectors hold as
        many memories as SQLite, with nothing waiting in the outbox? Counts only (a few ms at
        10k, against seconds for `doctor`'s compare of every vector's metadata, which is what
        runs when they do not agree). A deleted, emptied or unreadable index never agrees."""
        if self.index is None:
            return True
        with self._read(project) as tx:
            memories = sum(tx.memories.counts("status").values())
            if tx.outbox.pending_ids():
                return False
        try:
            indexed = self.index.size(project)
        except Exception:  # noqa: BLE001 - unreadable: the full check says how
            return False
        if indexed != memories:
            return False
        if self.models is None or self.models.late.status().state not in ("loaded", "not_loaded"):
            return True
        return self.storage.tokens.count(project, MODEL_TAG) == memories

    def doctor(self, params: protocol.DoctorParams) -> protocol.DoctorResult:
        """Compare SQLite and Chroma for the project, and report the models' state."""
        project = project_key(params.project)
        problems = list(self.degraded())
        with self._read(project) as tx:
            rows = tx.memories.all()
            pending_ids = tx.outbox.pending_ids()
        missing: list[str] = []
        extra: list[str] = []
        stale: list[str] = []
        indexed = 0
        if self.index is not None:
            try:
                in_chroma = self.index.all_ids(project)
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                problems.append(f"chroma unreadable: {exc}")
                in_chroma = {}
            indexed = len(in_chroma)
            expected = {r["id"]: metadata(r) for r in rows}
            missing = sorted(i for i in expected if i not in in_chroma and i not in pending_ids)
            extra = sorted(i for i in in_chroma if i not in expected and i not in pending_ids)
            stale = sorted(
                i
                for i, meta in expected.items()
                if i in in_chroma
                and i not in pending_ids
                and any(in_chroma[i].get(k) != v for k, v in meta.items())
            )
            problems += self._token_problems(project, rows, pending_ids)
            for label, ids in (
                ("missing from", missing),
                ("extra in", extra),
                ("out of date in", stale),
            ):
                if ids:
                    problems.append(
                        f"{len(ids)} memories {label} the vector index (run memls reindex)"
                    )
        found: list[protocol.StoredSecret] = []
        redacted: list[str] = []
        if params.secrets:
            found, redacted = self._stored_secrets(project, repair=params.repair)
            if found and not redacted:
                problems.append(
                    f"{len({f.id for f in found})} memories hold secrets (memls doctor "
                    "--secrets --repair redacts them)"
                )
        return protocol.DoctorResult(
            project=project,
            ok=not problems,
            problems=problems,
            models=self._model_states(),
            memories=len(rows),
            indexed=indexed,
            pending=len(pending_ids),
            missing=missing,
            extra=extra,
            stale=stale,
            secrets=found,
            redacted=redacted,
        )

    def _stored_secrets(
        self, project: str, *, repair: bool
    ) -> tuple[list[protocol.StoredSecret], list[str]]:
        """Secrets in the project's stored memories (older versions stored them); with
        `repair`, each such memory's text redacted in one transaction, re-indexed, audited
        (the audit names the kinds, never the secret)."""
        with self._read(project) as tx:
            rows = tx.memories.with_content()
        hits: dict[str, tuple[str, list[secrets.Finding]]] = {}
        found: list[protocol.StoredSecret] = []
        for row in rows:
            findings = secrets.find(row["content"])
            if findings:
                hits[row["id"]] = (row["content"], findings)
                for f in findings:
                    line_start = row["content"].rfind("\n", 0, f.start) + 1
                    found.append(
                        protocol.StoredSecret(
                            id=row["id"],
                            kind=f.kind,
                            line=f.line + 1,
                            column=f.start - line_start + 1,
                        )
                    )
        if not repair or not hits:
            return found, []
        now = self.clock()
        with self._write(project) as tx:
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
        self._kick()
        self._changed(project, "redact", list(hits))
        return found, list(hits)

    def _token_problems(self, project: str, rows: list[Any], pending: set[str]) -> list[str]:
        """Memories without late-interaction token vectors (when the model can make them)."""
        if self.models is None or self.models.late.status().state not in ("loaded", "not_loaded"):
            return []
        have = self.storage.tokens.ids(project, MODEL_TAG)
        lacking = sum(1 for r in rows if r["id"] not in have and r["id"] not in pending)
        extra = len(have - {r["id"] for r in rows} - pending)
        out = []
        if lacking:
            out.append(
                f"{lacking} memories without token vectors (late interaction; run memls reindex)"
            )
        if extra:
            out.append(f"{extra} token vectors of memories that are gone (run memls reindex)")
        return out

    def maintain(self, params: protocol.MaintainParams) -> protocol.MaintainResult:
        """Expire what is due; the indexer drops what went and the fronts hear of it."""
        project = project_key(params.project)
        result = maintenance.run(
            self.storage,
            project,
            now=self.clock(),
            front=self.front,
            ttl_days=self.settings.ttl_days,
        )
        self._kick()
        self._changed(project, "maintain", result.expired)
        return result

    def dead_letters(self, params: protocol.MaintainParams) -> protocol.DeadLettersResult:
        project = project_key(params.project)
        return protocol.DeadLettersResult(
            project=project, failed=maintenance.open_letters(self.storage, project)
        )

    def export(self, project: str | None) -> Iterator[dict[str, Any]]:
        return transfer.export(self.storage, project_key(project))

    def import_(
        self, project: str | None, lines: Iterable[str], *, redact: bool = False
    ) -> dict[str, int]:
        """All or nothing (one transaction), then the wait until the vector index holds the
        imported memories; progress as memory/progress ("writing", then "indexing"). A memory
        holding a secret refuses the import (naming its line), or is redacted when asked."""
        key = project_key(project)
        lines = list(lines)
        work = self._work(key, "import")
        work.start("writing", len(lines))
        try:
            counts = transfer.import_lines(
                self.storage,
                key,
                lines,
                now=self.clock(),
                front=self.front,
                redact=self._redacting(redact),
            )
        except BaseException:
            work.end("nothing imported")
            raise
        work.advance(len(lines))
        self._kick()
        if self.index is not None:
            self._await_index(work, key, counts.get("memories", 0), timeout=3600)
        work.end("imported " + ", ".join(f"{n} {t}" for t, n in counts.items() if n))
        return counts
