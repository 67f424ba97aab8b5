"""memls.notes.files on a real folder: which files are notes when some are links, and a read
that never leads out of the project's folder, even when a link is swapped in as it reads."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memls.files import LeadsOut
from memls.notes.conventions import only
from memls.notes.files import Unreadable, find, read_note, watch_folders

GLOBS = only(("AGENTS.md", "CLAUDE.md", ".memls/**/*.md", "docs/adr/**/*.md"))
SECRET = "- aws_secret_access_key is kept here.\n"


@pytest.fixture
def projects(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Project A (with every kind of link), its sibling B, and a folder of neither."""
    a, b, outside = tmp_path / "A", tmp_path / "B", tmp_path / "outside"
    for folder in (a / ".memls", a / "records", b / ".memls", outside):
        folder.mkdir(parents=True)
    (b / ".memls" / "secret.md").write_text(SECRET)
    (b / "AGENTS.md").write_text("- B's own rule.\n")
    (outside / "notes.md").write_text("- A file of no project.\n")
    (a / "AGENTS.md").write_text("- Deploys go through Jenkins.\n")
    (a / "records" / "0001-queue.md").write_text("# 1. Queue\n\nWe use RabbitMQ.\n")
    links = {
        "CLAUDE.md": "AGENTS.md",  # a file link inside
        "docs/adr": "../records",  # a folder link inside
        ".memls/passwd.md": "/etc/passwd",
        ".memls/steal.md": "../../B/.memls/secret.md",  # another project's note
        ".memls/out.md": str(outside / "notes.md"),  # a file link out
        ".memls/shared": str(b / ".memls"),  # a folder link out
        ".memls/dangling.md": "gone.md",
        ".memls/loop-a.md": "loop-b.md",
        ".memls/loop-b.md": "loop-a.md",
        ".memls/again": "..",  # a folder link to the folder above it: no endless walk
    }
    for link, target in links.items():
        (a / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, a / link)
    return a, b, outside


def test_find_follows_links_inside_and_names_those_that_lead_out(projects) -> None:
    a, _b, _outside = projects
    found = find(a, GLOBS)
    assert {p: m.convention.path for p, m in found.notes.items()} == {
        a / "AGENTS.md": "AGENTS.md",  # once, under the name CLAUDE.md leads to
        a / "records" / "0001-queue.md": "docs/adr/**/*.md",  # named by the link's path
    }
    refused = {link.path.relative_to(a).as_posix(): link for link in found.refused}
    assert sorted(refused) == [
        ".memls/loop-a.md",
        ".memls/loop-b.md",
        ".memls/out.md",
        ".memls/passwd.md",
        ".memls/shared",
        ".memls/steal.md",
    ]
    assert refused[".memls/passwd.md"].target == "/etc/passwd"
    assert str(refused[".memls/steal.md"]) == (
        f"{a}/.memls/steal.md leads to {a.parent}/B/.memls/secret.md, outside the folder {a}"
    )
    assert refused[".memls/loop-a.md"].target is None
    assert "loop" in str(refused[".memls/loop-a.md"])
    assert a / "CLAUDE.md" in found.links and a / ".memls" / "dangling.md" in found.links
    assert found.linked_folders == {a / "records"}
    # what is watched stays inside too: the folder a link leads to, never one outside
    folders = watch_folders(a, GLOBS, found.notes) | found.linked_folders
    assert all(f == a or a in f.parents for f in folders)
    assert a / "records" in folders


def test_read_note_reads_inside_under_the_target_and_refuses_what_leads_out(projects) -> None:
    a, _b, _outside = projects
    assert read_note(a, a / "CLAUDE.md") == (a / "AGENTS.md", "- Deploys go through Jenkins.\n")
    assert read_note(a, a / "docs" / "adr" / "0001-queue.md")[0] == a / "records" / "0001-queue.md"
    for link in (".memls/passwd.md", ".memls/steal.md", ".memls/out.md", ".memls/loop-a.md"):
        with pytest.raises(LeadsOut) as refused:
            read_note(a, a / link)
        assert str(a / link) in str(refused.value)
    with pytest.raises(LeadsOut):  # through a folder link out
        read_note(a, a / ".memls" / "shared" / "secret.md")
    assert read_note(a, a / ".memls" / "dangling.md") == (a / ".memls" / "dangling.md", None)
    assert read_note(a, a / "AGENTS.md" / "x.md") == (a / "AGENTS.md" / "x.md", None)
    os.mkfifo(a / ".memls" / "pipe.md")  # a FIFO named like a note does not hang the reader
    with pytest.raises(Unreadable):
        read_note(a, a / ".memls" / "pipe.md")


def test_a_project_reached_through_a_link_keeps_its_name(projects, tmp_path: Path) -> None:
    """The project's own path may go through a link (a home folder on another disk): notes
    are named under the path the project was named by."""
    a, _b, _outside = projects
    os.symlink(a, tmp_path / "named")
    named = tmp_path / "named"
    assert set(find(named, GLOBS).notes) == {
        named / "AGENTS.md",
        named / "records" / "0001-queue.md",
    }
    assert read_note(named, named / "CLAUDE.md")[0] == named / "AGENTS.md"


def _swapping(swap: Callable[[], None], stop: threading.Event, errors: list) -> threading.Thread:
    def run() -> None:
        try:
            while not stop.is_set():
                swap()
                time.sleep(0)  # let the reader run in either state
        except OSError as error:
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("component", ["folder", "file"])
def test_a_link_swapped_in_between_the_check_and_the_open_does_not_lead_out(
    projects, component: str
) -> None:
    """A real race: one thread swaps a folder (or the note itself) of the project for a link
    out and back, as fast as it can, while notes are read. The name is resolved and found
    inside, then opened: each read gives the note's own text or refuses, never the text the
    link leads to (a check by path followed by an open by path leaks here)."""
    a, b, _outside = projects
    (a / "notes").mkdir()
    (a / "notes" / "x.md").write_text("- The project's own line.\n")
    (b / "notes").mkdir()
    (b / "notes" / "x.md").write_text(SECRET)
    real, away = (
        (a / "notes", a / "notes-away")
        if component == "folder"
        else (
            a / "notes" / "x.md",
            a / "notes" / "x-away.md",
        )
    )
    out = b / "notes" if component == "folder" else b / "notes" / "x.md"

    def swap() -> None:  # the note's own folder (or file) and a link out, in turn
        if os.path.islink(real):
            os.unlink(real)
            os.rename(away, real)
        else:
            os.rename(real, away)
            os.symlink(out, real)

    stop, errors = threading.Event(), []
    thread = _swapping(swap, stop, errors)
    read, refused = 0, 0
    deadline = time.monotonic() + 30
    try:
        while (read < 100 or refused < 100) and time.monotonic() < deadline:
            try:
                name, text = read_note(a, a / "notes" / "x.md")
            except (LeadsOut, Unreadable):
                refused += 1
                continue
            assert text != SECRET, "a read led out of the project"
            if text is not None:  # None: caught between the two steps of a swap
                assert name == a / "notes" / "x.md"
                read += 1
    finally:
        stop.set()
        thread.join(10)
    assert not errors
    assert read and refused, f"the race was not run: {read} read, {refused} refused"
