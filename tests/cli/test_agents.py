"""`memls context` and `memls promote` as subprocesses (no daemon: each command owns the store
for its run), the session rule kept across commands, the promote round trip."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def memls(data_dir, *args, check=True):
    result = subprocess.run(
        [sys.executable, "-m", "memls", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def data_dir(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir(mode=0o700)
    (folder / "config.toml").write_text("[index]\nvectors = false\n")
    return folder


def test_context_budget_and_session_across_commands(data_dir, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    rule = json.loads(
        memls(
            data_dir,
            "store",
            "Never log card numbers",
            "-p",
            str(repo),
            "-t",
            "constraint",
            "--json",
        ).stdout
    )
    memls(data_dir, "store", "The payment client retries 3 times", "-p", str(repo), "-t", "fact")
    first = memls(
        data_dir,
        "context",
        "-p",
        str(repo),
        "--prompt",
        "payment client retries",
        "--session",
        "s1",
        "--budget",
        "300",
    )
    assert rule["id"] in first.stdout and "payment client retries 3 times" in first.stdout
    assert "of 300 tokens (bge-small-en-v1.5 WordPiece" in first.stderr
    second = memls(
        data_dir,
        "context",
        "-p",
        str(repo),
        "--prompt",
        "payment client retries",
        "--session",
        "s1",
        "--json",
    )
    result = json.loads(second.stdout)
    assert result["markdown"] == "" and result["repeated"] == 2 and result["entries"] == []
    relative = memls(data_dir, "context", "-p", ".", "--json", check=False)  # cwd: not the repo
    assert json.loads(relative.stdout)["entries"] == []
    bad = memls(data_dir, "context", "-p", str(repo), "--budget", "10", check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("memls: error: --budget")


def test_promote_round_trip(data_dir, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    stored = json.loads(
        memls(
            data_dir,
            "store",
            "Feature flags live in config/flags.yaml",
            "-p",
            str(repo),
            "-t",
            "convention",
            "--json",
        ).stdout
    )
    done = memls(data_dir, "promote", stored["id"], "-p", str(repo), "--json")
    promoted = json.loads(done.stdout)
    note = repo / ".memls" / "memory.md"
    assert promoted["path"] == str(note) and promoted["created"]
    text = note.read_text()
    assert "## Conventions\n\n- Feature flags live in config/flags.yaml\n" in text
    # the note synced again (as the watcher would) keeps the same single memory
    synced = memls(data_dir, "list", "-p", str(repo), "--json")
    (memory,) = json.loads(synced.stdout)["memories"]
    assert memory["id"] == stored["id"] and memory["sourceUri"] == promoted["uri"]
    again = memls(data_dir, "promote", stored["id"], "-p", str(repo))
    assert "already in" in again.stdout and note.read_text() == text
    outside = memls(
        data_dir, "promote", stored["id"], "-p", str(repo), "--to", "../x.md", check=False
    )
    assert outside.returncode == 2 and outside.stderr.startswith("memls: error: --to")
    assert not (tmp_path / "x.md").exists()


def test_context_paths_in_one_flag_and_prompt_time(data_dir, tmp_path):
    """`--paths a,b` is two paths, as `--paths a --paths b` is; `--no-standing` gives only what
    is relevant to the prompt and paths (the prompt hook's briefing)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    ids = {}
    for name, text in (("a.py", "Parse dates with fromisoformat"), ("b.py", "Cache rates 1 h")):
        stored = memls(
            data_dir,
            *("store", text, "-p", str(repo), "-t", "convention"),
            *("--source", (repo / name).as_uri(), "--json"),
        )
        ids[name] = json.loads(stored.stdout)["id"]
    memls(data_dir, "store", "Never log card numbers", "-p", str(repo), "-t", "constraint")

    def given(*args):
        out = memls(data_dir, "context", "-p", str(repo), "--no-standing", "--json", *args)
        return [e["memory"]["id"] for e in json.loads(out.stdout)["entries"]]

    both = sorted(ids.values())
    assert sorted(given("--paths", "a.py,b.py")) == both
    assert sorted(given("--paths", "a.py", "--path", "b.py")) == both
    assert given("--paths", "b.py") == [ids["b.py"]]
    standing = memls(data_dir, "context", "-p", str(repo), "--json").stdout
    assert [e["section"] for e in json.loads(standing)["entries"]] == ["standing"] * 3


def test_a_tight_budget_gives_what_answers_the_prompt(tmp_path):
    """The README's command, with the packaged models: `memls context --budget 120 --prompt
    "how do we run the integration tests"` on a project whose newer conventions would fill
    the budget gives the older one that answers the prompt, first."""
    data_dir, repo = tmp_path / "data", tmp_path / "repo"
    repo.mkdir()
    conventions = [
        "Integration tests need a running Postgres 16 container.",
        "Commit messages follow the Conventional Commits format.",
        "Public functions carry type hints and a docstring.",
        "Feature flags live in config/flags.yaml, one file per service.",
        "Logs are structured JSON, one object per line, never plain text.",
        "Branches are named after their ticket, e.g. PAY-123-refund-retry.",
    ]
    items = tmp_path / "conventions.jsonl"
    items.write_text(
        "\n".join(
            json.dumps({"text": t, "type": "convention", "validFrom": f"2025-0{i + 1}-01"})
            for i, t in enumerate(conventions)
        )
    )
    memls(data_dir, "ingest", str(items), "-p", str(repo))
    args = ["context", "-p", str(repo), "--budget", "120"]
    prompted = json.loads(
        memls(data_dir, *args, "--prompt", "how do we run the integration tests", "--json").stdout
    )
    assert prompted["tokens"] <= 120 and prompted["dropped"] > 0
    first = prompted["entries"][0]
    assert first["section"] == "relevant" and first["memory"]["content"] == conventions[0]
    unprompted = json.loads(memls(data_dir, *args, "--json").stdout)
    given = [e["memory"]["content"] for e in unprompted["entries"]]
    assert conventions[0] not in given and conventions[-1] in given  # the newest fill it
