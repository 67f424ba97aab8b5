"""The process heap on glibc: fewer malloc arenas, and freed memory handed back to the system.

Both are no-ops (False) off glibc. Measured with `python benchmarks/latency.py` (peak RSS) and
the numbers in docs/benchmarks.md.
"""

from __future__ import annotations

import ctypes
import functools
import sys

_M_ARENA_MAX = -8


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


@functools.cache
def limit_malloc_arenas(arenas: int = 2) -> bool:
    """Cap glibc's per-thread malloc arenas (by default 8 per core). The model pool, the
    indexer and the server's threads each grew their own: measured on 2,000 memories ingested
    and 100 queries, peak RSS 434 -> 400 MB with 2."""
    libc = _libc()
    try:
        return bool(libc is not None and libc.mallopt(_M_ARENA_MAX, arenas))
    except AttributeError:
        return False


def trim() -> bool:
    """Return free heap pages to the system, e.g. after a burst of indexing (the RSS of a
    10k ingest). Takes a few ms; call it when a worker goes idle."""
    libc = _libc()
    try:
        return bool(libc is not None and libc.malloc_trim(0))
    except AttributeError:
        return False
