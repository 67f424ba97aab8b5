"""`memls conflicts A B`, `store --wait` and `resolve` from the command line, in process."""

from __future__ import annotations

import json

from memls.cli import main

YARN = "We use yarn for package management"
PNPM = "We switched from yarn to pnpm for package management"


def test_cli_pair_verdict_store_wait_and_resolve(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMLS_DATA_DIR", str(tmp_path / "data"))
    assert (
        main(
            ["conflicts", "The API listens on port 8080", "The API listens on port 9090", "--json"]
        )
        == 0
    )
    verdict = json.loads(capsys.readouterr().out)
    assert set(verdict) >= {"contradiction", "confidence", "signals", "similarity"}
    assert verdict["contradiction"] and verdict["signals"][0]["kind"] == "value_change"
    # scoring a pair goes through the engine handle (a running daemon would answer) and
    # writes nothing: the store holds no memory and no audit row afterwards
    assert main(["stats", "-p", "w", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["memories"] == 0
    main(
        [
            "conflicts",
            "We do not use Redis for sessions",
            "We use Postgres for sessions and Redis for rate limiting",
            "--json",
        ]
    )
    assert json.loads(capsys.readouterr().out)["contradiction"] is False
    main(["store", "-p", "w", YARN, "--json"])
    old = json.loads(capsys.readouterr().out)["id"]
    assert main(["store", "-p", "w", PNPM, "--wait", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["older"]["id"] for c in out["conflicts"]] == [old]
    assert main(["resolve", out["id"], old, "--action", "dismiss", "-p", "w", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["conflict"]["status"] == "dismissed"
    assert main(["conflicts", "only one text"]) == 2
    assert "TEXT_A TEXT_B" in capsys.readouterr().err


def test_cli_lists_a_project_conflict_in_words(tmp_path, capsys, monkeypatch):
    """`memls conflicts` names each pair by its kind in words, each side quoted and placed
    (a stored memory comes from no file), with the ids `resolve` takes."""
    monkeypatch.setenv("MEMLS_DATA_DIR", str(tmp_path / "data"))
    main(["store", "-p", "w", YARN, "--json"])
    old = json.loads(capsys.readouterr().out)["id"]
    assert main(["store", "-p", "w", PNPM, "--wait", "--json"]) == 0
    new = json.loads(capsys.readouterr().out)["id"]
    assert main(["conflicts", "-p", "w"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("open      a later switch (confidence ")
    assert lines[0].endswith(f"; {new} vs {old})")
    assert lines[1:3] == [
        f"    newer a stored memory: “{PNPM}”",
        f"    older a stored memory: “{YARN}”",
    ]
