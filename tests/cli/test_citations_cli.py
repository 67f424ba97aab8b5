"""`memls store --cite`, `memls ingest` with citations and `memls check` on a real folder."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

SOURCE = (
    "def load(path):\n    return open(path).read()\n\n\n"
    "def save(path, text):\n    open(path, 'w').write(text)\n"
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text(SOURCE)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a"],
        check=True,
    )
    return root


def test_store_cite_then_check_json(run, folder: Path) -> None:
    code, out, err = run(
        "store",
        "--project",
        str(folder),
        "--cite",
        "src/a.py:5-6",
        "--cite",
        "src/a.py",
        "save() truncates the file",
        "--json",
    )
    assert code == 0, err
    stored = json.loads(out)
    memory = stored["id"]
    assert [(c["path"], c["startLine"], c["endLine"]) for c in stored["memory"]["citations"]][
        :2
    ] == [
        ("src/a.py", 5, 6),
        ("src/a.py", 1, 6),
    ]
    (folder / "src" / "a.py").write_text("import os\n" + SOURCE.replace("'w'", "'a'"))
    code, out, err = run("check", "--project", str(folder), "--json")
    assert code == 1, err  # a changed citation is a finding
    checked = json.loads(out)
    assert checked["project"] == str(folder.resolve())
    states = [
        (c["memory"], c["path"], c["startLine"], c["endLine"], c["state"])
        for c in checked["citations"]
    ]
    assert (memory, "src/a.py", 6, 7, "changed") in states
    assert (memory, "src/a.py", 1, 7, "fresh") in states
    code, out, _ = run("get", memory, "--project", str(folder))
    assert code == 0


def test_a_bad_cite_is_one_line_naming_it_and_stores_nothing(run, folder: Path) -> None:
    code, out, err = run("store", "--project", str(folder), "--cite", "src/a.py:3-99", "x")
    assert code != 0 and "endLine" in err and len(err.strip().splitlines()) == 1
    code, out, err = run("store", "--project", str(folder), "--cite", "../etc/passwd", "x")
    assert code != 0 and "leaves the project folder" in err
    assert json.loads(run("list", "--project", str(folder), "--json")[1])["memories"] == []


def test_ingest_takes_citations(run, folder: Path, tmp_path: Path) -> None:
    lines = tmp_path / "m.jsonl"
    lines.write_text(
        json.dumps(
            {
                "text": "load reads all",
                "citations": [{"path": "src/a.py", "startLine": 1, "endLine": 2}],
            }
        )
        + "\n"
    )
    code, out, err = run("ingest", str(lines), "--project", str(folder), "--json")
    assert code == 0, err
    listed = json.loads(run("list", "--project", str(folder), "--json")[1])["memories"]
    assert listed[0]["citations"][0]["startLine"] == 1


def test_review_list_shows_the_cited_code_changed_group_and_reconfirm(run, folder: Path) -> None:
    code, out, err = run(
        "store", "--project", str(folder), "--cite", "src/a.py:5-6", "save truncates", "--json"
    )
    memory = json.loads(out)["id"]
    (folder / "src" / "a.py").write_text(SOURCE.replace("'w'", "'a'"))
    assert run("check", "--project", str(folder))[0] == 1  # the changed citation found
    code, out, err = run("review", "list", "--project", str(folder))
    assert code == 0 and "Cited code changed" in out and memory in out and "STALE" in out
    code, out, err = run("reconfirm", memory, "--project", str(folder))
    assert code == 0, err
    listed = json.loads(run("review", "list", "--project", str(folder), "--json")[1])
    assert listed["citedCodeChanged"] == []
    assert run("check", "--project", str(folder))[0] == 0  # fresh again: no finding
