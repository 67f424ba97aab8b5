"""The circuit breaker alone: pure state driven by a fake clock."""

from __future__ import annotations

import pytest

from memls.models.breaker import CircuitBreaker


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def fail(breaker: CircuitBreaker, times: int) -> None:
    for _ in range(times):
        assert breaker.allow()
        breaker.record_failure()


def test_closed_until_three_failures(clock: FakeClock) -> None:
    breaker = CircuitBreaker(clock=clock)
    fail(breaker, 2)
    assert breaker.state == "closed"
    assert breaker.failures == 2
    fail(breaker, 1)
    assert breaker.state == "open"
    assert not breaker.allow()
    assert breaker.retry_in() == pytest.approx(300.0)


def test_success_resets_the_count(clock: FakeClock) -> None:
    breaker = CircuitBreaker(clock=clock)
    fail(breaker, 2)
    breaker.record_success()
    fail(breaker, 2)
    assert breaker.state == "closed"
    assert breaker.failures == 2


def test_open_for_five_minutes_then_one_try(clock: FakeClock) -> None:
    breaker = CircuitBreaker(clock=clock)
    fail(breaker, 3)
    clock.now += 299.9
    assert breaker.state == "open"
    assert not breaker.allow()
    clock.now += 0.1
    assert breaker.state == "half_open"
    assert breaker.retry_in() == 0.0
    assert breaker.allow()  # the one try
    assert not breaker.allow()  # nobody else while it runs


def test_half_open_failure_reopens_for_another_cooldown(clock: FakeClock) -> None:
    breaker = CircuitBreaker(clock=clock)
    fail(breaker, 3)
    clock.now += 300
    fail(breaker, 1)
    assert breaker.state == "open"
    assert breaker.failures == 4
    assert breaker.retry_in() == pytest.approx(300.0)
    clock.now += 300
    assert breaker.allow()


def test_half_open_success_closes(clock: FakeClock) -> None:
    breaker = CircuitBreaker(clock=clock)
    fail(breaker, 3)
    clock.now += 300
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == "closed"
    assert breaker.failures == 0
    assert breaker.allow() and breaker.allow()


def test_custom_threshold_and_cooldown(clock: FakeClock) -> None:
    breaker = CircuitBreaker(threshold=1, cooldown_s=10, clock=clock)
    fail(breaker, 1)
    assert breaker.state == "open"
    clock.now += 10
    assert breaker.state == "half_open"


@pytest.mark.parametrize(("threshold", "cooldown"), [(0, 300.0), (3, -1.0)])
def test_rejects_nonsense_settings(threshold: int, cooldown: float) -> None:
    with pytest.raises(ValueError):
        CircuitBreaker(threshold=threshold, cooldown_s=cooldown)
