"""`memls check`: every finding on a project's notes with no editor — a contradiction between
AGENTS.md and CLAUDE.md, a secret in a note line, a memory whose cited code changed — as text,
JSON (against its checked-in schema) and SARIF (against the official SARIF 2.1.0 schema), with
the exit status CI reads; through a running daemon too, reading what is on the disk now."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from hook_helpers import socket_daemon
from memls import __version__

ROOT = Path(__file__).resolve().parents[2]
SARIF_SCHEMA = json.loads((ROOT / "tests/data/sarif/sarif-schema-2.1.0.json").read_text())
REPORT_SCHEMA = json.loads((ROOT / "schemas/check.report.json").read_text())

AWS = "AKIA" + "Q3EGT7QW2M5XZ4NA"  # FAKE, in AWS's format
OLD = "Deploys go through Jenkins."
NEW = "We switched from Jenkins to GitHub Actions for deploys."
CITING = "load reads the whole file at once"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "AGENTS.md").write_text(f"- {OLD}\n- Run the tests with make test.\n")
    (root / "CLAUDE.md").write_text(
        f"# Rules\n\n- {NEW}\n- CI uploads artifacts with AWS_ACCESS_KEY_ID={AWS} for now.\n"
    )
    (root / "src" / "io.py").write_text("def load(path):\n    return open(path).read()\n")
    return root


def _stale_memory(run, root: Path) -> str:
    """A memory citing src/io.py:1-2, then the cited code changed."""
    code, out, err = run("store", "-p", str(root), "--cite", "src/io.py:1-2", CITING, "--json")
    assert code == 0, err
    (root / "src" / "io.py").write_text("def load(path):\n    return open(path).read(4096)\n")
    return json.loads(out)["id"]


def _sarif_valid(log: dict) -> None:
    jsonschema.Draft4Validator.check_schema(SARIF_SCHEMA)
    errors = sorted(jsonschema.Draft4Validator(SARIF_SCHEMA).iter_errors(log), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def test_every_finding_as_text_json_and_sarif(run, tmp_path):
    root = _project(tmp_path)
    memory = _stale_memory(run, root)

    code, out, err = run("check", "--project", str(root))
    assert code == 1, err
    lines = out.splitlines()
    assert len(lines) == 4, out
    assert lines[0].startswith(
        f"CLAUDE.md:3: contradiction: a later switch: “{NEW}” contradicts “{OLD}” "
        "(AGENTS.md:1); temporal_override, confidence 0."
    )
    assert lines[1] == (
        "CLAUDE.md:4: secret: a secret (aws-access-key) in a note line: memls indexed it as "
        "[REDACTED:aws-access-key], the file still holds it (move it to your secret store and "
        "rotate it)"
    )
    assert lines[2] == (
        f"src/io.py:1: stale: memory {memory} cites src/io.py:1-2, which changed: “{CITING}”"
    )
    assert lines[3] == (
        f"3 findings (1 secret, 1 contradiction, 1 stale) in {root}: 2 note files read; "
        "citations: 1 changed"
    )
    assert AWS not in out

    code, out, err = run("check", "--project", str(root), "--json")
    assert code == 1, err
    assert AWS not in out
    report = json.loads(out)
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(report)
    assert report["project"] == str(root)
    assert report["notes"] == ["AGENTS.md", "CLAUDE.md"]
    assert report["counts"] == {"secret": 1, "contradiction": 1, "stale": 1}
    contradiction, secret, stale = report["findings"]
    assert contradiction["kind"] == "contradiction" and contradiction["level"] == "warning"
    sides = [
        {k: side[k] for k in ("path", "line", "endLine", "text")}
        for side in (contradiction["newer"], contradiction["older"])
    ]
    assert sides == [
        {"path": "CLAUDE.md", "line": 3, "endLine": 3, "text": NEW},
        {"path": "AGENTS.md", "line": 1, "endLine": 1, "text": OLD},
    ]
    assert [s["kind"] for s in contradiction["signals"]] == ["temporal_override"]
    assert 0.5 <= contradiction["confidence"] <= 1
    assert {k: secret[k] for k in ("kind", "level", "path", "line", "secretKind")} == {
        "kind": "secret",
        "level": "error",
        "path": "CLAUDE.md",
        "line": 4,
        "secretKind": "aws-access-key",
    }
    line = (root / "CLAUDE.md").read_text().splitlines()[3]
    assert line[secret["column"] - 1 : secret["endColumn"] - 1] == AWS  # where, not what
    assert {k: stale[k] for k in ("kind", "memory", "state", "text", "path", "line")} == {
        "kind": "stale",
        "memory": memory,
        "state": "changed",
        "text": CITING,
        "path": "src/io.py",
        "line": 1,
    }
    assert stale["cited"] == {"path": "src/io.py", "line": 1, "endLine": 2, "symbol": None}
    assert "read(4096)" in stale["diff"]
    # memory/check's answer is kept whole: every citation with its state
    assert [(c["memory"], c["state"]) for c in report["citations"]] == [(memory, "changed")]

    code, out, err = run("check", "--project", str(root), "--sarif")
    assert code == 1, err
    assert AWS not in out
    log = json.loads(out)
    _sarif_valid(log)
    assert log["version"] == "2.1.0"
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("memls", __version__)
    rules = driver["rules"]
    assert [r["id"] for r in rules] == ["secret", "contradiction", "stale"]
    assert all(r["shortDescription"]["text"] and r["help"]["text"] for r in rules)
    assert sarif_run["originalUriBaseIds"] == {"PROJECTROOT": {"uri": root.as_uri() + "/"}}
    results = sarif_run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("contradiction", "warning"),
        ("secret", "error"),
        ("stale", "warning"),
    ]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]

    def where(location: dict) -> tuple:
        physical = location["physicalLocation"]
        region = physical["region"]
        artifact = physical["artifactLocation"]
        return artifact["uri"], artifact["uriBaseId"], region["startLine"], region["endLine"]

    contra, leak, cited = results
    assert [where(x) for x in contra["locations"]] == [("CLAUDE.md", "PROJECTROOT", 3, 3)]
    assert [where(x) for x in contra["relatedLocations"]] == [("AGENTS.md", "PROJECTROOT", 1, 1)]
    assert OLD in contra["relatedLocations"][0]["message"]["text"]
    assert NEW in contra["message"]["text"]
    assert [where(x) for x in leak["locations"]] == [("CLAUDE.md", "PROJECTROOT", 4, 4)]
    assert leak["properties"]["secretKind"] == "aws-access-key"
    assert [where(x) for x in cited["locations"]] == [("src/io.py", "PROJECTROOT", 1, 2)]


def test_fail_on_chooses_the_kinds_that_fail_and_notes_are_read_again(run, tmp_path):
    root = _project(tmp_path)
    _stale_memory(run, root)
    assert run("check", "-p", str(root), "--fail-on", "none")[0] == 0
    assert run("check", "-p", str(root), "--fail-on", "secret")[0] == 1
    # the notes fixed on disk: read again by the next check, only the stale citation is left
    (root / "CLAUDE.md").write_text(f"# Rules\n\n- {NEW}\n")
    (root / "AGENTS.md").write_text("- Run the tests with make test.\n")
    code, out, _ = run("check", "-p", str(root), "--fail-on", "secret,contradiction")
    assert code == 0
    assert out.splitlines()[-1].startswith("1 finding (1 stale) in ")
    assert run("check", "-p", str(root), "--fail-on", "contradiction", "--fail-on", "stale")[0] == 1
    assert run("check", "-p", str(root))[0] == 1  # default: any


def test_a_clean_project_exits_0(run, tmp_path):
    root = tmp_path / "clean"
    root.mkdir()
    (root / "AGENTS.md").write_text("- Deploys go through GitHub Actions.\n- Use pnpm.\n")
    code, out, err = run("check", "-p", str(root))
    assert (code, err) == (0, "")
    assert out == f"0 findings in {root}: 1 note file read; citations: none\n"
    code, out, _ = run("check", "-p", str(root), "--sarif")
    assert code == 0
    log = json.loads(out)
    _sarif_valid(log)
    assert log["runs"][0]["results"] == []
    code, out, _ = run("check", "-p", str(root), "--json")
    assert code == 0 and json.loads(out)["findings"] == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "--project: a project is required"),
        (("-p", "{missing}"), "is not a folder"),
        (("-p", "{root}", "--fail-on", "typos"), "--fail-on: 'typos' is not one of: none, any"),
        (("-p", "{root}", "--fail-on", "none,secret"), "--fail-on: none fails on nothing"),
        (("-p", "{root}", "--json", "--sarif"), "--json or --sarif, not both"),
        (("-p", "{root}", "--wait", "0"), "--wait: must be more than 0"),
    ],
)
def test_bad_input_exits_2_with_one_line(run, tmp_path, args, says):
    root = _project(tmp_path)
    named = [a.format(root=root, missing=tmp_path / "missing") for a in args]
    code, out, err = run("check", *named)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("memls: error: ") and says in err, err


def test_through_a_running_daemon_the_notes_are_read_and_checked_first(run, tmp_path):
    """The daemon has not read the project: the check has it read and waits for its
    contradiction check; a note changed on disk a moment before a check is read by it."""
    root = _project(tmp_path)
    with socket_daemon(tmp_path / "data"):
        code, out, err = run("check", "-p", str(root), "--json")
        assert code == 1, err
        kinds = [f["kind"] for f in json.loads(out)["findings"]]
        assert kinds == ["contradiction", "secret"]
        assert json.loads(run("watched", "--json")[1])["projects"][0]["project"] == str(root)

        (root / "CLAUDE.md").write_text(f"# Rules\n\n- {NEW}\n")
        (root / "AGENTS.md").write_text("- Run the tests with make test.\n")
        code, out, err = run("check", "-p", str(root))
        assert (code, err) == (0, "")
        assert out == f"0 findings in {root}: 2 note files read; citations: none\n"
