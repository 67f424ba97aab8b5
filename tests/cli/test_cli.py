"""The command line, in process (real engine, real file) and once as an installed program."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memls import __version__


def js(run, *args):
    code, out, err = run(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_version_and_help(run):
    assert run("--version")[:2] == (0, f"memls {__version__}\n")
    code, out, _ = run("--help")
    assert code == 0 and "store" in out and "query" in out and "review" in out


def test_missing_project_is_one_line_exit_2_and_changes_nothing(run, tmp_path):
    for args in (
        ["store", "x"],
        ["query", "x"],
        ["list"],
        ["stats"],
        ["forgotten"],
        ["export"],
        ["get", "m_1"],
        ["review", "list"],
        ["maintain"],
    ):
        code, out, err = run(*args)
        assert code == 2, args
        assert err.count("\n") == 1 and "--project" in err, (args, err)
    code, _, err = run("store", "x", "--project", "  ")
    assert code == 2 and "--project" in err and err.count("\n") == 1
    assert not (tmp_path / "data").exists()


def test_store_query_get_list_json(run):
    stored = js(run, "store", "--project", "web", "--type", "decision", "We deploy with Kubernetes")
    assert stored["created"] and stored["id"].startswith("m_")
    dup = js(run, "store", "-p", "web", "we deploy with kubernetes")
    assert dup["duplicate"] and dup["id"] == stored["id"]
    found = js(run, "query", "-p", "web", "how do we deploy")
    assert [r["id"] for r in found["results"]] == [stored["id"]]
    assert {"id", "content", "score"} <= set(found["results"][0])
    assert js(run, "query", "-p", "api", "how do we deploy")["results"] == []
    got = js(run, "get", stored["id"], "-p", "web")
    assert got["content"] == "We deploy with Kubernetes" and got["type"] == "decision"
    code, _, err = run("get", stored["id"], "-p", "api")
    assert code == 1 and "no memory" in err
    assert len(js(run, "list", "-p", "web")["memories"]) == 1


def test_bad_input_is_one_line_and_non_zero(run):
    cases = [
        (["store", "x", "-p", "a", "--type", "opinion"], "--type"),
        (["store", "x", "-p", "a", "--valid-from", "soon"], "--valid-from"),
        (["query", "x", "-p", "a", "--valid-at", "2025-13-45"], "--valid-at"),
        (["query", "x", "-p", "a", "--k", "0"], "--k"),
        (["forget", "m_nope", "-p", "a", "--reason", "bored"], "--reason"),
        (["feedback", "m_nope", "meh", "-p", "a"], "SIGNAL"),
        (["forget", "m_nope", "-p", "a", "--reason", "user_deleted"], "ID"),
        (["nosuchverb"], "No such command"),
    ]
    for args, needle in cases:
        code, out, err = run(*args)
        assert code != 0 and out == "" and err.count("\n") == 1 and needle in err, (args, err)
    assert js(run, "stats", "-p", "a")["memories"] == 0


def test_lifecycle_through_the_cli(run, tmp_path):
    old = js(run, "store", "-p", "w", "--valid-from", "2025-01-01", "We use yarn")["id"]
    new = js(run, "store", "-p", "w", "--valid-from", "2025-03-01", "We moved to pnpm")["id"]
    sup = js(run, "supersede", old, "--by", new, "-p", "w")
    assert sup["old"]["status"] == "superseded" and sup["old"]["supersededBy"] == [new]
    then = js(run, "query", "-p", "w", "yarn pnpm", "--valid-at", "2025-02-01")
    assert [r["id"] for r in then["results"]] == [old]
    for _ in range(2):
        fb = js(run, "feedback", new, "outdated", "-p", "w", "--query", "package manager")
    assert fb["trust"] == "flagged" and fb["score"] == -4
    assert [m["id"] for m in js(run, "review", "list", "-p", "w")["memories"]] == [new]
    assert (
        js(run, "review", "approve", new, "-p", "w", "--note", "fine")["transition"]["toTrust"]
        == "verified"
    )
    code, _, err = run("review", "approve", new, "-p", "w")
    assert code == 1 and "already verified" in err
    js(run, "forget", new, "-p", "w", "--reason", "user_deleted")
    log = js(run, "forgotten", "-p", "w", "--reason", "user_deleted")["entries"]
    assert [e["memoryId"] for e in log] == [new]
    code, _, err = run("store", "-p", "w", "We moved to pnpm")
    assert code == 1 and "user_deleted" in err
    assert js(run, "store", "-p", "w", "--force", "We moved to pnpm")["tombstoneCleared"]
    ops = [e["op"] for e in js(run, "audit", "-p", "w")["entries"]]
    assert {"store", "supersede", "feedback", "trust", "forget", "tombstone_cleared"} <= set(ops)
    assert js(run, "maintain", "-p", "w")["failed"] == []
    assert js(run, "maintain", "-p", "w", "--failed")["failed"] == []


def test_export_import_round_trip_via_files(run, tmp_path, monkeypatch):
    js(run, "store", "-p", "w", "Tabs, not spaces")
    out = tmp_path / "w.jsonl"
    assert run("export", "-p", "w", "--out", str(out))[0] == 0
    monkeypatch.setenv("MEMLS_DATA_DIR", str(tmp_path / "second"))
    imported = js(run, "import", str(out), "-p", "w")
    assert imported["imported"]["memories"] == 1
    assert js(run, "query", "-p", "w", "tabs")["results"][0]["content"] == "Tabs, not spaces"
    code, _, err = run("import", str(tmp_path / "missing.jsonl"), "-p", "w")
    assert code == 2 and "FILE" in err


def test_installed_entry_points(tmp_path):
    exe = Path(sys.executable).with_name("memls")
    env = {
        "MEMLS_DATA_DIR": str(tmp_path / "d"),
        "MEMLS_MODEL_CACHE": os.environ["MEMLS_MODEL_CACHE"],  # the run's, not the user's cache
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == f"memls {__version__}"
    out = subprocess.run(
        [sys.executable, "-m", "memls", "store", "-p", "x", "hello", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 0 and json.loads(out.stdout)["created"]
    out = subprocess.run(
        [str(exe), "store", "hello"], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode == 2 and out.stderr.strip().startswith("memls: error: --project")


def test_doctor_exits_1_on_a_problem_and_file_errors_are_one_line(run, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text('[models]\nembedder_dir = "/nowhere"\n')
    code, out, _ = run("doctor", "-p", "w")
    assert code == 1 and "embedder missing" in out
    code, out, err = run("export", "-p", "w", "--out", str(tmp_path / "no" / "such" / "x"))
    assert code == 1 and err.count("\n") == 1 and "No such file" in err


def test_a_folder_names_one_project_on_every_verb(run, tmp_path, monkeypatch):
    """`-p .` and the folder's absolute path are one project, whatever the verb: what `store`
    keeps, `query`, `list`, `get` and `stats` find."""
    project = tmp_path / "app"
    project.mkdir()
    monkeypatch.chdir(project)
    stored = js(run, "store", "-p", ".", "We deploy on Fridays")
    assert stored["project"] == str(project)
    for where in (".", str(project), "../app"):
        hits = js(run, "query", "-p", where, "deploy", "--mode", "lexical")["results"]
        assert [h["id"] for h in hits] == [stored["id"]], where
        assert js(run, "stats", "-p", where)["memories"] == 1, where
        assert js(run, "get", stored["id"], "-p", where)["id"] == stored["id"], where
    assert js(run, "stats", "-p", "app")["memories"] == 0  # a key, not a folder here
