"""Exactly one process owns a data directory: a lock file beside the store."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from memls.errors import StoreError

LOCK_NAME = "owner.lock"


class OwnerLock:
    """An exclusive flock on <data dir>/owner.lock, held for the owner's lifetime."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, wait_seconds: float = 10.0) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self.holder()
                    os.close(fd)
                    raise StoreError(
                        f"the data directory {self.path.parent} is owned by another memls "
                        f"process{f' (pid {holder})' if holder else ''}; stop it or use "
                        "another --data-dir"
                    ) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def holder(self) -> int | None:
        try:
            text = self.path.read_text().strip()
            return int(text) if text else None
        except (OSError, ValueError):
            return None

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
