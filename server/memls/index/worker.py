"""A background thread that drains the outbox whenever a write kicks it."""

from __future__ import annotations

import logging
import threading
import time

from memls import heap
from memls.index.outbox import Indexer

log = logging.getLogger(__name__)


class IndexWorker:
    def __init__(
        self, indexer: Indexer, *, retry_seconds: float = 5.0, gather_seconds: float = 0.02
    ) -> None:
        self.indexer = indexer
        self.retry_seconds = retry_seconds
        self.gather_seconds = gather_seconds  # let a burst of writes gather into one batch
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="memls-indexer", daemon=True)
        self._thread.start()

    def kick(self) -> None:
        self._idle.clear()
        self._wake.set()

    def _run(self) -> None:
        while not self._stop:
            self._wake.wait(timeout=self.retry_seconds)
            self._wake.clear()
            if self._stop:
                break
            time.sleep(self.gather_seconds)
            try:
                done = self.indexer.drain()
            except Exception as exc:  # noqa: BLE001 - kept in the outbox, retried later
                log.warning("indexing failed, will retry: %s", exc)
                done = 0
            if self.indexer.pending() == 0 or self.indexer.last_error:
                if done:
                    heap.trim()  # a burst of embedding and indexing is over: give memory back
                self._idle.set()

    def flush(self, timeout: float = 60.0) -> bool:
        """Wait until the outbox is empty (or indexing fails); True when empty."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.indexer.pending() == 0:
                return True
            self._idle.clear()
            self._wake.set()
            self._idle.wait(timeout=min(1.0, max(0.0, deadline - time.monotonic())))
            if self.indexer.last_error and self.indexer.pending():
                return False
        return self.indexer.pending() == 0

    def stop(self) -> None:
        """Stop after the batch in hand; returns only when the thread has ended, so that the
        owner lock is never released while this process still writes to Chroma."""
        self._stop = True
        self.indexer.stopping = True
        self._wake.set()
        self._thread.join()
        self.indexer.stopping = False
