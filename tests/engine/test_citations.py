"""Memories that cite code: stored with their citations, read with their states, checked
against the folder, re-confirmed, and refused when what they cite is not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memls import protocol as p
from memls.errors import InvalidInput, Refused

SOURCE = """import os


def load(path):
    with open(path) as handle:
        return handle.read()


def save(path, text):
    with open(path, "w") as handle:
        handle.write(text)
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "io.py").write_text(SOURCE)
    (root / "README.md").write_text("# proj\n")
    return root


def cite(engine, folder: Path, text: str, citations: list[dict], **kw):
    return engine.store(
        p.parse(
            p.StoreParams,
            {"text": text, "project": str(folder), "citations": citations, **kw},
        )
    )


def test_a_citation_is_stored_and_read_with_its_state(engine, folder: Path) -> None:
    stored = cite(
        engine,
        folder,
        "save() overwrites the file",
        [{"path": "src/io.py", "startLine": 9, "endLine": 11}],
    )
    memory = engine.get(p.GetParams(id=stored.id, project=str(folder)))
    assert [(c.path, c.start_line, c.end_line, c.state) for c in memory.citations] == [
        ("src/io.py", 9, 11, "fresh")
    ]
    assert memory.stale is False
    assert p.to_wire(memory)["citations"][0]["startLine"] == 9


def test_an_edit_of_the_cited_lines_makes_the_memory_stale_everywhere(engine, folder) -> None:
    stored = cite(
        engine, folder, "save() overwrites the file", [{"path": "src/io.py", "symbol": "save"}]
    )
    heard: list = []
    engine.listeners.append(lambda method, payload: heard.append((method, payload)))
    (folder / "src" / "io.py").write_text(SOURCE.replace('"w"', '"a"'))
    result = engine.check_citations(p.CheckParams(project=str(folder)))
    assert [(c.memory, c.state) for c in result.citations] == [(stored.id, "changed")]
    assert result.changed == [stored.id]
    assert (
        "memory/changed",
        p.ChangedNotification(project=str(folder), op="citations", ids=[stored.id]),
    ) in heard
    memory = engine.get(p.GetParams(id=stored.id, project=str(folder)))
    assert memory.stale and memory.citations[0].state == "changed"
    assert '+with open(path, "a") as handle:' in (memory.citations[0].diff or "")
    listed = engine.list(p.ListParams(project=str(folder))).memories
    assert listed[0].stale
    group = engine.review(p.ReviewParams(action="list", project=str(folder)))
    assert [m.id for m in group.cited_code_changed] == [stored.id]
    hit = engine.query(p.QueryParams(query="save overwrites", project=str(folder)))
    assert hit.results[0].stale

    # switching back makes it fresh again: states come from the tree, never accumulated
    (folder / "src" / "io.py").write_text(SOURCE)
    engine.check_citations(p.CheckParams(project=str(folder)))
    assert not engine.get(p.GetParams(id=stored.id, project=str(folder))).stale


def test_moves_follow_and_are_audited(engine, folder) -> None:
    stored = cite(
        engine, folder, "load reads it all", [{"path": "src/io.py", "startLine": 4, "endLine": 6}]
    )
    (folder / "src" / "io.py").unlink()
    (folder / "lib").mkdir()
    (folder / "lib" / "files.py").write_text("import sys\n" + SOURCE)
    result = engine.check_citations(p.CheckParams(project=str(folder)))
    assert [(c.path, c.start_line, c.state) for c in result.citations] == [
        ("lib/files.py", 5, "moved")
    ]
    memory = engine.get(p.GetParams(id=stored.id, project=str(folder)))
    assert memory.citations[0].cited_path == "src/io.py" and not memory.stale
    ops = [e.op for e in engine.audit(p.AuditParams(project=str(folder), id=stored.id)).entries]
    assert "citation_moved" in ops


