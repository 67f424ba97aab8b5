"""The one service API: every front (CLI, LSP, MCP) calls this and nothing below it.

The engine validates scope and input, owns transactions, and writes the audit log. Each method
takes a params Struct from `memls.protocol` and returns a result Struct.
"""

from __future__ import annotations

import contextvars
import json
import logging
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memls import lifecycle, protocol, textnorm, timeutil
from memls.config import Settings, data_dir, ensure_private_dir, load_settings
from memls.errors import InvalidInput, MemlsError, NotFound, Refused
from memls.ownership import OwnerLock
from memls.scope import USER_PROJECT, Visibility, project_key
from memls.index import outbox
from memls.retrieval.pipeline import RetrievalConfig
from memls.store import records
from memls.store.db import DB_NAME, Database

MAX_TEXT = 64 * 1024
_FRONT: contextvars.ContextVar[str | None] = contextvars.ContextVar("memls_front", default=None)
log = logging.getLogger("memls.engine")

Clock = Callable[[], str]


class Engine:
    """Owns one data directory: its SQLite record (and, later, index and models)."""

    def __init__(
        self,
        db: Database,
        *,
        directory: Path,
        settings: Settings | None = None,
        front: str = "api",
        clock: Clock = timeutil.now,
        lock: OwnerLock | None = None,
        retrieval: RetrievalConfig | None = None,
    ) -> None:
        self.db = db
        self.directory = directory
        self.settings = settings or Settings()
        self._default_front = front
        self.clock = clock
        self._lock = lock
        self.retrieval = retrieval or RetrievalConfig(rerank=self.settings.rerank,
                                                      **self.settings.retrieval)
        self.models = None
        self.index = None
        self.indexer = None
        self.worker = None
        self.listeners: list[Callable[[str, Any], None]] = []
        self._warming: threading.Thread | None = None

    @property
    def front(self) -> str:
        """Who is acting: the front of the current call (socket clients say theirs), else
        this engine's own."""
        return _FRONT.get() or self._default_front

    @contextmanager
    def acting_for(self, front: str | None) -> Iterator[None]:
        """Record the calls made inside as made by `front` (audit, logs)."""
        token = _FRONT.set(front)
        try:
            yield
        finally:
            _FRONT.reset(token)

    @property
    def vectors_enabled(self) -> bool:
        return self.index is not None

    def attach_vectors(self, models=None) -> None:
        """Chroma + the ONNX models (both lazy: nothing loads until first use).

        `models`: a ModelRuntime to share (tests, benchmarks); the engine then does not close it.
        """
        from memls.index.chroma import VectorIndex
        from memls.models import ModelRuntime

        self._ensure_indexer()
        self._own_models = models is None
        self.models = models or ModelRuntime(
            embedder_dir=self.settings.embedder_dir,
            reranker_dir=self.settings.reranker_dir,
            rerank=self.settings.rerank,
            rerank_off_by=self.settings.rerank_off_by,
        )
        self.index = VectorIndex(self.directory, url=self.settings.chroma_url)
        self.indexer.index = self.index
        self.indexer.embedder = self.models.embedder

    def warm(self) -> threading.Thread | None:
        """Start loading, in the background, what the first query needs: the Chroma client and
        both models, side by side (models on their own pool). Long-lived owners (the daemon)
        call it right after start; failures show in `stats`/`doctor` as before. None when
        vectors are off."""
        if self.models is None or self.index is None:
            return None
        models, index = self.models, self.index

        def load() -> None:
            loads = models.start_warm()
            try:
                index.client  # noqa: B018 - imports chromadb and opens the store
            except Exception as exc:  # noqa: BLE001 - the first real use reports it
                log.warning("vector store did not open in the background: %s", exc)
            for done in loads:
                done.exception()  # wait; model failures live in the models' status

        thread = self._warming = threading.Thread(target=load, name="memls-warm", daemon=True)
        thread.start()
        return thread

    def _ensure_indexer(self) -> None:
        from memls.index.outbox import Indexer

        if self.indexer is None:
            self.indexer = Indexer(self.db, None, None, after_index=self._after_index)

    def start_worker(self) -> None:
        """The background drain of the outbox (index + contradiction check)."""
        from memls.index.worker import IndexWorker

        self._ensure_indexer()
        if self.worker is None:
            self.worker = IndexWorker(self.indexer)
            self.worker.kick()  # start-up drain: whatever a crash left in the outbox

    def _kick(self) -> None:
        if self.worker is not None:
            self.worker.kick()

    def flush(self, timeout: float = 120.0) -> bool:
        """Wait until every acknowledged write is in the vector index (True when it is)."""
        return True if self.worker is None else self.worker.flush(timeout)

    # ------------------------------------------------------------ life cycle

    @classmethod
    def open(
        cls,
        directory: str | Path | None = None,
        *,
        front: str = "api",
        clock: Clock = timeutil.now,
        wait_seconds: float = 10.0,
        vectors: bool | None = None,
        retrieval: RetrievalConfig | None = None,
        models=None,
    ) -> Engine:
        """Take ownership of the data directory (creating it owner-only) and open the store.

        vectors=None follows the settings (on by default); False runs lexical-only.
        """
        path = ensure_private_dir(data_dir(directory))
        lock = OwnerLock(path)
        lock.acquire(wait_seconds)
        try:
            settings = load_settings(path)
            db = Database(path / DB_NAME)
        except BaseException:
            lock.release()
            raise
        engine = cls(db, directory=path, settings=settings, front=front, clock=clock, lock=lock,
                     retrieval=retrieval)
        try:
            if settings.vectors if vectors is None else vectors:
                engine.attach_vectors(models)
            engine.start_worker()
        except BaseException:
            engine.close(flush_timeout=0)  # releases the database and the lock
            raise
        return engine

    def close(self, flush_timeout: float = 60.0) -> None:
        if self._warming is not None:  # nothing of ours opens after the lock is released
            self._warming.join()
            self._warming = None
        if self.worker is not None:
            self.worker.flush(flush_timeout)
            self.worker.stop()
            self.worker = None
        if self.models is not None and getattr(self, "_own_models", True):
            self.models.close()
        self.db.close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ helpers

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self.db.transaction() as conn:
            yield conn

    def _audit(
        self,
        conn: sqlite3.Connection,
        project: str,
        op: str,
        memory_id: str | None,
        at: str,
        **detail: Any,
    ) -> None:
        conn.execute(
            "INSERT INTO audit (at, project, memory_id, op, front, detail) VALUES (?, ?, ?, ?, ?, ?)",
            (at, project, memory_id, op, self.front, json.dumps(detail) if detail else None),
        )

    def _require(self, conn: sqlite3.Connection, project: str, memory_id: str, field: str = "id"):
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise InvalidInput("a memory id is required", field=field)
        row = records.fetch(conn, project, memory_id.strip())
        if row is None:
            gone = conn.execute(
                "SELECT reason, at FROM forgetting_log WHERE memory_id = ? AND project = ? "
                "ORDER BY seq DESC LIMIT 1",
                (memory_id.strip(), project),
            ).fetchone()
            extra = f" (forgotten {gone['at']}, reason {gone['reason']})" if gone else ""
            raise NotFound(
                f"no memory {memory_id.strip()} in project {project!r}{extra}", field=field
            )
        return row

    def _memory(self, conn: sqlite3.Connection, project: str, memory_id: str) -> protocol.Memory:
        return records.to_memories(conn, [self._require(conn, project, memory_id)])[0]

    @staticmethod
    def _text(value: str | None, field: str, *, required: bool = True) -> str | None:
        if value is None or not value.strip():
            if required:
                raise InvalidInput("must not be empty", field=field)
            return None
        if len(value) > MAX_TEXT:
            raise InvalidInput(f"longer than {MAX_TEXT} characters", field=field)
        return value

    # ------------------------------------------------------------ store

    def store(self, params: protocol.StoreParams) -> protocol.StoreResult:
        project = project_key(params.project)
        text = self._text(params.text, "text")
        assert text is not None
        now = self.clock()
        valid_from = (
            timeutil.parse_ts(params.valid_from, field="validFrom") if params.valid_from else now
        )
        valid_until = (
            timeutil.parse_ts(params.valid_until, field="validUntil") if params.valid_until else None
        )
        if valid_until is not None and valid_until < valid_from:
            raise InvalidInput("must not be before validFrom", field="validUntil")
        canonical = textnorm.canonical_hash(text)
        with self._write() as conn:
            if params.derived_from:
                self._require(conn, project, params.derived_from, "derivedFrom")
            cleared = self._clear_tombstone(conn, project, canonical, now, force=params.force)
            existing = conn.execute(
                f"SELECT {records.COLUMNS} FROM memories m WHERE m.project = ? "
                "AND m.canonical_hash = ? AND m.status = 'active'",
                (project, canonical),
            ).fetchone()
            if existing is not None and existing["trust"] == "rejected":
                raise Refused(
                    f"this content is memory {existing['id']}, rejected on review; restore it "
                    "(review restore) to use it again", field="text")
            if existing is not None:
                memory = records.to_memories(conn, [existing])[0]
                return protocol.StoreResult(
                    id=memory.id, project=project, created=False, duplicate=True, memory=memory,
                    tombstone_cleared=cleared,
                )
            memory_id = self._insert(
                conn, project, text, params.type, valid_from, valid_until, now,
                source_uri=params.source_uri, source_range=params.source_range,
                derived_from=params.derived_from, canonical=canonical,
            )
            memory = self._memory(conn, project, memory_id)
        self._kick()
        self._changed(project, "store", [memory_id])
        return protocol.StoreResult(
            id=memory_id, project=project, created=True, duplicate=False, memory=memory,
            tombstone_cleared=cleared,
        )

    def _clear_tombstone(self, conn: sqlite3.Connection, project: str, canonical: str,
                         now: str, *, force: bool) -> bool:
        """Forgotten content comes back only with force (refused, naming why, otherwise);
        clearing its tombstone is audited. True when a tombstone was cleared."""
        tomb = conn.execute(
            "SELECT memory_id, reason, at FROM tombstones WHERE project = ? "
            "AND canonical_hash = ?",
            (project, canonical),
        ).fetchone()
        if tomb is None:
            return False
        if not force:
            raise Refused(
                f"this content was forgotten on {tomb['at']} (reason {tomb['reason']}, "
                f"memory {tomb['memory_id']}); store it with force to keep it again",
                field="text",
            )
        conn.execute("DELETE FROM tombstones WHERE project = ? AND canonical_hash = ?",
                     (project, canonical))
        self._audit(conn, project, "tombstone_cleared", tomb["memory_id"], now,
                    reason=tomb["reason"])
        return True

    def _insert(self, conn: sqlite3.Connection, project: str, text: str, type_: str,
                valid_from: str, valid_until: str | None, now: str, *, source_uri=None,
                source_range=None, derived_from=None, canonical: str) -> str:
        """One new row + its outbox row + audit, inside the caller's transaction."""
        memory_id = "m_" + secrets.token_hex(8)
        conn.execute(
            "INSERT INTO memories (id, project, content, type, valid_from, valid_until, "
            "recorded_at, content_hash, canonical_hash, source_uri, source_range, "
            "derived_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (memory_id, project, text, type_, valid_from, valid_until, now,
             textnorm.content_hash(text), canonical, source_uri, source_range, derived_from),
        )
        if derived_from:
            conn.execute(
                "INSERT INTO edges (src, dst, kind, project, created_at) "
                "VALUES (?, ?, 'derived_from', ?, ?)",
                (memory_id, derived_from, project, now),
            )
        outbox.enqueue(conn, project, memory_id, "index", now)
        self._audit(conn, project, "store", memory_id, now, type=type_, canonicalHash=canonical)
        return memory_id

    def _changed(self, project: str, op: str, ids: list[str]) -> None:
        if ids:
            self._notify("memory/changed",
                         protocol.ChangedNotification(project=project, op=op, ids=ids))

    # ------------------------------------------------------------ notes

    def sync_note(self, params: protocol.SyncNoteParams) -> protocol.SyncNoteResult:
        """Make the project's memories from one note file match its text: new units stored,
        vanished units forgotten (reason source_removed), moved units re-ranged. The note is
        the source of truth, so a unit whose content was forgotten before comes back."""
        from memls.notes import parse

        project = project_key(params.project)
        uri = self._text(params.uri, "uri")
        units = parse(params.text, default_type=params.default_type) if params.text else []
        now = self.clock()
        added, removed, moved, shared = [], [], [], []
        unchanged = 0
        with self._write() as conn:
            existing = {
                row["canonical_hash"]: row for row in conn.execute(
                    f"SELECT {records.COLUMNS} FROM memories m INDEXED BY memories_source "
                    "WHERE m.project = ? "
                    "AND m.source_uri = ? AND m.status = 'active'", (project, uri))
            }
            wanted = {}
            for unit in units:
                wanted.setdefault(unit.key, unit)
            for key, unit in wanted.items():
                where = f"{unit.start_line}:{unit.start_char}-{unit.end_line}:{unit.end_char}"
                row = existing.get(key)
                if row is not None:
                    if row["source_range"] != where:
                        conn.execute("UPDATE memories SET source_range = ? WHERE id = ?",
                                     (where, row["id"]))
                        moved.append(row["id"])
                    else:
                        unchanged += 1
                    continue
                other = conn.execute(
                    "SELECT id FROM memories WHERE project = ? AND canonical_hash = ? "
                    "AND status = 'active'", (project, key)).fetchone()
                if other is not None:
                    shared.append(other["id"])
                    continue
                self._clear_tombstone(conn, project, key, now, force=True)
                added.append(self._insert(conn, project, unit.text, unit.type, now, None, now,
                                          source_uri=uri, source_range=where, canonical=key))
            for key, row in existing.items():
                if key not in wanted:
                    self._forget_row(conn, row, "source_removed", now)
                    removed.append(row["id"])
        self._kick()
        self._changed(project, "sync", added + removed + moved)
        return protocol.SyncNoteResult(project=project, uri=uri, added=added, removed=removed,
                                       moved=moved, unchanged=unchanged, shared=shared)

    # ------------------------------------------------------------ reads

    def get(self, params: protocol.GetParams) -> protocol.Memory:
        project = project_key(params.project)
        with self.db.transaction(write=False) as conn:
            return self._memory(conn, project, params.id)

    def list(self, params: protocol.ListParams) -> protocol.ListResult:
        project = project_key(params.project)
        projects = [project, USER_PROJECT] if params.include_user else [project]
        clauses = [f"m.project IN ({', '.join('?' for _ in projects)})"]
        args: list[object] = list(projects)
        for column in ("status", "trust", "type"):
            value = getattr(params, column)
            if value is not None:
                clauses.append(f"m.{column} = ?")
                args.append(value)
        args.append(params.limit)
        with self.db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT {records.COLUMNS} FROM memories m WHERE {' AND '.join(clauses)} "
                "ORDER BY m.recorded_at DESC, m.seq DESC LIMIT ?",
                args,
            ).fetchall()
            return protocol.ListResult(project=project, memories=records.to_memories(conn, rows))

    def visibility(
        self, project: str, *, valid_at: str | None, as_of: str | None, include_user: bool,
        types: Iterable[str] | None = None,
    ) -> Visibility:
        projects = (project, USER_PROJECT) if include_user else (project,)
        return Visibility(
            projects=projects,
            now=self.clock(),
            valid_at=timeutil.parse_ts(valid_at, field="validAt") if valid_at else None,
            as_of=timeutil.parse_ts(as_of, field="asOf") if as_of else None,
            types=tuple(types) if types else None,
        )

    def query(self, params: protocol.QueryParams) -> protocol.QueryResult:
        from memls.retrieval import pipeline

        project = project_key(params.project)
        self._text(params.query, "query")
        return pipeline.search(self, params, project, self.retrieval)

    # ------------------------------------------------------------ supersede

    def supersede(self, params: protocol.SupersedeParams) -> protocol.SupersedeResult:
        project = project_key(params.project)
        now = self.clock()
        with self._write() as conn:
            old = self._require(conn, project, params.old, "old")
            new = self._require(conn, project, params.by, "by")
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
            until = new["valid_from"]
            if old["valid_until"] is not None and old["valid_until"] < until:
                until = old["valid_until"]
            conn.execute(
                "UPDATE memories SET status = 'superseded', valid_until = ?, invalidated_at = ? "
                "WHERE id = ? AND project = ? AND status = 'active'",
                (until, now, old["id"], project),
            )
            conn.execute(
                "INSERT INTO edges (src, dst, kind, project, created_at) "
                "VALUES (?, ?, 'supersedes', ?, ?)",
                (new["id"], old["id"], project, now),
            )
            outbox.enqueue(conn, project, old["id"], "meta", now)
            conn.execute(
                "UPDATE edges SET status = 'resolved', closed_at = ? WHERE kind = 'contradicts' "
                "AND status = 'open' AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?))",
                (now, old["id"], new["id"], new["id"], old["id"]),
            )
            self._audit(conn, project, "supersede", old["id"], now, by=new["id"], validUntil=until)
            old_m, new_m = records.to_memories(conn, [
                records.fetch(conn, project, old["id"]), records.fetch(conn, project, new["id"])
            ])
        self._kick()
        self._changed(project, "supersede", [old_m.id, new_m.id])
        return protocol.SupersedeResult(project=project, old=old_m, new=new_m)

    # ------------------------------------------------------------ feedback and review

    def _transition(
        self, conn: sqlite3.Connection, project: str, memory_id: str, old: str, new: str,
        cause: str, note: str | None, at: str,
    ) -> protocol.TrustTransition:
        conn.execute("UPDATE memories SET trust = ? WHERE id = ? AND project = ?",
                     (new, memory_id, project))
        conn.execute(
            "INSERT INTO trust_transitions (memory_id, project, from_trust, to_trust, cause, "
            "note, at, front) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (memory_id, project, old, new, cause, note, at, self.front),
        )
        outbox.enqueue(conn, project, memory_id, "meta", at)
        self._audit(conn, project, "trust", memory_id, at, fromTrust=old, toTrust=new,
                    cause=cause)
        return protocol.TrustTransition(
            memory_id=memory_id, from_trust=old, to_trust=new, cause=cause, note=note, at=at
        )

    def feedback(self, params: protocol.FeedbackParams) -> protocol.FeedbackResult:
        project = project_key(params.project)
        query = self._text(params.query, "query", required=False)
        now = self.clock()
        with self._write() as conn:
            row = self._require(conn, project, params.id)
            delta = lifecycle.SIGNAL_DELTA[params.signal]
            score = row["feedback_score"] + delta
            conn.execute("UPDATE memories SET feedback_score = ? WHERE id = ?", (score, row["id"]))
            conn.execute(
                "INSERT INTO feedback (memory_id, project, signal, delta, score_after, query, at, "
                "front) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (row["id"], project, params.signal, delta, score, query, now, self.front),
            )
            self._audit(conn, project, "feedback", row["id"], now, signal=params.signal,
                        score=score)
            target = lifecycle.feedback_transition(row["trust"], row["feedback_score"], score)
            transition = None
            if target is not None:
                transition = self._transition(
                    conn, project, row["id"], row["trust"], target, "feedback", None, now
                )
        self._kick()
        self._changed(project, "feedback", [row["id"]])
        return protocol.FeedbackResult(
            project=project, id=row["id"], signal=params.signal, score=score,
            trust=target or row["trust"], transition=transition,
        )

    def review(self, params: protocol.ReviewParams) -> protocol.ReviewResult:
        project = project_key(params.project)
        if params.action == "list":
            listed = self.list(protocol.ListParams(project=project, trust=params.state,
                                                   limit=1000))
            return protocol.ReviewResult(project=project, action="list",
                                         memories=listed.memories)
        note = self._text(params.note, "note", required=False)
        now = self.clock()
        with self._write() as conn:
            if params.id is None:
                raise InvalidInput(f"review {params.action} needs a memory id", field="id")
            row = self._require(conn, project, params.id)
            target = lifecycle.review_target(params.action, row["trust"], row["id"])
            transition = self._transition(
                conn, project, row["id"], row["trust"], target, params.action, note, now
            )
            memory = self._memory(conn, project, row["id"])
        self._kick()
        self._changed(project, "review", [memory.id])
        return protocol.ReviewResult(
            project=project, action=params.action, memories=[memory], transition=transition
        )

    # ------------------------------------------------------------ forgetting

    def forget(self, params: protocol.ForgetParams) -> protocol.ForgetResult:
        project = project_key(params.project)
        now = self.clock()
        with self._write() as conn:
            row = self._require(conn, project, params.id)
            self._forget_row(conn, row, params.reason, now)
        self._kick()
        self._changed(project, "forget", [row["id"]])
        return protocol.ForgetResult(project=project, id=row["id"], reason=params.reason, at=now)

    def _forget_row(self, conn: sqlite3.Connection, row: sqlite3.Row, reason: str, at: str) -> None:
        project = row["project"]
        conn.execute(
            "INSERT INTO forgetting_log (memory_id, project, reason, preview, type, at, front) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (row["id"], project, reason, textnorm.preview(row["content"]), row["type"], at,
             self.front),
        )
        conn.execute(
            "INSERT INTO tombstones (project, canonical_hash, memory_id, reason, at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (project, canonical_hash) DO UPDATE SET "
            "memory_id = excluded.memory_id, reason = excluded.reason, at = excluded.at",
            (project, row["canonical_hash"], row["id"], reason, at),
        )
        conn.execute("DELETE FROM memories WHERE id = ? AND project = ?", (row["id"], project))
        outbox.enqueue(conn, project, row["id"], "delete", at)
        self._audit(conn, project, "forget", row["id"], at, reason=reason)

    def forgotten(self, params: protocol.ForgottenParams) -> protocol.ForgottenResult:
        project = project_key(params.project)
        clauses, args = ["project = ?"], [project]
        if params.reason is not None:
            clauses.append("reason = ?")
            args.append(params.reason)
        rows = self.db.read(
            f"SELECT memory_id, project, reason, preview, type, at, front FROM forgetting_log "
            f"WHERE {' AND '.join(clauses)} ORDER BY seq DESC LIMIT ?",
            (*args, params.limit),
        )
        return protocol.ForgottenResult(
            project=project, entries=[protocol.ForgetEntry(**dict(row)) for row in rows]
        )

    # ------------------------------------------------------------ introspection

    def stats(self, params: protocol.StatsParams) -> protocol.StatsResult:
        project = project_key(params.project)

        def counts(column: str) -> dict[str, int]:
            rows = self.db.read(
                f"SELECT {column} AS k, count(*) AS n FROM memories WHERE project = ? "
                f"GROUP BY {column} ORDER BY {column}",
                (project,),
            )
            return {row["k"]: row["n"] for row in rows}

        def count(table: str, extra: str = "") -> int:
            return self.db.read(
                f"SELECT count(*) FROM {table} WHERE project = ? {extra}", (project,)
            )[0][0]

        by_status = counts("status")
        by_trust = counts("trust")
        return protocol.StatsResult(
            project=project,
            memories=sum(by_status.values()),
            by_status=by_status,
            by_trust=by_trust,
            by_type=counts("type"),
            review_queue=by_trust.get("flagged", 0),
            forgotten=count("forgetting_log"),
            tombstones=count("tombstones"),
            feedback_signals=count("feedback"),
            dead_letters=count("dead_letters", "AND resolved_at IS NULL"),
            schema_version=self.db.version,
            data_dir=str(self.directory),
            index_pending=count("outbox"),
            degraded=self.degraded(),
        )

    # ------------------------------------------------------------ contradictions

    def _after_index(self, project: str, rows: list, vectors) -> None:
        """Runs on the indexer thread after new memories are embedded: detect, record, tell."""
        from memls.conflicts import detector, resolver

        for row, findings in zip(rows, detector.detect_all(self, rows, vectors)):
            if not findings:
                continue
            now = self.clock()
            written = []
            with self._write() as conn:
                if records.fetch(conn, project, row["id"]) is None:
                    continue  # forgotten meanwhile
                for f in findings:
                    if records.fetch(conn, project, f.older["id"]) is None:
                        continue  # forgotten between the scoring and this transaction
                    if resolver.record(conn, project, f.newer, f.older, f.verdict, now):
                        written.append(f)
                        self._audit(conn, project, "conflict_detected", f.newer["id"], now,
                                    older=f.older["id"],
                                    confidence=round(f.verdict.confidence, 4))
            for f in written:
                if (self.settings.auto_supersede
                        and resolver.proposes_supersede(f.verdict, f.newer, f.older)):
                    try:
                        self.resolve(protocol.ResolveParams(
                            a=f.newer["id"], b=f.older["id"], action="supersede",
                            project=project, note="auto_supersede"))
                    except MemlsError as exc:
                        log.warning("auto supersede failed: %s", exc)
            if written:
                found = self.conflicts(protocol.ConflictsParams(project=project, id=row["id"]))
                self._notify("memory/conflicts", protocol.ConflictsNotification(
                    project=project, id=row["id"], conflicts=found.conflicts))

    def _notify(self, method: str, payload: Any) -> None:
        """Tell the listeners, once the write that caused it has committed: a change made
        inside an outer transaction (resolve -> supersede) that rolls back is never announced."""
        self.db.after_commit(lambda: self._deliver(method, payload))

    def _deliver(self, method: str, payload: Any) -> None:
        for listener in list(self.listeners):
            try:
                listener(method, payload)
            except Exception:  # noqa: BLE001 - a front's failure is not the engine's
                log.exception("listener failed for %s", method)

    def _conflict(self, conn: sqlite3.Connection, edge: sqlite3.Row) -> protocol.Conflict:
        detail = json.loads(edge["detail"])
        newer, older = records.to_memories(conn, [
            records.fetch(conn, edge["project"], detail["newer"]),
            records.fetch(conn, edge["project"], detail["older"]),
        ])
        return protocol.Conflict(
            project=edge["project"], status=edge["status"], confidence=edge["confidence"],
            similarity=detail["similarity"], similarity_source=detail["similaritySource"],
            signals=[protocol.Signal(**s) for s in detail["signals"]],
            newer=newer, older=older, detected_at=edge["created_at"],
            proposal=detail.get("proposal"), closed_at=edge["closed_at"],
        )

    def conflicts(self, params: protocol.ConflictsParams) -> protocol.ConflictsResult:
        """Detected contradictions of the project (one entry per pair)."""
        project = project_key(params.project)
        clauses, args = ["e.project = ?", "e.kind = 'contradicts'",
                         "e.src = json_extract(e.detail, '$.newer')"], [project]
        if params.status is not None:
            clauses.append("e.status = ?")
            args.append(params.status)
        if params.id is not None:
            clauses.append("(e.src = ? OR e.dst = ?)")
            args += [params.id.strip(), params.id.strip()]
        with self.db.transaction(write=False) as conn:
            edges = conn.execute(
                f"SELECT e.* FROM edges e WHERE {' AND '.join(clauses)} "
                "ORDER BY e.created_at DESC, e.src LIMIT ?",
                (*args, params.limit),
            ).fetchall()
            return protocol.ConflictsResult(
                project=project, conflicts=[self._conflict(conn, e) for e in edges])

    def resolve(self, params: protocol.ResolveParams) -> protocol.ResolveResult:
        """Dismiss (remembered by content), resolve, or supersede the older by the newer."""
        from memls.conflicts import resolver

        project = project_key(params.project)
        note = self._text(params.note, "note", required=False)
        now = self.clock()
        with self._write() as conn:
            a = self._require(conn, project, params.a, "a")
            b = self._require(conn, project, params.b, "b")
            edge = conn.execute(
                "SELECT * FROM edges WHERE kind = 'contradicts' AND src = ? AND dst = ?",
                (a["id"], b["id"]),
            ).fetchone()
            if edge is None:
                raise NotFound(f"no contradiction between {a['id']} and {b['id']}", field="b")
            detail = json.loads(edge["detail"])
            if params.action == "supersede":
                self.supersede(protocol.SupersedeParams(
                    old=detail["older"], by=detail["newer"], project=project))
            if params.action == "dismiss":
                resolver.remember_dismissal(conn, project, a["canonical_hash"],
                                            b["canonical_hash"], now, note)
            status = "dismissed" if params.action == "dismiss" else "resolved"
            resolver.close(conn, a["id"], b["id"], status, now)
            self._audit(conn, project, f"conflict_{status}", detail["newer"], now,
                        older=detail["older"], action=params.action)
            edge = conn.execute(
                "SELECT * FROM edges WHERE kind = 'contradicts' AND src = ? AND dst = ?",
                (detail["newer"], detail["older"]),
            ).fetchone()
            conflict = self._conflict(conn, edge)
        self._kick()
        return protocol.ResolveResult(project=project, conflict=conflict)

    def check_pair(self, params: protocol.CheckPairParams) -> protocol.Verdict:
        """The verdict for one pair of texts, gated by the embedder's cosine when it runs."""
        from memls.conflicts.scorer import score_pair

        new = self._text(params.new, "new")
        existing = self._text(params.existing, "existing")
        cosine = None
        if self.models is not None:
            try:
                vectors = self.models.embedder.embed([new, existing])
                cosine = float(vectors[0] @ vectors[1])
            except MemlsError:
                cosine = None  # the lexical gate; the verdict says "lexical"
        return score_pair(new, existing, similarity=cosine, similarity_kind="cosine")

    def health(self, params: protocol.HealthParams | None = None) -> protocol.HealthResult:
        from memls import __version__

        models = self._model_states()
        degraded = self.degraded()
        return protocol.HealthResult(
            ok=not degraded, version=__version__, data_dir=str(self.directory),
            schema_version=self.db.version, vectors=self.vectors_enabled, models=models,
            degraded=degraded, index_pending=self.indexer.pending() if self.indexer else 0)

    def _model_states(self) -> dict[str, Any]:
        if self.models is None:
            return {}
        return {s.name: protocol.to_wire(s) for s in (
            self.models.embedder.status(), self.models.reranker.status())}

    def degraded(self) -> list[str]:
        """Every reason retrieval is weaker than configured; empty when all is well."""
        if self.models is None:
            return ["vector search and reranking are switched off (vectors = false)"]
        problems = []
        for status in (self.models.embedder.status(), self.models.reranker.status()):
            if status.state not in ("loaded", "not_loaded", "disabled"):
                problems.append(f"{status.name} {status.state}: {status.error or ''}".strip())
        if self.indexer is not None and self.indexer.last_error:
            problems.append(f"indexing is failing: {self.indexer.last_error}")
        return problems

    # ------------------------------------------------------------ the vector copy

    def reindex(self, params: protocol.ReindexParams) -> protocol.ReindexResult:
        """Rebuild the project's Chroma collection from SQLite."""
        project = project_key(params.project)
        if self.index is None:
            raise Refused("vectors are switched off (settings: [index] vectors = false)")
        self.worker.flush(timeout=600)
        self.index.drop(project)
        with self._write() as conn:
            conn.execute("DELETE FROM outbox WHERE project = ?", (project,))
            queued = outbox.enqueue_project(conn, project, self.clock())
        self._kick()
        return protocol.ReindexResult(project=project, queued=queued,
                                      indexed=self.worker.flush(timeout=3600))

    def doctor(self, params: protocol.DoctorParams) -> protocol.DoctorResult:
        """Compare SQLite and Chroma for the project, and report the models' state."""
        from memls.index.chroma import metadata

        project = project_key(params.project)
        problems = list(self.degraded())
        rows = self.db.read(f"SELECT {records.COLUMNS} FROM memories m WHERE m.project = ?",
                            (project,))
        pending_ids = {r["memory_id"] for r in self.db.read(
            "SELECT memory_id FROM outbox WHERE project = ?", (project,))}
        models = self._model_states()
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
                i for i, meta in expected.items()
                if i in in_chroma and i not in pending_ids
                and any(in_chroma[i].get(k) != v for k, v in meta.items())
            )
            for label, ids in (("missing from", missing), ("extra in", extra),
                               ("out of date in", stale)):
                if ids:
                    problems.append(f"{len(ids)} memories {label} the vector index "
                                    "(run memls reindex)")
        return protocol.DoctorResult(
            project=project, ok=not problems, problems=problems, models=models,
            memories=len(rows), indexed=indexed, pending=len(pending_ids), missing=missing,
            extra=extra, stale=stale,
        )

    def audit(self, params: protocol.AuditParams) -> protocol.AuditResult:
        project = project_key(params.project)
        clauses, args = ["project = ?"], [project]
        if params.id is not None:
            clauses.append("memory_id = ?")
            args.append(params.id.strip())
        rows = self.db.read(
            f"SELECT seq, at, project, memory_id, op, front, detail FROM audit "
            f"WHERE {' AND '.join(clauses)} ORDER BY seq DESC LIMIT ?",
            (*args, params.limit),
        )
        entries = [
            protocol.AuditEntry(
                **{k: row[k] for k in ("seq", "at", "project", "memory_id", "op", "front")},
                detail=json.loads(row["detail"]) if row["detail"] else None,
            )
            for row in rows
        ]
        return protocol.AuditResult(project=project, entries=entries)

    # ------------------------------------------------------------ maintenance

    def maintain(self, params: protocol.MaintainParams) -> protocol.MaintainResult:
        from memls import maintenance

        return maintenance.run(self, project_key(params.project))

    def dead_letters(self, params: protocol.MaintainParams) -> protocol.DeadLettersResult:
        from memls import maintenance

        project = project_key(params.project)
        return protocol.DeadLettersResult(project=project,
                                          failed=maintenance.open_letters(self, project))

    # ------------------------------------------------------------ export / import

    def export(self, project: str | None) -> Iterator[dict[str, Any]]:
        from memls import transfer

        return transfer.export(self, project_key(project))

    def import_(self, project: str | None, lines: Iterable[str]) -> dict[str, int]:
        from memls import transfer

        counts = transfer.import_lines(self, project_key(project), lines)
        self._kick()
        return counts
