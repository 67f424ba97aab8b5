"""`memls watch`, `watched`, `unwatch`, and `--project` of `context` naming a folder: the
notes are read for the answer and the project is recorded for the daemon."""

from __future__ import annotations

import json


def test_watch_watched_unwatch(run, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "AGENTS.md").write_text("- Deploys go through Jenkins.\n")
    code, out, err = run("watch", str(project))
    assert code == 0, err
    assert "1 note file(s) indexed" in out
    code, out, _ = run("watched", "--json")
    listed = json.loads(out)["projects"]
    assert [(w["project"], w["notes"], w["exists"]) for w in listed] == [(str(project), 1, True)]
    code, out, _ = run("unwatch", str(project))
    assert code == 0 and "no longer watched" in out
    assert json.loads(run("watched", "--json")[1])["projects"] == []
    code, _, err = run("watch", str(tmp_path / "missing"))
    assert code == 2 and err.count("\n") == 1 and "not a folder" in err


def test_context_on_a_folder_reads_its_notes(run, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "CLAUDE.md").write_text("- We switched from Jenkins to GitHub Actions.\n")
    code, out, err = run("context", "--project", str(project))
    assert code == 0, err
    assert "We switched from Jenkins to GitHub Actions." in out
    assert [w["project"] for w in json.loads(run("watched", "--json")[1])["projects"]] == [
        str(project)
    ]


def test_one_line_in_three_agents_files_is_shown_with_every_file(run, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    for name in ("AGENTS.md", "CLAUDE.md", "GEMINI.md"):
        (project / name).write_text("- Run `make check` before every push.\n")
    code, out, err = run("watch", str(project))
    assert code == 0, err
    code, out, err = run("list", "--project", str(project), "--json")
    (memory,) = json.loads(out)["memories"]
    assert sorted(s["uri"].rsplit("/", 1)[-1] for s in memory["sources"]) == [
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
    ]
    code, out, err = run("list", "--project", str(project))
    (stated,) = [line for line in out.splitlines() if "stated in" in line]
    assert sorted(stated.split("stated in ")[1].split(", ")) == [
        "AGENTS.md:1",
        "CLAUDE.md:1",
        "GEMINI.md:1",
    ]
    code, out, err = run("query", "make check", "--project", str(project), "--mode", "lexical")
    assert code == 0, err
    assert [line.strip() for line in out.splitlines() if "stated in" in line] == [stated.strip()]
    code, out, err = run("get", memory["id"], "--project", str(project))
    assert code == 0, err
    (sources,) = [line for line in out.splitlines() if line.startswith("sources ")]
    assert sorted(sources.split(None, 1)[1].split(", ")) == [
        "AGENTS.md:1",
        "CLAUDE.md:1",
        "GEMINI.md:1",
    ]
