"""memory/promote on a real engine: a note that cannot be read or written is refused by the
field that names it (`to`), and nothing is changed."""

from __future__ import annotations

import os

import pytest
from pygls import uris

from memls import protocol as p
from memls.errors import MemlsError


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


def _stored(engine, project):
    return engine.store(p.StoreParams(text="Deploys go through Jenkins", project=str(project)))


@pytest.mark.parametrize(
    ("to", "prepare"),
    [
        pytest.param("dir.md", lambda f: (f / "dir.md").mkdir(), id="a folder named .md"),
        pytest.param(
            "bad.md", lambda f: (f / "bad.md").write_bytes(b"\xff\xfe not utf-8\n"), id="not utf-8"
        ),
        pytest.param("file/x.md", lambda f: (f / "file").write_text("x"), id="under a file"),
        pytest.param("x" * 300 + ".md", lambda f: None, id="a name too long"),
    ],
)
def test_a_note_that_cannot_be_read_or_written_is_refused_by_to(engine, project, to, prepare):
    prepare(project)
    stored = _stored(engine, project)
    files = sorted(project.rglob("*"))
    with pytest.raises(MemlsError) as refused:
        engine.promote(p.PromoteParams(id=stored.id, project=str(project), to=to))
    assert refused.value.field == "to"
    memory = engine.get(p.GetParams(id=stored.id, project=str(project)))
    assert memory.source_uri is None
    assert sorted(project.rglob("*")) == files


def test_a_new_note_is_made_as_an_editor_makes_a_file_and_an_edited_one_keeps_its_mode(
    engine, project
):
    """The note is the user's, to commit: a new one gets what the umask gives (not owner-only
    like the store), an existing one keeps its mode."""
    old = os.umask(0o022)
    try:
        first = _stored(engine, project)
        made = engine.promote(p.PromoteParams(id=first.id, project=str(project)))
    finally:
        os.umask(old)
    note = project / ".memls" / "memory.md"
    assert made.created and note.stat().st_mode & 0o777 == 0o644
    note.chmod(0o600)
    second = engine.store(p.StoreParams(text="Releases are tagged on main", project=str(project)))
    again = engine.promote(p.PromoteParams(id=second.id, project=str(project)))
    assert not again.created and "Releases are tagged on main" in note.read_text()
    assert note.stat().st_mode & 0o777 == 0o600


def test_the_note_is_named_as_the_editor_names_it_in_a_folder_with_a_space_and_a_hash(
    engine, tmp_path
):
    """The editor's note watcher names the file by a percent-encoded URI (pygls's
    from_fs_path); its sync of the note keeps the promoted item the memory it was."""
    project = tmp_path / "my project #2"
    project.mkdir()
    stored = _stored(engine, project)
    promoted = engine.promote(p.PromoteParams(id=stored.id, project=str(project)))
    note = project / ".memls" / "memory.md"
    assert promoted.uri == uris.from_fs_path(str(note))
    before = engine.stats(p.StatsParams(project=str(project)))
    note.write_text(note.read_text() + "- Backups are restored monthly\n")
    synced = engine.sync_note(
        p.SyncNoteParams(
            uri=uris.from_fs_path(str(note)), text=note.read_text(), project=str(project)
        )
    )
    assert len(synced.added) == 1 and synced.shared == []
    memory = engine.get(p.GetParams(id=stored.id, project=str(project)))
    assert memory.status == "active" and memory.source_uri == promoted.uri
    after = engine.stats(p.StatsParams(project=str(project)))
    assert after.memories == before.memories + 1


def test_promote_to_claude_memory_writes_a_topic_file_and_its_pointer(
    engine, project, tmp_path, monkeypatch
):
    """`--to claude-memory`: the memory becomes a topic file of Claude Code's auto memory of
    the project, written as Claude Code writes one, pointed to from MEMORY.md, and read back
    as that file's unit (its origin Claude Code's), never a second memory."""
    from memls.notes.agent_places import claude_slug

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"):
        monkeypatch.delenv(name, raising=False)
    (home / ".claude").mkdir(parents=True)
    folder = home / ".claude" / "projects" / claude_slug(str(project)) / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- [Style](style.md) — the house style\n")
    stored = engine.store(
        p.StoreParams(text="Releases are cut from main.", type="decision", project=str(project))
    )
    result = engine.promote(p.PromoteParams(id=stored.id, project=str(project), to="claude-memory"))
    topic = folder / "releases-are-cut-from-main.md"
    assert result.path == str(topic) and result.created and not result.already
    assert topic.read_text() == (
        "---\nname: releases-are-cut-from-main\ndescription: Releases are cut from main.\n"
        "metadata:\n  type: project\n---\n\nReleases are cut from main.\n"
    )
    assert (folder / "MEMORY.md").read_text() == (
        "- [Style](style.md) — the house style\n"
        "- [releases-are-cut-from-main](releases-are-cut-from-main.md) — "
        "Releases are cut from main.\n"
    )
    memory = result.memory
    assert (memory.id, memory.origin, memory.source_uri) == (
        stored.id,
        "claude-memory",
        uris.from_fs_path(str(topic)),
    )
    listed = engine.list(p.ListParams(project=str(project), limit=100)).memories
    assert [m.content for m in listed] == ["Releases are cut from main."]  # once
    again = engine.promote(p.PromoteParams(id=stored.id, project=str(project), to="claude-memory"))
    assert again.already
