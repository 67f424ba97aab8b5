"""The models' threads: work a caller waits for goes before work started ahead of need."""

from __future__ import annotations

import threading

import pytest

from memls.models import ModelPool


def test_waited_for_work_goes_before_work_started_ahead() -> None:
    pool = ModelPool(max_workers=1)
    busy, release = threading.Event(), threading.Event()
    done: list[str] = []

    def hold() -> None:
        busy.set()
        release.wait()
        done.append("running")

    try:
        first = pool.later(hold)
        assert busy.wait(10)  # the one thread is taken
        ahead = [pool.later(done.append, f"ahead {n}") for n in range(3)]
        waited = pool.submit(done.append, "waited for")
        release.set()
        waited.result(timeout=10)
        for f in [first, *ahead]:
            f.result(timeout=10)
    finally:
        release.set()
        pool.shutdown()
    assert done == ["running", "waited for", "ahead 0", "ahead 1", "ahead 2"]


def test_shutdown_cancels_what_waits_and_refuses_more() -> None:
    pool = ModelPool(max_workers=1)
    busy, release = threading.Event(), threading.Event()

    def hold() -> str:
        busy.set()
        release.wait()
        return "finished"

    running = pool.submit(hold)
    assert busy.wait(10)
    waiting = pool.later(str, "never")
    pool.shutdown(wait=False)
    assert waiting.cancelled()
    with pytest.raises(RuntimeError):
        pool.submit(str, "after")
    release.set()
    assert running.result(timeout=10) == "finished"
    pool.shutdown(wait=True)  # again: nothing more to do


def test_an_error_reaches_the_caller_and_the_thread_goes_on() -> None:
    pool = ModelPool(max_workers=1)
    try:
        with pytest.raises(ZeroDivisionError):
            pool.run(lambda: 1 / 0)
        assert pool.run(lambda: "still here") == "still here"
    finally:
        pool.shutdown()
