"""Looking after the store: health, doctor and reindex of the vector copy, the start-up
check's count comparison, maintenance and its dead letters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memls import maintenance, protocol
from memls.engine.privacy import StoredSecrets
from memls.engine.shared import Announcer, Clock, Indexing, Units
from memls.errors import Refused
from memls.index.chroma import VectorIndex, metadata
from memls.models import ModelRuntime
from memls.models.late import MODEL_TAG
from memls.scope import project_key
from memls.store.unit import Store


class Admin:
    """health, doctor, reindex, index_counts_agree, maintain, dead_letters."""

    def __init__(
        self,
        units: Units,
        storage: Store,
        clock: Clock,
        index: VectorIndex | None,
        models: ModelRuntime | None,
        indexing: Indexing,
        announcer: Announcer,
        *,
        directory: Path,
        ttl_days: dict[str, float],
        degraded: Callable[[], list[str]],
        stored_secrets: StoredSecrets | None = None,
    ) -> None:
        self.units = units
        self.storage = storage
        self.clock = clock
        self.index = index
        self.models = models
        self.indexing = indexing
        self.announcer = announcer
        self.directory = directory
        self.ttl_days = ttl_days
        self.degraded = degraded
        self.stored_secrets = stored_secrets

    def health(self, params: protocol.HealthParams | None = None) -> protocol.HealthResult:
        from memls import __version__

        degraded = self.degraded()
        return protocol.HealthResult(
            ok=not degraded,
            version=__version__,
            data_dir=str(self.directory),
            schema_version=self.storage.version,
            vectors=self.index is not None,
            models=self._model_states(),
            degraded=degraded,
            index_pending=self.indexing.indexer.pending(),
        )

    def _model_states(self) -> dict[str, Any]:
        if self.models is None:
            return {}
        return {s.name: protocol.to_wire(s) for s in self.models.statuses()}

    def reindex(self, params: protocol.ReindexParams) -> protocol.ReindexResult:
        """Rebuild the project's Chroma collection and token vectors from SQLite."""
        project = project_key(params.project)
        if self.index is None or self.indexing.worker is None:
            raise Refused("vectors are switched off (settings: [index] vectors = false)")
        work = self.announcer.work(project, "reindex")
        work.start("waiting", 0, "waiting for the index to be idle")
        self.indexing.flush(timeout=600)
        self.index.drop(project)
        self.storage.tokens.clear(project)
        with self.units.write(project) as tx:
            tx.outbox.clear()
            queued = tx.outbox.enqueue_all(self.clock())
        self.indexing.kick()
        indexed = self.indexing.wait(work, project, queued, timeout=3600)
        work.end(f"re-indexed {queued} memories" + ("" if indexed else " (not finished)"))
        return protocol.ReindexResult(project=project, queued=queued, indexed=indexed)

    def index_counts_agree(self, project: str) -> bool:
        """The start-up check's first look: do the vector index and the token vectors hold as
        many memories as SQLite, with nothing waiting in the outbox? Counts only (a few ms at
        10k, against seconds for `doctor`'s compare of every vector's metadata, which is what
        runs when they do not agree). A deleted, emptied or unreadable index never agrees."""
        if self.index is None:
            return True
        with self.units.read(project) as tx:
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
        with self.units.read(project) as tx:
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
        if params.secrets and self.stored_secrets is not None:
            found, redacted = self.stored_secrets.check(project, repair=params.repair)
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
            front=self.units.front,
            ttl_days=self.ttl_days,
        )
        self.indexing.kick()
        self.announcer.changed(project, "maintain", result.expired)
        return result

    def dead_letters(self, params: protocol.MaintainParams) -> protocol.DeadLettersResult:
        project = project_key(params.project)
        return protocol.DeadLettersResult(
            project=project, failed=maintenance.open_letters(self.storage, project)
        )
