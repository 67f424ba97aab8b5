"""One note file's units kept in step with its text by the engine (what the parser's old
`diff` helper promised, now said of `sync_note` itself, the one place that does it)."""

from __future__ import annotations

from memls import protocol as p

NOTE = """# Agent notes

Intro paragraph about this repository.

## Conventions
- Use `ruff` for linting and formatting; line length is 100.
- Tests run with pytest.
- Deploys go out on Tuesdays.
"""
URI = "file:///proj/AGENTS.md"


def sync(engine, text):
    return engine.sync_note(p.SyncNoteParams(uri=URI, text=text, project="n"))


def test_editing_one_item_is_one_removed_and_one_added(engine):
    first = sync(engine, NOTE)
    edited = sync(engine, NOTE.replace("line length is 100", "line length is 120"))
    assert len(edited.added) == 1 and len(edited.removed) == 1
    assert edited.moved == [] and edited.unchanged == len(first.added) - 1
    new = engine.get(p.GetParams(id=edited.added[0], project="n"))
    assert new.content.endswith("line length is 120.")
    log = engine.forgotten(p.ForgottenParams(project="n", reason="source_removed")).entries
    assert [e.memory_id for e in log] == edited.removed


def test_inserting_lines_moves_the_units_below_and_only_those(engine):
    first = sync(engine, NOTE)
    before = {m.id: m.source_range for m in engine.list(p.ListParams(project="n")).memories}
    moved = sync(
        engine, NOTE.replace("## Conventions\n", "## Conventions\n\n- A brand new rule.\n")
    )
    assert len(moved.added) == 1 and moved.removed == []
    assert len(moved.moved) == 3 and moved.unchanged == len(first.added) - 3
    for memory_id in moved.moved:
        now = p.SourceRange.parse(engine.get(p.GetParams(id=memory_id, project="n")).source_range)
        was = p.SourceRange.parse(before[memory_id])
        assert now is not None and was is not None and now.start_line == was.start_line + 2


def test_same_text_changes_nothing_and_an_empty_file_forgets_everything(engine):
    first = sync(engine, NOTE)
    again = sync(engine, NOTE)
    assert (again.added, again.removed, again.moved) == ([], [], [])
    assert again.unchanged == len(first.added)
    gone = engine.sync_note(p.SyncNoteParams(uri=URI, text=None, project="n"))
    assert sorted(gone.removed) == sorted(first.added) and gone.added == []
    assert engine.stats(p.StatsParams(project="n")).memories == 0


def test_a_line_in_a_nested_and_a_root_file_applies_where_either_applies(engine, tmp_path):
    """One memory of two files: its scope is both files' together (the whole project while
    the root file states it), and what is left when one goes."""
    root = tmp_path / "mono"
    line = "- Run `make check` before every push.\n"

    def note(path, text):
        uri = (root / path).as_uri()
        return engine.sync_note(p.SyncNoteParams(uri=uri, text=text, project=str(root)))

    nested = note("services/api/AGENTS.md", line)
    (memory_id,) = nested.added
    assert engine.get(p.GetParams(id=memory_id, project=str(root))).scope == ["services/api/**"]
    top = note("AGENTS.md", line)
    assert top.added == [] and top.shared == [memory_id]
    both = engine.get(p.GetParams(id=memory_id, project=str(root)))
    assert both.scope == [] and len(both.sources) == 2
    gone = note("AGENTS.md", None)
    assert gone.removed == [] and gone.moved == [memory_id]
    left = engine.get(p.GetParams(id=memory_id, project=str(root)))
    assert left.scope == ["services/api/**"]
    assert [s.uri for s in left.sources] == [(root / "services/api/AGENTS.md").as_uri()]
