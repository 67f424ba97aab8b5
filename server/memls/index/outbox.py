"""The indexer: applies the outbox (`store.outbox`) to Chroma and deletes the rows it applied.
A crash between the two leaves the row, and the next drain (start-up included) applies it
again: upserts are idempotent, so the index converges."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import numpy as np

from memls.index.chroma import VectorIndex, metadata
from memls.models.late import MODEL_TAG, pack
from memls.store.unit import Store

if TYPE_CHECKING:
    from memls.models import Embedder, LateEncoder

log = logging.getLogger("memls.index")


AfterIndex = Callable[[str, list[sqlite3.Row], Any], None]

#: Batches encoded ahead of the one being checked: with two the models always have work while
#: a batch is checked (Python), and the batch after it is encoded by the time it comes.
AHEAD = 2
#: Texts one encoding started ahead holds: a check's pair readings wait behind one of them.
PIECE = 32


class Indexer:
    """Applies outbox rows to the vector index, one batch at a time, one drain at a time.

    With vectors off (`index` None) the rows are consumed without a Chroma write. Either way,
    `after_index(project, new rows, their vectors or None)` runs once per new memory: the
    write-time contradiction check. When the embedder is unavailable the rows stay in the
    outbox for the index, and the check runs without vectors (once per memory and process).
    """

    def __init__(
        self,
        store: Store,
        index: VectorIndex | None,
        embedder: Embedder | None,
        after_index: AfterIndex | None = None,
        late: LateEncoder | None = None,
    ) -> None:
        self.store = store
        self.queue = store.queue
        self.tokens = store.tokens
        self.index = index
        self.embedder = embedder
        self.late = late  # token vectors for late interaction (None: not kept)
        self._late_error: str | None = None
        self.after_index = after_index
        self._checked: set[str] = set()
        # memory id -> (content, its batch's bge vectors, its batch's token vectors, its place
        # in that batch), encoded ahead: the next batch's encoders run on the model pool while
        # this batch is checked (Python)
        self._ahead: dict[str, tuple[str, Future[Any], Future[Any] | None, int]] = {}
        self.stopping = False  # set by the worker's stop(): finish the batch, take no more
        self._lock = threading.Lock()
        self.last_error: str | None = None

    def pending(self, project: str | None = None) -> int:
        return self.queue.pending(project)

    def drain(
        self, batch: int = 128, limit: int | None = None, go_on: Callable[[], bool] | None = None
    ) -> int:
        """Apply pending rows; returns how many were applied. Raises what stopped it.
        `go_on` is asked before each batch: False stops the drain there."""
        done = 0
        with self._lock:
            while (
                (limit is None or done < limit) and not self.stopping and (go_on is None or go_on())
            ):
                rows = self.queue.next_batch(batch)
                if not rows:
                    break
                try:
                    self._apply(rows, batch)
                except Exception as exc:
                    self.last_error = f"{type(exc).__name__}: {exc}"
                    self.queue.failed([r["seq"] for r in rows], self.last_error)
                    raise
                self.queue.done([r["seq"] for r in rows])
                done += len(rows)
                self.last_error = None
            self._ahead.clear()  # what was encoded ahead and not used (stopped, limit)
        return done

    def _by_project(self, rows: list[sqlite3.Row]) -> dict[str, dict[str, set[str]]]:
        by_project: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for row in rows:
            by_project[row["project"]][row["memory_id"]].add(row["op"])
        return by_project

    def _encode_ahead(self, rows: list[sqlite3.Row], size: int) -> None:
        """Start encoding the memories of the AHEAD batches behind `rows` (both encoders, on
        the model pool, after any work a caller waits for, in pieces of PIECE texts) so that
        they run while this batch is checked, and a check's own model work waits behind one
        piece at most."""
        if self.embedder is None or self.index is None or not rows:
            return
        following = self.queue.next_batch(AHEAD * size, after=rows[-1]["seq"])
        for project, ops in self._by_project(following).items():
            wanted = [i for i, o in ops.items() if "index" in o and i not in self._ahead]
            if not wanted:
                continue
            with self.store.read(project) as tx:
                current = tx.memories.fetch_many(wanted)
            # by length, so that a piece's texts pad to about the same width
            fresh = sorted((current[i] for i in wanted if i in current), key=_length)
            for start in range(0, len(fresh), PIECE):
                piece = fresh[start : start + PIECE]
                texts = [r["content"] for r in piece]
                vectors = self.embedder.submit(texts, later=True)
                tokens = None if self.late is None else self.late.submit(texts, later=True)
                for k, r in enumerate(piece):
                    self._ahead[r["id"]] = (r["content"], vectors, tokens, k)

    def _encoded(self, fresh: list[sqlite3.Row]) -> tuple[_Picked, _Picked | None] | None:
        """The encodings started ahead for exactly these rows (same texts), or None."""
        got = [self._ahead.pop(r["id"], None) for r in fresh]
        picked = [g for g, r in zip(got, fresh) if g is not None and g[0] == r["content"]]
        if len(picked) < len(fresh):
            return None
        vectors = _Picked([(g[1], g[3]) for g in picked])
        tokens = [(g[2], g[3]) for g in picked if g[2] is not None]
        return vectors, (_Picked(tokens) if len(tokens) == len(picked) else None)

    def _apply(self, rows: list[sqlite3.Row], size: int = 128) -> None:
        by_project = self._by_project(rows)
        for project, ops in by_project.items():
            ids = list(ops)
            with self.store.read(project) as tx:
                current = tx.memories.fetch_many(ids)
            gone = [i for i in ids if i not in current]
            fresh = [current[i] for i in ids if i in current and "index" in ops[i]]
            meta = [current[i] for i in ids if i in current and "index" not in ops[i]]
            vectors = None
            if self.index is not None and self.embedder is not None:
                self.index.delete(project, gone)
                self.tokens.delete(project, gone)
                if fresh:
                    ahead = self._encoded(fresh)
                    # the token vectors encode on the pool's other thread meanwhile
                    tokens: Future[list[Any]] | _Picked | None = (
                        self._submit_tokens(fresh)
                        if ahead is None or ahead[1] is None
                        else ahead[1]
                    )
                    try:
                        if ahead is not None:
                            vectors = np.stack(ahead[0].result())
                        else:
                            vectors = self.embedder.embed([r["content"] for r in fresh])
                    except Exception:
                        self._check(project, fresh, None)  # detection does not wait for it
                        raise
                    self._encode_ahead(rows, size)
                    # checked before the batch is in the index, so the nearest it finds there
                    # are earlier memories (the detector adds the batch's own); the token
                    # vectors keep encoding meanwhile
                    self._check(project, fresh, vectors)
                    self.index.upsert(
                        project, [r["id"] for r in fresh], vectors, [metadata(r) for r in fresh]
                    )
                    self._token_vectors(project, fresh, tokens)
                self.index.update_meta(
                    project, [r["id"] for r in meta], [metadata(r) for r in meta]
                )
            if vectors is None:
                self._check(project, fresh, None)

    def _submit_tokens(self, rows: list[sqlite3.Row]) -> Future[list[Any]] | None:
        return None if self.late is None else self.late.submit([r["content"] for r in rows])

    def _token_vectors(
        self, project: str, rows: list[sqlite3.Row], encoding: Future[list[Any]] | _Picked | None
    ) -> None:
        """The late-interaction token vectors of new memories (encoded on the model pool). A
        missing or failing model leaves them absent: queries say so (degraded) and `doctor`
        counts them; `reindex` rebuilds them once the model is back. Chroma's copy does not
        wait for them."""
        if encoding is None:
            return
        try:
            encoded = encoding.result()
        except Exception as exc:  # noqa: BLE001 - degraded loudly, not a reason to stop indexing
            error = f"{type(exc).__name__}: {exc}"
            if error != self._late_error:
                log.warning("token vectors not computed (late interaction): %s", error)
                self._late_error = error
            return
        self._late_error = None
        self.tokens.put(
            project, MODEL_TAG, [(r["id"], len(t), pack(t)) for r, t in zip(rows, encoded)]
        )

    def _check(self, project: str, rows: list[sqlite3.Row], vectors: Any) -> None:
        if self.after_index is None:
            return
        todo = [
            (i, r)
            for i, r in enumerate(rows)
            if r["id"] not in self._checked or vectors is not None
        ]
        if not todo:
            return
        picked = [r for _, r in todo]
        picked_vectors = None if vectors is None else vectors[[i for i, _ in todo]]
        self.after_index(project, picked, picked_vectors)
        self._checked.update(r["id"] for r in picked)


def _length(row: sqlite3.Row) -> int:
    return len(row["content"])


class _Picked:
    """Items of batch encodings started ahead (each whole a Future of a list or array), taken
    when `result()` is asked for: the caller waits only then."""

    def __init__(self, picks: list[tuple[Future[Any], int]]) -> None:
        self.picks = picks

    def result(self) -> list[Any]:
        return [whole.result()[k] for whole, k in self.picks]
