"""The owner watches the notes of every project a front names: read at once, followed on
disk, remembered across restarts, an editor's open buffer winning over the disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls import uris

from daemon_helpers import Heard
from memls import protocol as p
from memls.daemon import open_engine
from memls.errors import InvalidInput


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "docs" / "adr").mkdir(parents=True)
    (root / "AGENTS.md").write_text("- Deploys go through Jenkins.\n")
    (root / "CLAUDE.md").write_text("- We switched from Jenkins to GitHub Actions for deploys.\n")
    (root / "docs" / "adr" / "0001-queue.md").write_text(
        "# 1. Queue\n\n## Decision\n\nWe use RabbitMQ for background jobs.\n"
    )
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "AGENTS.md").write_text("- Not this project's note.\n")
    return root


def _texts(engine, project: str) -> set[str]:
    listed = engine.list(p.ListParams(project=project, limit=1000)).memories
    return {m.content for m in listed}


def _synced(heard: Heard, project: str, count: int = 1):
    """A check: `count` sync announcements of the project have arrived."""
    return lambda payloads: (
        sum(1 for x in payloads if getattr(x, "op", "") == "sync" and x.project == project) >= count
    )


def test_a_named_project_is_read_followed_and_kept_across_a_restart(tmp_path: Path) -> None:
    root = _project(tmp_path)
    project = str(root)
    data = tmp_path / "data"
    with open_engine(data, front="test", serve=True, vectors=False) as engine:
        result = engine.watch(p.WatchParams(project=project, wait=30))
        assert result.added and result.watching and result.indexed
        assert {Path(uris.to_fs_path(n.uri)).name for n in result.notes} == {
            "AGENTS.md",
            "CLAUDE.md",
            "0001-queue.md",
        }  # node_modules is not read
        kinds = {Path(uris.to_fs_path(n.uri)).name: n.kind for n in result.notes}
        assert kinds["AGENTS.md"] == "instructions" and kinds["0001-queue.md"] == "record"
        assert "Deploys go through Jenkins." in _texts(engine, project)
        assert not engine.watch(p.WatchParams(project=project, wait=0)).added  # once

        watcher = engine.notes_watcher
        assert watcher is not None and watcher.watching.wait(30)
        heard = Heard()
        engine.listeners.append(heard)
        (root / "docs" / "adr" / "0002-cache.md").write_text(
            "# 2. Cache\n\n## Decision\n\nWe cache sessions in Redis.\n"
        )
        assert heard.wait(_synced(heard, project)), "a new record was not read"
        assert "We cache sessions in Redis." in _texts(engine, project)

        # a folder that did not exist: its creation is seen, then the note in it
        mark = len(heard.payloads)
        (root / ".memls").mkdir()
        (root / ".memls" / "team.md").write_text("- Reviews need two approvals.\n")
        assert heard.wait(
            lambda ps: any(
                "Reviews need two approvals." in _texts(engine, project) for _ in ps[mark:]
            )
        )

        # a note removed on disk: its units are forgotten, with the reason
        (root / "docs" / "adr" / "0002-cache.md").unlink()
        assert heard.wait(lambda _: "We cache sessions in Redis." not in _texts(engine, project))
        log = engine.forgotten(p.ForgottenParams(project=project, reason="source_removed"))
        assert any("Redis" in e.preview for e in log.entries)

    # while no owner runs, a note changes; the next owner knows the project and reads it
    (root / "AGENTS.md").write_text("- Deploys go through Jenkins.\n- Releases are tagged.\n")
    with open_engine(data, front="test", serve=True, vectors=False) as engine:
        listed = engine.watched(p.WatchedParams()).projects
        assert [(w.project, w.via, w.exists) for w in listed] == [(project, "test", True)]
        again = engine.watch(p.WatchParams(project=project, wait=30))
        assert again.indexed and not again.added
        assert "Releases are tagged." in _texts(engine, project)
        assert engine.unwatch(p.UnwatchParams(project=project)).removed
        assert engine.watched(p.WatchedParams()).projects == []
        assert not engine.unwatch(p.UnwatchParams(project=project)).removed


def test_an_open_buffer_wins_over_the_disk(tmp_path: Path) -> None:
    root = _project(tmp_path)
    project = str(root)
    agents = uris.from_fs_path(str(root / "AGENTS.md"))
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        engine.watch(p.WatchParams(project=project, wait=30))
        assert engine.notes_watcher is not None and engine.notes_watcher.watching.wait(30)
        buffer = "- Deploys go through Jenkins.\n- Unsaved: deploys need a ticket.\n"
        engine.sync_note(p.SyncNoteParams(uri=agents, text=buffer, project=project, open=True))
        heard = Heard()
        engine.listeners.append(heard)
        # the disk changes under the open buffer, and so does another note (the barrier:
        # both changes are read in order, the held one is left alone)
        (root / "AGENTS.md").write_text("- Something else entirely.\n")
        (root / "CLAUDE.md").write_text("- Deploys go out on Tuesdays.\n")
        assert heard.wait(lambda _: "Deploys go out on Tuesdays." in _texts(engine, project))
        texts = _texts(engine, project)
        assert "Unsaved: deploys need a ticket." in texts
        assert "Something else entirely." not in texts
        # closed in the editor: synced from the disk again, and followed from then on
        disk = (root / "AGENTS.md").read_text()
        engine.sync_note(p.SyncNoteParams(uri=agents, text=disk, project=project))
        assert "Something else entirely." in _texts(engine, project)


def test_a_reread_answers_with_what_is_on_the_disk_now(tmp_path: Path) -> None:
    """`reread`: the notes are read again for the answer, not when the watcher hears of the
    change (debounced); an editor's open buffer still wins over the disk."""
    root = _project(tmp_path)
    project = str(root)
    claude = uris.from_fs_path(str(root / "CLAUDE.md"))
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        assert engine.watch(p.WatchParams(project=project, wait=30)).indexed
        buffer = "- Unsaved: deploys on Fridays.\n"
        engine.sync_note(p.SyncNoteParams(uri=claude, text=buffer, project=project, open=True))
        (root / "AGENTS.md").write_text("- Deploys need a ticket.\n")
        (root / "CLAUDE.md").write_text("- Saved under the open buffer.\n")
        result = engine.watch(p.WatchParams(project=project, wait=30, reread=True))
        assert result.indexed
        texts = _texts(engine, project)
        assert "Deploys need a ticket." in texts and "Deploys go through Jenkins." not in texts
        assert "Unsaved: deploys on Fridays." in texts
        assert "Saved under the open buffer." not in texts


def test_a_project_that_is_no_folder_is_refused_naming_it(tmp_path: Path) -> None:
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        for bad in ("relative/path", str(tmp_path / "missing"), "team-key"):
            with pytest.raises(InvalidInput) as refused:
                engine.watch(p.WatchParams(project=bad, wait=0))
            assert refused.value.field == "project" and "not a folder" in refused.value.message
        assert engine.watched(p.WatchedParams()).projects == []


def test_a_process_that_does_not_serve_reads_the_notes_once_and_records_the_project(
    tmp_path: Path,
) -> None:
    """A CLI command that owns the store for a moment: the notes are indexed for its answer,
    and the daemon that starts next watches the project."""
    root = _project(tmp_path)
    with open_engine(tmp_path / "data", front="cli", vectors=False) as engine:
        result = engine.watch(p.WatchParams(project=str(root)))
        assert result.indexed and not result.watching and len(result.notes) == 3
        assert "Deploys go through Jenkins." in _texts(engine, str(root))
        assert [w.project for w in engine.watched(p.WatchedParams()).projects] == [str(root)]
