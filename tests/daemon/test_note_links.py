"""Links among a watched project's notes, with the owner running: nothing outside the
project's folder is read as its note, at the first scan, for a link made while it watches,
and for a link swapped from a target inside to one outside; the warning names the link. A
link inside the folder is read once, under the name it leads to."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pygls import uris

from daemon_helpers import Heard
from memls import protocol as p
from memls.daemon import open_engine

OUT = ("B's secret line.", "B's own rule.", "A file of no project.", "root:")
LEAKS = (".memls/passwd.md", ".memls/steal.md", ".memls/out.md", ".memls/shared")
LOOPS = (".memls/loop-a.md", ".memls/loop-b.md")


class Warned(logging.Handler):
    """The note watcher's warnings, with a condition to wait on (the watcher logs on its own
    thread): a test waits for the warning it expects."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self._arrived = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self._arrived:
            self.messages.append(record.getMessage())
            self._arrived.notify_all()

    def naming(self, *links: Path, timeout: float = 30.0) -> bool:
        """True once a warning has named each link."""
        with self._arrived:
            return self._arrived.wait_for(
                lambda: all(any(str(link) in m for m in self.messages) for link in links),
                timeout,
            )


@pytest.fixture
def warned():
    handler = Warned()
    logger = logging.getLogger("memls.daemon.notewatch")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture
