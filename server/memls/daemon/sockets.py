"""The owner socket's file: where it is, how to bind or reach it when its path is long,
whose it is, and removing one a dead owner left."""

from __future__ import annotations

import os
import socket
import stat
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memls.errors import StoreError

SOCKET_NAME = "memls.sock"
MAX_UNIX_PATH = 100  # sun_path is 108 bytes on Linux, 104 on macOS: stay under both


def socket_path(directory: str | os.PathLike) -> Path:
    return Path(directory) / SOCKET_NAME


@contextmanager
def unix_address(path: Path) -> Iterator[str]:
    """An address bind/connect accept for `path`, even when it is longer than sun_path allows.

    A long data directory is reached through /proc/self/fd/<fd of the directory> (Linux).
    """
    if len(os.fsencode(str(path))) <= MAX_UNIX_PATH:
        yield str(path)
        return
    if not hasattr(os, "O_PATH") or not Path("/proc/self/fd").is_dir():
        raise StoreError(
            f"the socket path {path} is too long for this system; use a shorter --data-dir"
        )
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def peer_uid(sock: socket.socket) -> int | None:
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", raw)[1]
    except OSError:
        return None


def remove_stale_socket(path: Path) -> None:
    """Remove a socket file left by a dead owner. Only call this while holding the owner lock."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise StoreError(f"{path} exists and is not a socket; remove it to let memls serve")
    path.unlink(missing_ok=True)
