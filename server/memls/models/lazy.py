"""Load a model on first use, once, behind a lock and a circuit breaker; report its status."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from msgspec.structs import replace

from memls.models.breaker import CircuitBreaker
from memls.models.locate import locate
from memls.models.pool import ModelPool
from memls.models.session import Onnx, open_onnx
from memls.models.status import ModelStatus, ModelUnavailable

log = logging.getLogger("memls.models")
T = TypeVar("T")


class LazyModel(Generic[T]):
    """`get()` returns the loaded model or raises ModelUnavailable; never a stand-in.

    Missing folders are re-checked on every call (a stat) and do not count as failures: a model
    installed later is picked up. Load failures count toward the breaker.
    """

    def __init__(
        self,
        role: str,
        load: Callable[[Path], T],
        *,
        configured: str | os.PathLike[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        disabled_reason: str | None = None,
    ) -> None:
        self.role = role
        self._load = load
        self._configured = configured
        self._disabled_reason = disabled_reason
        self.breaker = CircuitBreaker(clock=clock)
        self._lock = threading.Lock()
        self._model: T | None = None
        self._error: str | None = None
        self._load_ms: float | None = None
        self._logged_missing: str | None = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def get(self) -> T:
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                self._try_load()
            if self._model is None:
                raise ModelUnavailable(self.status())
            return self._model

    def _try_load(self) -> None:
        if self._disabled_reason is not None:
            return
        where = locate(self.role, self._configured)
        if where.error is not None or where.path is None:
            if where.error != self._logged_missing:
                log.warning("%s missing: %s", self.role, where.error)
                self._logged_missing = where.error
            return
        if not self.breaker.allow():
            return
        started = time.perf_counter()
        try:
            model = self._load(where.path)
        except Exception as exc:  # noqa: BLE001 - any load error degrades the same way
            self._error = f"loading {where.path}: {type(exc).__name__}: {exc}"
            self.breaker.record_failure()
            log.warning(
                "%s failed (%d in a row): %s", self.role, self.breaker.failures, self._error
            )
            return
        self._load_ms = (time.perf_counter() - started) * 1000.0
        self._error = None
        self.breaker.record_success()
        self._model = model
        log.info("%s loaded from %s in %.0f ms", self.role, where.path, self._load_ms)

    def status(self) -> ModelStatus:
        if self._disabled_reason is not None:
            return ModelStatus(name=self.role, state="disabled", error=self._disabled_reason)
        where = locate(self.role, self._configured)
        base = ModelStatus(
            name=self.role,
            state="not_loaded",
            path=None if where.path is None else str(where.path),
            source=where.source,
            failures=self.breaker.failures,
        )
        model = self._model
        if model is not None:
            dim = getattr(model, "dim", None)
            return replace(base, state="loaded", load_ms=round(self._load_ms or 0.0, 1), dim=dim)
        if where.error is not None:
            return replace(base, state="missing", error=where.error)
        if self.breaker.state != "closed":
            retry = round(self.breaker.retry_in(), 1)
            return replace(base, state="open_circuit", error=self._error, retry_in_s=retry)
        if self._error is not None:
            return replace(base, state="failed", error=self._error)
        return base


class PooledModel:
    """What every packaged model shares: loaded lazily (`_lazy`) and run on the models' own
    pool (`_pool`); subclasses add their inference."""

    _pool: ModelPool
    _lazy: LazyModel[Any]
    NAME = "model"  # its name in status and health
    MAX_LENGTH = 128  # tokens a text (or a pair) is cut to
    BATCH_SIZE = 8

    def __init__(
        self,
        pool: ModelPool,
        *,
        model_dir: str | os.PathLike[str] | None = None,
        max_length: int | None = None,
        batch_size: int | None = None,
        intra_op_threads: int = 2,
        cache_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """The settings every model keeps, and its lazy loader (`_load`, run on first use)."""
        self._pool = pool
        self.max_length = self.MAX_LENGTH if max_length is None else max_length
        self.batch_size = self.BATCH_SIZE if batch_size is None else batch_size
        self.intra_op_threads = intra_op_threads
        self.cache_dir = cache_dir  # optimised graphs kept here (models.session)
        self._lazy = LazyModel(self.NAME, self._load, configured=model_dir, clock=clock)

    @property
    def budget(self) -> int:
        """Tokens one batch may hold: `batch_size` texts of the longest allowed (an encoder of
        many texts batches more of the short ones in it: `session.batches`)."""
        return self.batch_size * self.max_length

    def _load(self, folder: Path) -> Any:
        raise NotImplementedError

    def _open(self, folder: Path, strategy: str = "longest_first") -> Onnx:
        """The model in `folder` with this model's settings (`_load` calls it)."""
        return open_onnx(
            folder, self.NAME, self.max_length, self.intra_op_threads, self.cache_dir, strategy
        )

    def warm(self) -> ModelStatus:
        """Load now (on the pool) instead of on first use; never raises."""
        self._pool.run(self._warm_here)
        return self.status()

    def status(self) -> ModelStatus:
        return self._lazy.status()

    @property
    def dim(self) -> int | None:
        """Known once loaded."""
        return self._lazy.status().dim

    def _warm_here(self) -> None:
        with contextlib.suppress(ModelUnavailable):  # the status reports it
            self._lazy.get()
