"""`memls doctor --repair`: rebuild the vector index from SQLite where it disagrees."""

from __future__ import annotations

from typing import Any

from memls import protocol
from memls.daemon.handle import LocalEngine
from memls.index import integrity


def repair_index(engine: Any, project: str) -> list[str]:
    """What was repaired, one line each. Owning the store: every project, and a Chroma store
    that will not open is moved aside first. Through the owner's socket: this project."""
    if isinstance(engine, LocalEngine):
        return integrity.check(engine, repair=True)
    report = engine.doctor(protocol.DoctorParams(project=project))
    if not integrity.disagrees(report):
        return []
    engine.reindex(protocol.ReindexParams(project=project))
    return [report.project]