def test_reconfirm_takes_the_current_text(engine, folder) -> None:
    stored = cite(engine, folder, "save writes", [{"path": "src/io.py", "symbol": "save"}])
    (folder / "src" / "io.py").write_text(
        SOURCE.replace("handle.write(text)", "handle.write(text + '\\n')")
    )
    engine.check_citations(p.CheckParams(project=str(folder)))
    assert engine.get(p.GetParams(id=stored.id, project=str(folder))).stale
    again = engine.reconfirm(p.ReconfirmParams(id=stored.id, project=str(folder)))
    assert not again.memory.stale and again.memory.citations[0].state == "fresh"
    engine.check_citations(p.CheckParams(project=str(folder)))
    assert not engine.get(p.GetParams(id=stored.id, project=str(folder))).stale


def test_forget_with_source_changed(engine, folder) -> None:
    stored = cite(engine, folder, "save writes", [{"path": "src/io.py"}])
    engine.forget(p.ForgetParams(id=stored.id, reason="source_changed", project=str(folder)))
    log = engine.forgotten(p.ForgottenParams(project=str(folder)))
    assert [e.reason for e in log.entries] == ["source_changed"]


@pytest.mark.parametrize(
    "citation, field",
    [
        ({"path": "/etc/passwd"}, "citations[0].path"),
        ({"path": "../outside.py"}, "citations[0].path"),
        ({"path": "src/nope.py"}, "citations[0].path"),
        ({"path": "src/io.py", "startLine": 5, "endLine": 99}, "citations[0].endLine"),
        ({"path": "src/io.py", "startLine": 5, "endLine": 3}, "citations[0].endLine"),
        ({"path": "src/io.py", "startLine": 2, "endLine": 3}, "citations[0].startLine"),
        ({"path": "src/io.py", "symbol": "nothing"}, "citations[0].symbol"),
        ({"path": "README.md", "symbol": "x"}, "citations[0].symbol"),
    ],
)
def test_bad_citations_are_refused_naming_the_field(engine, folder, citation, field) -> None:
    with pytest.raises(InvalidInput) as caught:
        cite(engine, folder, "a memory", [citation])
    assert caught.value.field == field
    assert engine.list(p.ListParams(project=str(folder))).memories == []


def test_a_project_that_is_not_a_folder_takes_no_citations(engine) -> None:
    with pytest.raises(InvalidInput) as caught:
        engine.store(
            p.parse(
                p.StoreParams, {"text": "x", "project": "alpha", "citations": [{"path": "a.py"}]}
            )
        )
    assert caught.value.field == "citations"


def test_too_many_citations_are_refused_by_the_limit(engine, folder) -> None:
    many = [{"path": "src/io.py"}] * 10_000
    with pytest.raises(InvalidInput) as caught:
        p.parse(p.StoreParams, {"text": "x", "project": str(folder), "citations": many})
    assert "citations" in str(caught.value)


def test_a_vanished_project_folder_is_refused_and_keeps_the_states(engine, folder) -> None:
    stored = cite(engine, folder, "save writes", [{"path": "src/io.py"}])
    moved = folder.with_name("elsewhere")
    folder.rename(moved)
    with pytest.raises((Refused, InvalidInput)):
        engine.check_citations(p.CheckParams(project=str(folder)))
    moved.rename(folder)
    assert engine.get(p.GetParams(id=stored.id, project=str(folder))).citations[0].state == "fresh"


def test_inferred_citations_from_the_text(engine, folder) -> None:
    stored = engine.store(
        p.StoreParams(
            text="`save` in src/io.py overwrites the file; see src/io.py:4-6 too",
            project=str(folder),
        )
    )
    got = {(c.path, c.kind, c.symbol, c.start_line, c.inferred) for c in stored.memory.citations}
    assert ("src/io.py", "symbol", "save", 9, True) in got
    assert ("src/io.py", "span", None, 4, True) in got
    assert ("src/io.py", "file", None, 1, True) in got


def test_the_memories_citing_a_document(engine, folder) -> None:
    stored = cite(engine, folder, "save writes", [{"path": "src/io.py", "symbol": "save"}])
    uri = (folder / "src" / "io.py").as_uri()
    found = engine.citations(p.CitationsParams(uri=uri, project=str(folder)))
    assert [(r.memory, r.start_line, r.end_line, r.state) for r in found.ranges] == [
        (stored.id, 9, 11, "fresh")
    ]
    assert found.ranges[0].preview == "save writes"


