"""A circuit breaker for model loading: pure state, no threads, no I/O, injectable clock.

closed --(threshold failures in a row)--> open --(cooldown elapsed)--> half_open
half_open allows exactly one try: success -> closed, failure -> open for another cooldown.
The caller serialises tries (the model's load lock); the breaker itself takes no locks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    def __init__(
        self,
        threshold: int = 3,
        cooldown_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threshold < 1 or cooldown_s < 0:
            raise ValueError("threshold must be >= 1 and cooldown_s >= 0")
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self._clock = clock
        self.failures = 0  # consecutive failures
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def state(self) -> BreakerState:
        if self._opened_at is None:
            return "closed"
        return "half_open" if self.retry_in() == 0.0 else "open"

    def retry_in(self) -> float:
        """Seconds until the next try is allowed (0.0 when a try is allowed now)."""
        if self._opened_at is None:
            return 0.0
        return max(0.0, self._opened_at + self.cooldown_s - self._clock())

    def allow(self) -> bool:
        """May the caller try now? In half_open, True once until the try is recorded."""
        state = self.state
        if state == "closed":
            return True
        if state == "open" or self._trial_in_flight:
            return False
        self._trial_in_flight = True
        return True

    def record_success(self) -> None:
        self.failures = 0
        self._opened_at = None
        self._trial_in_flight = False

    def record_failure(self) -> None:
        self.failures += 1
        self._trial_in_flight = False
        if self._opened_at is not None or self.failures >= self.threshold:
            self._opened_at = self._clock()
