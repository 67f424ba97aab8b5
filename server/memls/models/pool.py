"""The models' own threads: inference never runs on a caller's pool (pygls reads stdin on its
own pool; a 1 s inference there held a ping for 1.1 s)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

THREAD_PREFIX = "memls-models"
_local = threading.local()


def _mark_pool_thread() -> None:
    _local.on_pool = True


class ModelPool:
    """A dedicated ThreadPoolExecutor; threads start on first use."""

    def __init__(self, max_workers: int = 2, thread_name_prefix: str = THREAD_PREFIX) -> None:
        self.executor = ThreadPoolExecutor(
            max_workers=max_workers,
            thread_name_prefix=thread_name_prefix,
            initializer=_mark_pool_thread,
        )

    @staticmethod
    def on_pool() -> bool:
        return getattr(_local, "on_pool", False)

    def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run on the pool and wait; direct when already on a pool thread (no self-deadlock)."""
        if self.on_pool():
            return fn(*args, **kwargs)
        return self.executor.submit(fn, *args, **kwargs).result()

    def submit(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Start on the pool and return at once (the caller does other work meanwhile)."""
        if self.on_pool():
            done: Future[T] = Future()
            try:
                done.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
                done.set_exception(exc)
            return done
        return self.executor.submit(fn, *args, **kwargs)

    async def arun(self, fn: Callable[..., T], *args: object) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, fn, *args)

    def shutdown(self, wait: bool = True) -> None:
        self.executor.shutdown(wait=wait, cancel_futures=True)