def test_at_equal_relevance_a_fresh_memory_ranks_before_a_stale_one(engine, folder) -> None:
    project = str(folder)
    ids = []
    # two unrelated statements that match the query equally (no contradiction between them)
    for text in ("alpha beta parser caches tokens", "alpha beta deploys on fridays"):
        ids.append(
            cite(
                engine,
                folder,
                text,
                [{"path": "src/io.py", "symbol": "save"}],
                type="fact",
                inferCitations=False,
            ).id
        )
    assert engine.flush()  # the write-time contradiction check has run: none between them
    plain = engine.query(p.QueryParams(query="alpha beta", project=project, mode="lexical"))
    assert not any(h.contradicts or h.contradicted_by for h in plain.results)
    first, second = [h.id for h in plain.results]
    assert plain.results[0].score == plain.results[1].score
    # make the first one's citation stale, the other's citation is of another file now
    with engine.storage.write(project, "test") as tx:
        tx.citations.update(
            first,
            0,
            path="src/io.py",
            start_line=9,
            end_line=11,
            state="changed",
            diff=None,
            at="2025-01-01T00:00:00Z",
        )
    ranked = engine.query(p.QueryParams(query="alpha beta", project=project, mode="lexical"))
    assert [h.id for h in ranked.results] == [second, first]
    assert ranked.results[1].stale and not ranked.results[0].stale


def test_paths_favour_memories_that_cite_them(engine, folder) -> None:
    project = str(folder)
    (folder / "src" / "other.py").write_text("x = 1\n")
    cited = cite(
        engine,
        folder,
        "alpha beta parser caches tokens",
        [{"path": "src/other.py"}],
        type="note",
        inferCitations=False,
    ).id
    cite(engine, folder, "alpha beta deploys on fridays", [], type="note", inferCitations=False)
    assert engine.flush()
    found = engine.query(
        p.QueryParams(
            query="alpha beta",
            project=project,
            mode="lexical",
            paths=["src/other.py"],
            explain=True,
        )
    )
    assert found.results[0].id == cited, [
        (h.id == cited, h.score, h.explain) for h in found.results
    ]
    assert found.results[0].explain is not None
    assert found.results[0].explain.boosts["cites_path"] > 1


def test_a_span_inside_a_definition_cites_the_definition_too(engine, folder) -> None:
    stored = cite(
        engine, folder, "the file is opened for writing", [{"path": "src/io.py", "startLine": 10}]
    )
    got = [
        (c.kind, c.symbol, c.start_line, c.end_line, c.inferred) for c in stored.memory.citations
    ]
    assert got == [("span", None, 10, 10, False), ("symbol", "save", 9, 11, True)]


def test_citations_travel_in_export_and_import(engine, folder, tmp_path) -> None:
    from memls.engine import Engine

    stored = cite(engine, folder, "save writes", [{"path": "src/io.py", "symbol": "save"}])
    exported = list(engine.export(str(folder)))
    assert "citations" in {line.get("table") for line in exported[1:]}
    with Engine.open(tmp_path / "other", vectors=False) as fresh:
        counts = fresh.import_(str(folder), [json.dumps(x) for x in exported])
        assert counts["citations"] == 1
        memory = fresh.get(p.GetParams(id=stored.id, project=str(folder)))
        assert [(c.symbol, c.start_line, c.state) for c in memory.citations] == [
            ("save", 9, "fresh")
        ]
        (folder / "src" / "io.py").write_text(SOURCE.replace('"w"', '"a"'))
        checked = fresh.check_citations(p.CheckParams(project=str(folder)))
        assert [c.state for c in checked.citations] == ["changed"]


def test_a_rename_in_git_is_followed_by_git(engine, folder) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", *args],
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    stored = cite(engine, folder, "load reads it all", [{"path": "src/io.py", "startLine": 4}])
    git("mv", "src/io.py", "src/files.py")
    git("commit", "-qm", "rename")
    checked = engine.check_citations(p.CheckParams(project=str(folder)))
    assert [(c.memory, c.path, c.start_line, c.state) for c in checked.citations][0] == (
        stored.id,
        "src/files.py",
        4,
        "moved",
    )
