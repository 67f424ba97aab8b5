"""What each model is doing, for health / doctor / stats, and the one error callers catch."""

from __future__ import annotations

from typing import Literal

import msgspec

from memls.errors import MemlsError

ModelState = Literal["not_loaded", "loaded", "missing", "failed", "open_circuit", "disabled"]
ModelSource = Literal["configured", "packaged"]


class ModelStatus(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One model's state. Anything but "not_loaded" / "loaded" is a degraded state to report.

    - not_loaded: found at `path`, will load on first use.
    - missing: no usable folder (configured one absent or incomplete, no packaged model).
    - failed: the last load raised; `error` says why; the next call tries again.
    - open_circuit: `failures` loads in a row failed; no new try for `retry_in_s` seconds.
    - disabled: switched off by configuration (reranker: MEMLS_RERANK=0 or rerank=False).
    """

    name: str
    state: ModelState
    path: str | None = None
    source: ModelSource | None = None
    error: str | None = None
    load_ms: float | None = None
    failures: int = 0
    retry_in_s: float | None = None
    dim: int | None = None


class ModelUnavailable(MemlsError):
    """A model cannot run (missing, failed, circuit open, disabled). Never answered with fake
    output: callers catch this and degrade (e.g. BM25 only, no re-ordering) and say so."""

    kind = "model_unavailable"

    def __init__(self, status: ModelStatus) -> None:
        detail = status.error or status.state
        if status.retry_in_s is not None:
            detail += f"; next try in {status.retry_in_s:.0f} s"
        super().__init__(f"{status.name} unavailable ({status.state}): {detail}")
        self.status = status
