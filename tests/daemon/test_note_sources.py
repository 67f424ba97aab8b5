"""One fact in several agents' files, read by the owner's note watcher: one memory with every
file that states it as a source; a file removed or edited drops only its own source, and the
memory is forgotten (source_removed) when no file states it any more. Results name every file."""

from __future__ import annotations

from pathlib import Path

from pygls import uris

from memls import protocol as p
from memls.daemon import open_engine

LINE = "- Run `make check` before every push.\n"
FACT = "Run `make check` before every push."
FILES = {
    "AGENTS.md": "- The API answers in JSON only.\n" + LINE,
    "GEMINI.md": LINE,
    "CLAUDE.md": "# Rules\n\n- Keep commits small.\n" + LINE,
}


def _write(root: Path) -> None:
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text)


def _find(engine, project: str, text: str) -> list[p.Memory]:
    listed = engine.list(p.ListParams(project=project, status="active", limit=1000)).memories
    return [m for m in listed if m.content == text]


def _sources(memory: p.Memory, root: Path) -> list[tuple[str, int]]:
    return [
        (
            Path(uris.to_fs_path(s.uri)).relative_to(root).as_posix(),
            p.SourceRange.parse(s.range).start_line + 1,
        )
        for s in memory.sources
    ]


def _reread(engine, project: str) -> None:
    assert engine.watch(p.WatchParams(project=project, wait=30, reread=True)).indexed


def test_one_line_in_three_agents_files_is_one_memory_kept_while_a_file_states_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    _write(root)
    project = str(root)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        _reread(engine, project)
        (memory,) = _find(engine, project, FACT)
        assert sorted(_sources(memory, root)) == [
            ("AGENTS.md", 2),
            ("CLAUDE.md", 4),
            ("GEMINI.md", 1),
        ]
        first = memory.sources[0]
        assert (memory.source_uri, memory.source_range) == (first.uri, first.range)
        got = engine.get(p.GetParams(id=memory.id, project=project))
        assert len(got.sources) == 3

        # one file removed: the memory stays, stated by the other two
        (root / "AGENTS.md").unlink()
        _reread(engine, project)
        (kept,) = _find(engine, project, FACT)
        assert kept.id == memory.id
        assert sorted(_sources(kept, root)) == [("CLAUDE.md", 4), ("GEMINI.md", 1)]
        assert kept.source_uri == kept.sources[0].uri
        assert _find(engine, project, "The API answers in JSON only.") == []

        # a line moved in one file: that source moves; edited in another: that source drops
        (root / "CLAUDE.md").write_text("# Rules\n\n" + LINE + "- Keep commits small.\n")
        _reread(engine, project)
        (kept,) = _find(engine, project, FACT)
        assert sorted(_sources(kept, root)) == [("CLAUDE.md", 3), ("GEMINI.md", 1)]
        (root / "GEMINI.md").write_text("- Run `make check` before every merge.\n")
        _reread(engine, project)
        (kept,) = _find(engine, project, FACT)
        assert kept.id == memory.id and _sources(kept, root) == [("CLAUDE.md", 3)]
        assert _find(engine, project, "Run `make check` before every merge.")

        # the last file that states it removed: forgotten, with the reason
        (root / "CLAUDE.md").unlink()
        _reread(engine, project)
        assert _find(engine, project, FACT) == []
        log = engine.forgotten(p.ForgottenParams(project=project, reason="source_removed"))
        assert [e.memory_id for e in log.entries if e.memory_id == memory.id] == [memory.id]


SAID = "The mobile apps share business logic through Kotlin Multiplatform."
PARAPHRASE = "Business logic of the mobile apps is shared with Kotlin Multiplatform."


def test_a_paraphrase_in_another_agents_file_is_linked_and_kept_by_its_own_file(
    tmp_path: Path,
) -> None:
    """The near-duplicate rule (real models): the paraphrase stays the memory of its own file,
    linked both ways to the memory it restates; each is forgotten by its own files only."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "AGENTS.md").write_text(f"- {SAID}\n")
    (root / "GEMINI.md").write_text(f"- {SAID}\n")
    project = str(root)
    with open_engine(tmp_path / "data", front="test", serve=True) as engine:
        _reread(engine, project)
        (said,) = _find(engine, project, SAID)
        (root / "CLAUDE.md").write_text(f"# Architecture\n\n- {PARAPHRASE}\n")
        _reread(engine, project)
        (other,) = _find(engine, project, PARAPHRASE)
        (said,) = _find(engine, project, SAID)
        assert other.restates == [said.id] and said.restates == [other.id]
        assert _sources(other, root) == [("CLAUDE.md", 3)]
        assert sorted(_sources(said, root)) == [("AGENTS.md", 1), ("GEMINI.md", 1)]

        # the briefing names every file and the link
        brief = engine.context(p.ContextParams(project=project)).markdown
        assert "AGENTS.md:1, GEMINI.md:1" in brief or "GEMINI.md:1, AGENTS.md:1" in brief
        assert f"restated in other words by {other.id}" in brief

        # the paraphrase's file removed: its wording is forgotten, the other kept, unlinked
        (root / "CLAUDE.md").unlink()
        _reread(engine, project)
        assert _find(engine, project, PARAPHRASE) == []
        (said,) = _find(engine, project, SAID)
        assert said.restates == []


def test_a_paraphrase_read_in_the_same_first_scan_is_linked(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "AGENTS.md").write_text(f"- {SAID}\n")
    (root / "CLAUDE.md").write_text(f"- {PARAPHRASE}\n")
    project = str(root)
    with open_engine(tmp_path / "data", front="test", serve=True) as engine:
        _reread(engine, project)
        (said,) = _find(engine, project, SAID)
        (other,) = _find(engine, project, PARAPHRASE)
        assert said.restates == [other.id] and other.restates == [said.id]
