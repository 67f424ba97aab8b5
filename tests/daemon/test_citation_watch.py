"""The owner watches cited files: a save on disk changes the memory's state and is announced
as memory/changed; at start it catches up on what changed while no owner ran."""

from __future__ import annotations

import threading
from pathlib import Path

from memls import protocol as p
from memls.daemon import open_engine

SOURCE = "def deploy(env):\n    run('make release', env)\n    notify(env)\n"


def _waiter(engine, op: str = "citations"):
    heard = threading.Event()
    seen: list = []

    def listen(method, payload) -> None:
        if method == "memory/changed" and payload.op == op:
            seen.append(payload)
            heard.set()

    engine.listeners.append(listen)
    return heard, seen


def test_a_save_of_a_cited_file_is_announced_with_the_new_state(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "ops.py").write_text(SOURCE)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        stored = engine.store(
            p.StoreParams(
                text="deploys run make release",
                project=str(folder),
                citations=[p.CitationSpec(path="ops.py", symbol="deploy")],
            )
        )
        watcher = engine.watcher
        assert watcher is not None and watcher.caught_up.wait(30)
        assert watcher.watching.wait(30)
        heard, seen = _waiter(engine)
        (folder / "ops.py").write_text(SOURCE.replace("release", "ship"))
        assert heard.wait(30), "no memory/changed for the edited citation"
        assert seen[0].ids == [stored.id] and seen[0].project == str(folder)
        memory = engine.get(p.GetParams(id=stored.id, project=str(folder)))
        assert memory.stale and memory.citations[0].state == "changed"

        heard.clear()
        (folder / "ops.py").write_text(SOURCE)  # back as it was: fresh again
        assert heard.wait(30)
        assert not engine.get(p.GetParams(id=stored.id, project=str(folder))).stale


def test_the_owner_catches_up_at_start(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "ops.py").write_text(SOURCE)
    data = tmp_path / "data"
    with open_engine(data, front="test", vectors=False) as engine:  # no watcher: not serving
        stored = engine.store(
            p.StoreParams(
                text="deploys run make release",
                project=str(folder),
                citations=[p.CitationSpec(path="ops.py", start_line=2, end_line=2)],
            )
        )
    (folder / "ops.py").write_text("# moved down\n" + SOURCE.replace("notify", "tell"))
    with open_engine(data, front="test", serve=True, vectors=False) as engine:
        assert engine.watcher is not None and engine.watcher.caught_up.wait(30)
        memory = engine.get(p.GetParams(id=stored.id, project=str(folder)))
        # the line moved; the definition around it (cited too, inferred) changed below it
        assert [(c.state, c.start_line) for c in memory.citations] == [("moved", 3), ("changed", 2)]
