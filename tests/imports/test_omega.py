"""`memls import --from omega` on a store OMEGA 1.5.20 made itself: what comes in (with its
history, its scope kept explicit, through the write checks), what never does, and that the
store read is never changed and a second import changes nothing."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from memls.store.foreign import omega


def digest(db) -> dict[str, str]:
    """The store as OMEGA left it: every file of its folder (the database, no WAL beside it
    once OMEGA closed it), by name."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(db.parent.iterdir())
        if path.is_file()
    }


def rows(db) -> dict[str, sqlite3.Row]:
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return {r["node_id"]: r for r in conn.execute("SELECT * FROM memories")}
    finally:
        conn.close()


def listed(run, project: str) -> dict[str, dict]:
    code, out, err = run("list", "-p", project, "--json", "--limit", "1000")
    assert code == 0, err
    return {m["content"]: m for m in json.loads(out)["memories"]}


def test_import_keeps_history_scope_and_the_write_checks(run, scenario):
    db, a, b, ids = scenario
    before = digest(db)
    assert "omega.db" in before and "omega.db-wal" not in before
    omega_rows = rows(db)
    text = {name: omega_rows[key]["content"] for name, key in ids.items() if key in omega_rows}
    # the project already holds one text of the store, and a statement one contradicts
    assert run("store", text["dup"], "-p", str(a))[0] == 0
    contrary = "We do not use pytest-xdist; the test suite runs serially."
    assert run("store", contrary, "-p", str(a), "--type", "fact")[0] == 0
    restated = "The mobile apps share business logic through Kotlin Multiplatform."
    assert run("store", restated, "-p", str(a), "--type", "decision")[0] == 0

    code, out, err = run("import", "--from", "omega", str(db.parent), "-p", str(a), "--dry-run")
    assert code == 0, err
    assert "dry run, nothing changed" in out and "would import 10 of 12 memories" in out
    assert len(listed(run, str(a))) == 3  # nothing came in

    code, out, err = run("import", "--from", "omega", str(db), "-p", str(a), "--json")
    assert code == 0, err
    result = json.loads(out)
    (counts,) = result["projects"]
    assert (result["tool"], result["version"], result["dryRun"]) == ("omega", "16", False)
    assert counts["read"] == 12  # A's rows: by the project in their metadata
    assert counts["stored"] == 10 and counts["duplicates"] == 1
    assert counts["merged"] == 1  # the restatement, merged into the project's memory once indexed
    assert counts["refused"] == 1 and counts["secrets"] == {"github-token": 1}
    assert (counts["superseded"], counts["flagged"], counts["forgotten"]) == (2, 1, 1)
    # the supersession, OMEGA's contradicts edge and its `related` edge
    assert counts["edges"] == 3
    assert counts["tags"] == 2  # the preference's
    assert counts["conflicts"] >= 2  # OMEGA's pair, and the one memls found against `contrary`
    # rows of no project (OMEGA wrote A's folder into their `project` column) are listed only
    assert sorted(u["key"] for u in result["unscoped"]) == sorted(
        [ids["global_none"], ids["global_empty"]]
    )
    assert omega_rows[ids["global_none"]]["project"] == str(a)
    assert result["otherProjects"] == 2
    # OMEGA's forgetting rows about living memories (supersessions, the flag) and the deletion
    # nothing of A names are not A's deletions
    assert result["forgettingSkipped"] == 4

    memories = listed(run, str(a))
    assert len(memories) == 3 + 9  # the restatement went into the memory it restates
    assert text["restated"] not in memories and memories[restated]["seenAgain"] == 1
    for name in ("b1", "b2", "global_none", "global_empty", "secret", "dropped", "gone"):
        assert text.get(name) not in memories, name
    for name in ("old", "new", "flagged", "liked", "pref", "lesson", "claim", "counter"):
        m = memories[text[name]]
        source = omega_rows[ids[name]]
        assert m["importedFrom"] == "omega", name
        # the source's own times, in memls's form
        assert m["recordedAt"] == omega._ts(source["created_at"]), name
        assert m["validFrom"] == omega._ts(source["valid_from"]), name
    assert memories[text["dup"]]["importedFrom"] is None  # the project's own, seen again
    assert memories[text["dup"]]["seenAgain"] == 1
    old, new = memories[text["old"]], memories[text["new"]]
    assert old["status"] == "superseded" and old["supersededBy"] == [new["id"]]
    assert old["validUntil"] == omega._ts(omega_rows[ids["old"]]["valid_until"])
    assert memories[text["replaced"]]["status"] == "superseded"  # its successor was deleted
    assert {memories[text[n]]["type"] for n in ("pref", "lesson", "liked")} == {
        "preference",
        "lesson",
        "fact",
    }
    assert memories[text["liked"]]["feedbackScore"] == 1
    flagged = memories[text["flagged"]]
    assert (flagged["trust"], flagged["feedbackScore"]) == ("flagged", -4)
    counter = memories[text["counter"]]
    assert [c["id"] for c in counter["contradicts"]] == [memories[text["claim"]]["id"]]
    assert memories[contrary]["contradictedBy"] or memories[contrary]["contradicts"]
    # OMEGA's tags and its `related` edge, a named relation that is no contradiction
    assert memories[text["pref"]]["tags"] == ["review", "git"]
    lesson, liked = memories[text["lesson"]], memories[text["liked"]]
    assert lesson["related"] == [{"id": liked["id"], "label": "related"}]
    assert liked["relatedBy"] == [{"id": lesson["id"], "label": "related"}]
    assert lesson["contradicts"] == lesson["contradictedBy"] == []

    # the review flag OMEGA never clears is one a person can
    code, out, _ = run("review", "list", "-p", str(a), "--json")
    assert [m["id"] for m in json.loads(out)["memories"]] == [flagged["id"]]
    assert run("review", "approve", flagged["id"], "-p", str(a))[0] == 0
    assert listed(run, str(a))[text["flagged"]]["trust"] == "verified"

    # the deletion tied to A: in the forgetting log, and its text is not stored again unasked
    code, out, _ = run("forgotten", "-p", str(a), "--json")
    (entry,) = json.loads(out)["entries"]
    assert (entry["memoryId"], entry["reason"]) == (f"omega:{ids['gone']}", "user_deleted")
    code, _, err = run(
        "store", "Logs are shipped to Loki by the OpenTelemetry collector.", "-p", str(a)
    )
    assert code != 0 and "forgotten" in err

    # a second import changes nothing and says everything was there
    code, out, _ = run("stats", "-p", str(a), "--json")
    stats = json.loads(out)
    code, out, err = run("import", "--from", "omega", str(db), "-p", str(a), "--json")
    assert code == 0, err
    (again,) = json.loads(out)["projects"]
    assert again["stored"] == 0 and again["duplicates"] == 0 and again["forgotten"] == 0
    assert again["already"] == 12  # 11 memories taken (stored, merged or seen again), 1 deletion
    assert json.loads(run("stats", "-p", str(a), "--json")[1]) == stats
    # OMEGA's store was never written
    assert digest(db) == before


def test_unscoped_rows_come_in_only_where_they_are_sent(run, scenario):
    db, a, _, ids = scenario
    code, out, err = run(
        "import", "--from", "omega", str(db), "-p", str(a), "--unscoped-to", "@user", "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    mine, user = result["projects"]
    assert (mine["project"], user["project"]) == (str(a), "@user")
    assert user["stored"] == 2 and result["unscoped"] == [] and result["unscopedCount"] == 2
    texts = set(listed(run, "@user"))
    assert texts == {
        "Always answer in British English.",
        "Commit messages use the imperative mood.",
    }
    assert not texts & set(listed(run, str(a)))


def test_without_from_the_memls_export_import_works_as_before(run, tmp_path):
    assert run("store", "We use pnpm", "-p", "alpha")[0] == 0
    code, out, _ = run("export", "-p", "alpha")
    (tmp_path / "export.jsonl").write_text(out)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMLS_DATA_DIR", str(tmp_path / "other"))
        code, out, err = run("import", str(tmp_path / "export.jsonl"), "-p", "alpha")
    assert code == 0, err
    assert out.startswith("imported 1 memories")
