"""Export and import of one project: an exact round trip, and refusals that change nothing."""

from __future__ import annotations

import json

import pytest

from engine_helpers import store
from memls import protocol as p
from memls.engine import Engine
from memls.errors import InvalidInput, Refused


def _populated(engine, clock):
    clock.set("2025-06-01T00:00:00Z")
    a = store(engine, "We use yarn", validFrom="2025-01-01", type="decision")
    b = store(engine, "We use pnpm now", validFrom="2025-02-01", type="decision")
    engine.supersede(p.SupersedeParams(old=a.id, by=b.id, project="alpha"))
    c = store(engine, "Lint with ruff", type="convention")
    for _ in range(3):
        engine.feedback(
            p.FeedbackParams(id=c.id, signal="unhelpful", project="alpha", query="lint")
        )
    engine.review(p.ReviewParams(action="approve", id=c.id, project="alpha", note="ok"))
    d = store(engine, "Temporary")
    engine.forget(p.ForgetParams(id=d.id, reason="user_deleted", project="alpha"))
    store(engine, "Other project", project="beta")
    return a, b, c


def test_export_import_round_trips_exactly(engine, clock, tmp_path):
    _populated(engine, clock)
    exported = list(engine.export("alpha"))
    tables = {line.get("table") for line in exported[1:]}
    assert {
        "memories",
        "edges",
        "feedback",
        "trust_transitions",
        "forgetting_log",
        "tombstones",
        "audit",
    } <= tables
    assert all(line["row"]["project"] == "alpha" for line in exported[1:])
    lines = [json.dumps(x) for x in exported]
    with Engine.open(tmp_path / "other", clock=clock, vectors=False) as fresh:
        counts = fresh.import_("alpha", lines)
        assert counts["memories"] == 3 and counts["edges"] == 1
        again = list(fresh.export("alpha"))
        # every exported line comes back exactly, plus the import's own audit entry
        assert again[: len(exported)] == exported
        assert [x["row"]["op"] for x in again[len(exported) :]] == ["import"]
        a_results = fresh.query(p.QueryParams(query="yarn", project="alpha", valid_at="2025-01-15"))
        assert [h.content for h in a_results.results] == ["We use yarn"]
        with pytest.raises(Refused):  # importing twice conflicts: all or nothing
            fresh.import_("alpha", lines)
        assert fresh.stats(p.StatsParams(project="alpha")).memories == 3


def test_import_refuses_bad_files_and_other_projects(engine, clock, tmp_path):
    _populated(engine, clock)
    lines = [json.dumps(x) for x in engine.export("alpha")]
    with pytest.raises(InvalidInput, match="not 'beta'"):
        engine.import_("beta", lines)
    with pytest.raises(InvalidInput, match="line 1"):
        engine.import_("alpha", ["{not json"])
    with pytest.raises(InvalidInput, match="header"):
        engine.import_("alpha", lines[1:])
    assert engine.stats(p.StatsParams(project="beta")).memories == 1


def test_import_refuses_an_edge_into_another_project(engine, clock):
    a = store(engine, "Alpha fact", project="alpha")
    b = store(engine, "Beta fact", project="beta")
    lines = [json.dumps(x) for x in engine.export("alpha")]
    edge = {
        "table": "edges",
        "row": {
            "src": a.id,
            "dst": b.id,
            "kind": "supersedes",
            "project": "alpha",
            "created_at": "2025-01-01",
            "confidence": None,
            "status": None,
            "detail": None,
            "closed_at": None,
        },
    }
    engine.forget(p.ForgetParams(id=a.id, reason="user_deleted", project="alpha"))
    with pytest.raises(InvalidInput, match="edges.dst names memory .* another project"):
        engine.import_("alpha", [lines[0], lines[1], json.dumps(edge)])
    assert engine.get(p.GetParams(id=b.id, project="beta")).superseded_by == []


@pytest.mark.parametrize(
    "table, column",
    [
        ("forgetting_log", "memory_id"),
        ("tombstones", "memory_id"),
        ("feedback", "memory_id"),
        ("trust_transitions", "memory_id"),
        ("audit", "memory_id"),
        ("dead_letters", "memory_id"),
    ],
)
def test_import_refuses_any_row_naming_another_projects_memory(engine, table, column):
    """One project's import must not break another project: a log row of alpha naming beta's
    memory used to be accepted, and beta's next forget of it then failed with a traceback (the
    forgetting log's unique key has no project)."""
    alpha = store(engine, "Alpha fact", project="alpha")
    beta = store(engine, "Beta fact", project="beta")
    engine.forget(p.ForgetParams(id=alpha.id, reason="user_deleted", project="alpha"))
    lines = [json.dumps(x) for x in engine.export("alpha")]
    rows = [json.loads(line) for line in lines[1:]]
    model = (
        next(r for r in rows if r["table"] == table)
        if any(r["table"] == table for r in rows)
        else None
    )
    if model is None:  # a table alpha has no row of: build one from the schema
        names = [r[1] for r in engine.db.read(f"PRAGMA table_info({table})") if r[1] != "seq"]
        model = {
            "table": table,
            "row": {n: 1 if n in ("delta", "score_after", "attempts") else "x" for n in names},
        }
        model["row"]["project"] = "alpha"
    forged = {"table": table, "row": {**model["row"], column: beta.id}}
    before = [json.dumps(x) for x in engine.export("beta")]
    with pytest.raises(InvalidInput, match="another project"):
        engine.import_("alpha", [lines[0], json.dumps(forged)])
    # nothing changed, and beta's own forget still works
    assert [json.dumps(x) for x in engine.export("beta")] == before
    engine.forget(p.ForgetParams(id=beta.id, reason="user_deleted", project="beta"))
    assert engine.forgotten(p.ForgottenParams(project="beta")).entries[0].memory_id == beta.id


def test_tags_and_named_relations_round_trip(engine, clock, tmp_path):
    a, b, c = _populated(engine, clock)
    with engine.storage.write("alpha", "test") as tx:
        tx.tags.add(c.id, ["lint", "python"])
        tx.edges.relate(c.id, b.id, "depends_on", "2025-06-01T00:00:00.000000Z")
    lines = [json.dumps(x) for x in engine.export("alpha")]
    with Engine.open(tmp_path / "other", clock=clock, vectors=False) as fresh:
        counts = fresh.import_("alpha", lines)
        assert counts["memory_tags"] == 2 and counts["edges"] == 2
        got = fresh.get(p.GetParams(id=c.id, project="alpha"))
        assert got.tags == ["lint", "python"]
        assert [(r.id, r.label) for r in got.related] == [(b.id, "depends_on")]
        assert fresh.get(p.GetParams(id=b.id, project="alpha")).supersedes == [a.id]
