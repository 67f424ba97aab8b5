"""Reading memories: one by id, lists, retrieval, the forgetting and audit logs, counts."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from memls import protocol, timeutil
from memls.engine.cache import QueryCache
from memls.engine.shared import Clock, Units, checked_text, fetch_memory
from memls.index.chroma import VectorIndex
from memls.models import ModelRuntime
from memls.retrieval.pipeline import RetrievalConfig, Retriever
from memls.scope import USER_PROJECT, Visibility, project_key
from memls.store.unit import Store


class Reads:
    """get, list, query (through the query cache), forgotten, audit, stats."""

    def __init__(
        self,
        units: Units,
        storage: Store,
        clock: Clock,
        cache: QueryCache,
        retrieval: RetrievalConfig,
        index: VectorIndex | None,
        models: ModelRuntime | None,
        *,
        directory: Path,
        degraded: Callable[[], list[str]],
    ) -> None:
        self.units = units
        self.storage = storage
        self.clock = clock
        self.cache = cache
        self.retrieval = retrieval
        self.index = index
        self.models = models
        self.directory = directory
        self.degraded = degraded

    def get(self, params: protocol.GetParams) -> protocol.Memory:
        project = project_key(params.project)
        with self.units.read(project) as tx:
            return fetch_memory(tx, params.id)

    def list(self, params: protocol.ListParams) -> protocol.ListResult:
        project = project_key(params.project)
        with self.units.read(project) as tx:
            rows = tx.memories.listed(
                status=params.status,
                trust=params.trust,
                type_=params.type,
                limit=params.limit,
                include_user=params.include_user,
            )
            return protocol.ListResult(project=project, memories=tx.records(rows))

    def query(self, params: protocol.QueryParams) -> protocol.QueryResult:
        """Retrieval, answered from the project's cache when nothing changed since the same
        question was asked (engine/cache.py)."""
        started = time.perf_counter()
        params, seen = self._settled(params)
        if not self.cache.enabled:
            return self._search(params, seen)
        key = (seen.projects, msgspec.json.encode(params), repr(self.retrieval))
        now_us = timeutil.to_micros(seen.now)
        hit = self.cache.get(key, now_us)
        if hit is not None:
            took = round((time.perf_counter() - started) * 1000, 3)
            return msgspec.structs.replace(hit, took_ms=took, cached=True)
        generation = self.cache.generation(seen.projects)
        result = self._search(params, seen)
        if not result.degraded or self.index is None:  # vectors off: always "degraded"
            self.cache.put(
                key,
                seen.projects,
                generation,
                result,
                now_us=now_us,
                until_us=self._next_change(seen),
            )
        return result

    def query_uncached(self, params: protocol.QueryParams) -> protocol.QueryResult:
        """The same answer as `query`, always computed afresh (tests compare the two)."""
        return self._search(*self._settled(params))

    def _settled(self, params: protocol.QueryParams) -> tuple[protocol.QueryParams, Visibility]:
        """A query as the pipeline and the cache see it: its project and depth filled in, the
        text checked, and what it may see."""
        project = project_key(params.project)
        checked_text(params.query, "query")
        params = msgspec.structs.replace(params, project=project, depth=self.depth_of(params))
        seen = self.visibility(
            project,
            valid_at=params.valid_at,
            as_of=params.as_of,
            include_user=params.include_user,
            types=params.types,
        )
        return params, seen

    def visibility(
        self,
        project: str,
        *,
        valid_at: str | None,
        as_of: str | None,
        include_user: bool,
        types: Iterable[str] | None = None,
    ) -> Visibility:
        """What a read of `project` may see now (valid at / as of, with @user or not)."""
        projects = (project, USER_PROJECT) if include_user else (project,)
        return Visibility(
            projects=projects,
            now=self.clock(),
            valid_at=timeutil.parse_ts(valid_at, field="validAt") if valid_at else None,
            as_of=timeutil.parse_ts(as_of, field="asOf") if as_of else None,
            types=tuple(types) if types else None,
        )

    def depth_of(self, params: protocol.QueryParams) -> protocol.Depth:
        """How much work a query buys: its `depth`; else its mode's (interactive ->
        interactive; lexical -> none, the pipeline runs BM25 alone whatever the depth); else
        default. `rerank: false` (or re-ranking switched off) keeps the depth and drops only
        the cross-encoder (`retrieval.pipeline`)."""
        if params.depth is not None:
            return params.depth
        if params.mode == "interactive":
            return "interactive"
        if params.mode == "lexical":
            return "none"
        return "default"

    def _search(self, params: protocol.QueryParams, seen: Visibility) -> protocol.QueryResult:
        retriever = Retriever(self.storage.search, self.index, self.models, self.retrieval)
        return retriever.search(params, seen)

    def _next_change(self, seen: Visibility) -> int | None:
        """When "valid now" next changes for these projects without a write (None: never, or
        the query does not ask about now)."""
        if seen.valid_at is not None or seen.as_of is not None:
            return None
        moments = []
        for project in seen.projects:
            with self.units.read(project) as tx:
                moment = tx.memories.next_validity_change(seen.now)
            if moment is not None:
                moments.append(timeutil.to_micros(moment))
        return min(moments, default=None)

    def forgotten(self, params: protocol.ForgottenParams) -> protocol.ForgottenResult:
        project = project_key(params.project)
        with self.units.read(project) as tx:
            rows = tx.forgetting.entries(params.reason, params.limit)
        return protocol.ForgottenResult(
            project=project, entries=[protocol.ForgetEntry(**dict(row)) for row in rows]
        )

    def audit(self, params: protocol.AuditParams) -> protocol.AuditResult:
        project = project_key(params.project)
        memory_id = params.id.strip() if params.id is not None else None
        with self.units.read(project) as tx:
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
        with self.units.read(project) as tx:
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
                query_cache=self._cache_stats(project),
            )

    def _cache_stats(self, project: str) -> protocol.QueryCacheStats:
        hits, misses, entries = self.cache.stats(project)
        return protocol.QueryCacheStats(
            enabled=self.cache.enabled,
            hits=hits,
            misses=misses,
            entries=entries,
            capacity=self.cache.capacity,
        )
