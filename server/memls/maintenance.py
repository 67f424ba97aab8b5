"""Maintenance passes: expiry by valid_until and per-type TTL, with a dead-letter queue.

Each memory is expired in a transaction of its own. One that fails is written to
`dead_letters` (operation, memory, error, attempts, times) and retried on the next run; it is
never dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from memls import protocol, timeutil
from memls.store.unit import Store


def due(store: Store, project: str, now: str, ttl_days: Mapping[str, float]) -> dict[str, str]:
    """memory id -> operation, for every active memory of the project whose time is up."""
    moment = datetime.fromisoformat(now.replace("Z", "+00:00"))
    with store.read(project) as tx:
        found = dict.fromkeys(tx.memories.due_by_valid_until(now), "expire_valid_until")
        for type_name, days in sorted(ttl_days.items()):
            cutoff = timeutil.format_ts(moment - timedelta(days=days))
            for memory_id in tx.memories.due_by_age(type_name, cutoff):
                found.setdefault(memory_id, "expire_ttl")
    return found


def run(
    store: Store, project: str, *, now: str, front: str, ttl_days: Mapping[str, float]
) -> protocol.MaintainResult:
    """Expire what is due (and retry what failed before); `expired` lists what went."""
    todo = due(store, project, now, ttl_days)
    with store.read(project) as tx:
        retry = tx.dead_letters.open_ids()
    expired: list[str] = []
    failed = 0
    for memory_id, operation in {**retry, **todo}.items():
        try:
            with store.write(project, front) as tx:
                row = tx.memories.fetch(memory_id)
                if row is not None:
                    tx.forget(row, "ttl_expired", now)
                    expired.append(memory_id)
                tx.dead_letters.resolve(memory_id, now)
        except Exception as exc:  # noqa: BLE001 - recorded, retried next run: never dropped
            failed += 1
            with store.write(project, front) as tx:
                tx.dead_letters.record_failure(
                    operation, memory_id, f"{type(exc).__name__}: {exc}", now
                )
    with store.write(project, front) as tx:
        tx.dead_letters.record_run(now, len(expired), failed)
    return protocol.MaintainResult(
        project=project, expired=expired, retried=len(retry), failed=open_letters(store, project)
    )


def open_letters(store: Store, project: str) -> list[protocol.DeadLetter]:
    with store.read(project) as tx:
        return [protocol.DeadLetter(**dict(row)) for row in tx.dead_letters.open_letters()]