def sites(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Project A, its sibling project B and a folder of neither."""
    a, b, outside = tmp_path / "A", tmp_path / "B", tmp_path / "outside"
    for folder in (a / ".memls", a / "records", b / ".memls", outside):
        folder.mkdir(parents=True)
    (b / ".memls" / "secret.md").write_text("- B's secret line.\n")
    (b / "AGENTS.md").write_text("- B's own rule.\n")
    (outside / "notes.md").write_text("- A file of no project.\n")
    (a / "AGENTS.md").write_text("- Deploys go through Jenkins.\n")
    (a / ".memls" / "team.md").write_text("- Reviews need two approvals.\n")
    (a / "records" / "0001-queue.md").write_text(
        "# 1. Queue\n\n## Decision\n\nWe use RabbitMQ for background jobs.\n"
    )
    return a, b, outside


def _link_everything(a: Path, b: Path, outside: Path) -> None:
    """Each kind of link, in project A."""
    links = {
        "CLAUDE.md": "AGENTS.md",  # a file link inside: read once, as AGENTS.md
        "docs/adr": "../records",  # a folder link inside: its records read as records/
        ".memls/passwd.md": "/etc/passwd",
        ".memls/steal.md": str(b / ".memls" / "secret.md"),  # another project's note
        ".memls/out.md": "../../outside/notes.md",  # a file link out
        ".memls/shared": str(b / ".memls"),  # a folder link out
        ".memls/dangling.md": "gone.md",
        ".memls/loop-a.md": "loop-b.md",
        ".memls/loop-b.md": "loop-a.md",
    }
    for link, target in links.items():
        (a / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, a / link)


def _held(engine, project: str) -> dict[str, list[str]]:
    """The project's memories: content -> the notes (relative paths) they come from."""
    listed = engine.list(p.ListParams(project=project, limit=1000)).memories
    held: dict[str, list[str]] = {}
    for m in listed:
        source = uris.to_fs_path(m.source_uri) if m.source_uri else ""
        held.setdefault(m.content, []).append(os.path.relpath(source, project))
    return held


def _assert_nothing_from_outside(held: dict[str, list[str]]) -> None:
    for content in held:
        assert not any(text in content for text in OUT), f"read from outside: {content}"
    for sources in held.values():
        assert all(not s.startswith("..") for s in sources), sources


def test_the_first_scan_reads_links_inside_once_and_none_that_lead_out(
    sites, warned, tmp_path: Path
) -> None:
    a, b, outside = sites
    _link_everything(a, b, outside)
    project = str(a)
    data = tmp_path / "data"
    with open_engine(data, front="test", serve=True, vectors=False) as engine:
        result = engine.watch(p.WatchParams(project=project, wait=30))
        assert result.indexed
        held = _held(engine, project)
        _assert_nothing_from_outside(held)
        assert held["Deploys go through Jenkins."] == ["AGENTS.md"]  # once, not as CLAUDE.md
        assert held["We use RabbitMQ for background jobs."] == ["records/0001-queue.md"]
        assert held["Reviews need two approvals."] == [".memls/team.md"]
        kinds = {os.path.relpath(uris.to_fs_path(n.uri), a): n.kind for n in result.notes}
        assert kinds == {
            "AGENTS.md": "instructions",
            ".memls/team.md": "instructions",
            "records/0001-queue.md": "record",  # the kind its link's path gives
        }
        refused = {os.path.relpath(uris.to_fs_path(r.uri), a): r for r in result.refused}
        assert sorted(refused) == sorted(LEAKS + LOOPS)
        assert refused[".memls/passwd.md"].target == "/etc/passwd"
        assert refused[".memls/steal.md"].message == (
            f"{a}/.memls/steal.md leads to {b}/.memls/secret.md, outside the folder {a}"
        )
        assert warned.naming(*(a / link for link in LEAKS + LOOPS), timeout=0)

        # the CLI, through the owner's socket, says which links it did not follow
        env = {**os.environ, "MEMLS_DATA_DIR": str(data)}
        cli = subprocess.run(
            [sys.executable, "-m", "memls", "watch", project],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert cli.returncode == 0, cli.stderr
        assert "3 note file(s) indexed" in cli.stdout
        assert f"not read: {a}/.memls/passwd.md leads to /etc/passwd" in cli.stdout


def test_links_made_while_the_owner_watches_are_followed_only_inside(
    sites, warned, tmp_path: Path
) -> None:
    a, b, outside = sites
    project = str(a)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        engine.watch(p.WatchParams(project=project, wait=30))
        assert engine.notes_watcher is not None and engine.notes_watcher.watching.wait(30)
        heard = Heard()
        engine.listeners.append(heard)
        _link_everything(a, b, outside)
        assert warned.naming(*(a / link for link in LEAKS + LOOPS)), warned.messages
        assert heard.wait(
            lambda _: "We use RabbitMQ for background jobs." in _held(engine, project)
        )
        # a note made in the folder a link leads to is seen too
        (a / "records" / "0002-cache.md").write_text(
            "# 2. Cache\n\n## Decision\n\nWe cache sessions in Redis.\n"
        )
        assert heard.wait(lambda _: "We cache sessions in Redis." in _held(engine, project))
        # a barrier: a note written after the links is read after them
        (a / ".memls" / "after.md").write_text("- Written after the links.\n")
        assert heard.wait(lambda _: "Written after the links." in _held(engine, project))
        held = _held(engine, project)
        _assert_nothing_from_outside(held)
        assert held["Deploys go through Jenkins."] == ["AGENTS.md"]
        assert held["We cache sessions in Redis."] == ["records/0002-cache.md"]
        refused = engine.watch(p.WatchParams(project=project, wait=0)).refused
        assert sorted(os.path.relpath(uris.to_fs_path(r.uri), a) for r in refused) == sorted(
            LEAKS + LOOPS
        )


def test_a_link_swapped_from_inside_to_outside_is_no_longer_read(
    sites, warned, tmp_path: Path
) -> None:
    a, b, _outside = sites
    (a / "docs").mkdir()
    (a / "docs" / "guide.md").write_text("- The guide says: run make test first.\n")
    os.symlink("AGENTS.md", a / "CLAUDE.md")
    os.symlink("../docs/guide.md", a / ".memls" / "guide.md")  # its target no glob names
    project = str(a)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        engine.watch(p.WatchParams(project=project, wait=30))
        held = _held(engine, project)
        assert held["Deploys go through Jenkins."] == ["AGENTS.md"]
        assert held["The guide says: run make test first."] == ["docs/guide.md"]
        assert engine.notes_watcher is not None and engine.notes_watcher.watching.wait(30)
        heard = Heard()
        engine.listeners.append(heard)

        def swap(link: Path, target: Path | str) -> None:  # at once, as `ln -sfn` does
            os.symlink(target, link.with_name(link.name + ".new"))
            os.replace(link.with_name(link.name + ".new"), link)

        swap(a / "CLAUDE.md", b / "AGENTS.md")
        swap(a / ".memls" / "guide.md", "/etc/passwd")
        swap(a / ".memls" / "team.md", b / ".memls" / "secret.md")  # was a note of its own
        assert warned.naming(
            a / "CLAUDE.md", a / ".memls" / "guide.md", a / ".memls" / "team.md"
        ), warned.messages
        gone = ("The guide says: run make test first.", "Reviews need two approvals.")
        assert heard.wait(lambda _: not set(gone) & set(_held(engine, project)))
        held = _held(engine, project)
        _assert_nothing_from_outside(held)
        assert held["Deploys go through Jenkins."] == ["AGENTS.md"]
        refused = engine.watch(p.WatchParams(project=project, wait=0)).refused
        assert {os.path.relpath(uris.to_fs_path(r.uri), a) for r in refused} == {
            "CLAUDE.md",
            ".memls/guide.md",
            ".memls/team.md",
        }
        # pointed inside again: read again, and no longer named
        swap(a / ".memls" / "guide.md", "../docs/guide.md")
        assert heard.wait(
            lambda _: "The guide says: run make test first." in _held(engine, project)
        )
        refused = engine.watch(p.WatchParams(project=project, wait=0)).refused
        assert ".memls/guide.md" not in {
            os.path.relpath(uris.to_fs_path(r.uri), a) for r in refused
        }
