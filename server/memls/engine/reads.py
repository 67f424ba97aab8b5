"""Reading memories: one by id, lists, retrieval, the forgetting and audit logs, counts."""

from __future__ import annotations

import json

from memls import protocol
from memls.engine.core import EngineCore
from memls.retrieval.pipeline import Retriever
from memls.scope import project_key


class Reads(EngineCore):
    def get(self, params: protocol.GetParams) -> protocol.Memory:
        project = project_key(params.project)
        with self._read(project) as tx:
            return self._memory(tx, params.id)

    def list(self, params: protocol.ListParams) -> protocol.ListResult:
        project = project_key(params.project)
        with self._read(project) as tx:
            rows = tx.memories.listed(
                status=params.status,
                trust=params.trust,
                type_=params.type,
                limit=params.limit,
                include_user=params.include_user,
            )
            return protocol.ListResult(project=project, memories=tx.records(rows))

    def query(self, params: protocol.QueryParams) -> protocol.QueryResult:
        project = project_key(params.project)
        self._text(params.query, "query")
        seen = self.visibility(
            project,
            valid_at=params.valid_at,
            as_of=params.as_of,
            include_user=params.include_user,
            types=params.types,
        )
        retriever = Retriever(self.storage.search, self.index, self.models, self.retrieval)
        return retriever.search(params, seen)

    def forgotten(self, params: protocol.ForgottenParams) -> protocol.ForgottenResult:
        project = project_key(params.project)
        with self._read(project) as tx:
            rows = tx.forgetting.entries(params.reason, params.limit)
        return protocol.ForgottenResult(
            project=project, entries=[protocol.ForgetEntry(**dict(row)) for row in rows]
        )

    def audit(self, params: protocol.AuditParams) -> protocol.AuditResult:
        project = project_key(params.project)
        memory_id = params.id.strip() if params.id is not None else None
        with self._read(project) as tx:
            rows = tx.audit_log.entries(memory_id, params.limit)
        entries = [
            protocol.AuditEntry(
                **{k: row[k] for k in ("seq", "at", "project", "memory_id", "op", "front")},
                detail=json.loads(row["detail"]) if row["detail"] else None,
            )
            for row in rows
        ]
        return protocol.AuditResult(project=project, entries=entries)

    def stats(self, params: protocol.StatsParams) -> protocol.StatsResult:
        project = project_key(params.project)
        with self._read(project) as tx:
            by_status = tx.memories.counts("status")
            by_trust = tx.memories.counts("trust")
            return protocol.StatsResult(
                project=project,
                memories=sum(by_status.values()),
                by_status=by_status,
                by_trust=by_trust,
                by_type=tx.memories.counts("type"),
                review_queue=by_trust.get("flagged", 0),
                forgotten=tx.forgetting.count(),
                tombstones=tx.tombstones.count(),
                feedback_signals=tx.feedback.count(),
                dead_letters=tx.dead_letters.count("AND resolved_at IS NULL"),
                schema_version=self.storage.version,
                data_dir=str(self.directory),
                index_pending=tx.outbox.count(),
                degraded=self.degraded(),
            )
