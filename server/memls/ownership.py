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
        """The owner's pid while the lock is held, else None. The pid in the file alone is
        not trusted: a killed owner leaves it behind, and the system may give that number
        to another process."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                text = os.read(fd, 32).decode("ascii", "replace").strip()
                return int(text) if text.isdigit() else None
            fcntl.flock(fd, fcntl.LOCK_UN)  # nobody holds it: no owner
            return None
        finally:
            os.close(fd)

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # no pid left behind for a reader to trust
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
