"""Repeated queries are free: the answers of memory/query, per project, until that project
changes.

An entry is keyed by everything that can change an answer: the projects the query sees (its
own, plus @user with includeUser), every field of the request as it reached the engine (the
query text, k, types, validAt/asOf, mode, depth, rerank, rerankDepth, explain, and any field
added later: the key is the whole encoded params) and the retrieval configuration. An entry
dies when

- any write to the record commits (the store's `on_commit`: every unit of work), of ANY
  project: BM25's statistics (document frequencies, lengths) are those of the one FTS5
  table of every project, so a memory stored in one project moves the scores of another's
  (the property test found it);
- the indexer applies a batch to the vector copy of one of its projects, or
- time passes that can change it: a query of "now" (no validAt/asOf) ends at the next moment
  a memory of its projects enters or leaves its validity; every entry ends after
  `max_age` seconds (decay of notes moves scores slowly with time; 60 s moves one by less
  than 1e-6), or
- it is the least recently used when the cache is full.

A query that began before a write and ends after it is not stored (the generation of its
projects moved while it ran), so an answer computed on the old state never lands after the
write dropped the old entries. Answers that say they are degraded (a model failing, the index
unreadable) are not stored: they change when the cause goes away, without a write.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

MAX_AGE_SECONDS = 60.0
_ALL = "\x00every project"  # the generation every record write moves (no project key has NUL)


@dataclass
class _Entry:
    projects: tuple[str, ...]
    result: Any
    expires_us: int  # the engine clock's microseconds; served while now < expires_us


class QueryCache:
    """A bounded LRU of query answers, invalidated per project; thread-safe."""

    def __init__(
        self, capacity: int = 256, *, enabled: bool = True, max_age: float = MAX_AGE_SECONDS
    ) -> None:
        self.capacity = capacity
        self.enabled = enabled and capacity > 0
        self.max_age_us = int(max_age * 1_000_000)
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._generation: dict[str, int] = {}
        self._counts: dict[str, list[int]] = {}  # project -> [hits, misses]
        self._lock = threading.Lock()

    # ------------------------------------------------------------ reads

    def generation(self, projects: tuple[str, ...]) -> tuple[int, ...]:
        """Take this before computing an answer; `put` refuses it if a write came since."""
        with self._lock:
            return tuple(self._generation.get(p, 0) for p in (_ALL, *projects))

    def get(self, key: Hashable, now_us: int) -> Any | None:
        """The cached answer, or None (counted as a miss of the key's first project)."""
        if not self.enabled:
            return None
        project = key[0][0] if isinstance(key, tuple) and key and key[0] else ""
        with self._lock:
            counts = self._counts.setdefault(project, [0, 0])
            entry = self._entries.get(key)
            if entry is not None and now_us >= entry.expires_us:
                del self._entries[key]
                entry = None
            if entry is None:
                counts[1] += 1
                return None
            self._entries.move_to_end(key)
            counts[0] += 1
            return entry.result

    def put(
        self,
        key: Hashable,
        projects: tuple[str, ...],
        generation: tuple[int, ...],
        result: Any,
        *,
        now_us: int,
        until_us: int | None = None,
    ) -> bool:
        """Keep `result` unless a write to one of `projects` came since `generation` was
        taken; it is served until the earlier of `until_us` and now + max_age."""
        if not self.enabled:
            return False
        expires = now_us + self.max_age_us
        if until_us is not None:
            expires = min(expires, until_us)
        with self._lock:
            if tuple(self._generation.get(p, 0) for p in (_ALL, *projects)) != generation:
                return False
            self._entries[key] = _Entry(projects, result, expires)
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return True

    # ------------------------------------------------------------ writes

    def invalidate(self, project: str, record: bool = True) -> None:
        """A write committed: to the record (`record`: every answer goes, see above), or to
        the vector copy of `project` (the answers that saw it go)."""
        with self._lock:
            self._generation[project] = self._generation.get(project, 0) + 1
            if record:
                self._generation[_ALL] = self._generation.get(_ALL, 0) + 1
                self._entries.clear()
                return
            for key in [k for k, e in self._entries.items() if project in e.projects]:
                del self._entries[key]

    # ------------------------------------------------------------ stats

    def stats(self, project: str) -> tuple[int, int, int]:
        """(hits, misses, entries) of `project` (entries: answers of queries in it)."""
        with self._lock:
            hits, misses = self._counts.get(project, [0, 0])
            entries = sum(1 for e in self._entries.values() if e.projects[0] == project)
            return hits, misses, entries
