"""The models' own threads: inference never runs on a caller's pool (pygls reads stdin on its
own pool; a 1 s inference there held a ping for 1.1 s).

Two kinds of work share them: what a caller waits for (`run`, `submit`, `arun`: a query's
embedding, a contradiction check's pair readings) and what is started ahead of need (`later`:
the indexer's encodings of its next batch). A thread that frees takes the oldest waiting work
of the first kind before any of the second, so a bulk indexing keeps the models busy without
making a query, or its own check, wait behind it (an import of 10,000 memories took a third
less time once the encodings ran two batches ahead: benchmarks/omega_import.py)."""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

THREAD_PREFIX = "memls-models"
_local = threading.local()

NOW, LATER = 0, 1  # the two kinds of work, in the order a free thread takes them
_STOP = 2  # after everything: a thread that takes it ends

_Work = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class ModelPool:
    """`max_workers` threads, started one a piece of work until all are."""

    def __init__(self, max_workers: int = 2, thread_name_prefix: str = THREAD_PREFIX) -> None:
        self.max_workers = max_workers
        self.prefix = thread_name_prefix
        self._queue: queue.PriorityQueue[tuple[int, int, _Work | None]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    @staticmethod
    def on_pool() -> bool:
        return getattr(_local, "on_pool", False)

    def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run on the pool and wait; direct when already on a pool thread (no self-deadlock)."""
        if self.on_pool():
            return fn(*args, **kwargs)
        return self._put(NOW, fn, args, kwargs).result()

    def submit(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Start on the pool and return at once (the caller does other work meanwhile)."""
        if self.on_pool():
            return _done(fn, args, kwargs)
        return self._put(NOW, fn, args, kwargs)

    def later(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """As `submit`, for work started ahead of need: run once no waited-for work waits."""
        if self.on_pool():
            return _done(fn, args, kwargs)
        return self._put(LATER, fn, args, kwargs)

    async def arun(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.wrap_future(self._put(NOW, fn, args, {}))

    def shutdown(self, wait: bool = True) -> None:
        """No more work; what waits is cancelled, what runs finishes (waited for if `wait`)."""
        with self._lock:
            if self._closed:
                threads: list[threading.Thread] = []
            else:
                self._closed = True
                threads = list(self._threads)
            while True:
                try:
                    _, _, work = self._queue.get_nowait()
                except queue.Empty:
                    break
                if work is not None:
                    work[0].cancel()
            for _ in threads:
                self._queue.put((_STOP, next(self._order), None))
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()

    def _put(
        self, kind: int, fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._queue.put((kind, next(self._order), (future, fn, args, kwargs)))
            if len(self._threads) < self.max_workers:
                thread = threading.Thread(
                    target=self._work, name=f"{self.prefix}_{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    def _work(self) -> None:
        _local.on_pool = True
        while True:
            _, _, work = self._queue.get()
            if work is None:
                return
            future, fn, args, kwargs = work
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
                    future.set_exception(exc)
            del work, future, fn, args, kwargs  # nothing of it kept while waiting


def _done(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Future[T]:
    """`fn` run here, as a finished Future."""
    done: Future[T] = Future()
    try:
        done.set_result(fn(*args, **kwargs))
    except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
        done.set_exception(exc)
    return done
