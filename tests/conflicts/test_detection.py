"""Contradictions at write time, through the real engine: candidates, resolver, notifications."""

from __future__ import annotations

import pytest

from memls import protocol as p
from memls.engine import Engine
from memls.errors import NotFound

YARN = "We use yarn for package management"
PNPM = "We switched from yarn to pnpm for package management"


def store(engine, text, project="alpha", **kw):
    return engine.store(p.parse(p.StoreParams, {"text": text, "project": project, **kw}))


def open_conflicts(engine, project="alpha", **kw):
    return engine.conflicts(p.ConflictsParams(project=project, **kw)).conflicts


@pytest.fixture(params=["vectors", "lexical"])
def any_engine(request, tmp_path, clock, models):
    """Detection with the models (cosine gate, Chroma candidates) and without (BM25, Jaccard)."""
    vectors = request.param == "vectors"
    with Engine.open(
        tmp_path / "d",
        front="test",
        clock=clock,
        vectors=vectors,
        models=models if vectors else None,
    ) as engine:
        yield engine


def test_a_contradiction_is_recorded_both_ways_with_its_signals(any_engine):
    e = any_engine
    old = store(e, YARN)
    store(e, "The API listens on port 8080")
    new = store(e, PNPM)
    assert e.flush()
    [c] = open_conflicts(e)
    assert (c.newer.id, c.older.id, c.status) == (new.id, old.id, "open")
    assert c.confidence >= 0.5 and c.signals and all(s.triggers for s in c.signals)
    assert c.proposal == "supersede"  # "switched from ... to": an update marker
    assert c.similarity_source == ("cosine" if e.vectors_enabled else "lexical")
    edges = e.db.read("SELECT src, dst, status FROM edges WHERE kind = 'contradicts' ORDER BY src")
    assert sorted((r["src"], r["dst"]) for r in edges) == sorted(
        [(new.id, old.id), (old.id, new.id)]
    )
    assert {r["status"] for r in edges} == {"open"}
    assert [(x.newer.id, x.older.id) for x in open_conflicts(e, id=old.id)] == [(new.id, old.id)]
    ops = [a.op for a in e.audit(p.AuditParams(project="alpha", id=new.id)).entries]
    assert "conflict_detected" in ops


def test_compatible_statements_raise_nothing(any_engine):
    e = any_engine
    store(e, "We use Postgres for sessions and Redis for rate limiting")
    store(e, "We do not use Redis for sessions")
    store(e, "The API listens on port 8080")
    store(e, "The admin dashboard listens on port 9000")
    assert e.flush()
    assert open_conflicts(e) == []


def test_candidates_are_scoped_to_the_project_and_to_what_is_valid_now(vengine):
    store(vengine, YARN, project="beta")
    old = store(vengine, "The release branch is cut on Tuesday", validFrom="2024-01-01")
    newer = store(vengine, "The release branch is cut on Friday", validFrom="2024-03-01")
    vengine.flush()
    vengine.resolve(p.ResolveParams(a=newer.id, b=old.id, action="supersede", project="alpha"))
    store(vengine, PNPM)  # beta's yarn memory is not a candidate for alpha
    store(vengine, "The release branch is cut on Monday")  # nor the superseded Tuesday one
    vengine.flush()
    pairs = {(c.newer.content, c.older.content) for c in open_conflicts(vengine)}
    assert ("The release branch is cut on Monday", "The release branch is cut on Friday") in pairs
    assert all("Tuesday" not in o and "yarn" not in o for _, o in pairs)
    assert open_conflicts(vengine, project="beta") == []


def test_dismissing_a_pair_remembers_it_by_content(vengine):
    old = store(vengine, "Light theme uses a white background")
    new = store(vengine, "Light theme uses a black background")
    vengine.flush()
    [c] = open_conflicts(vengine)
    r = vengine.resolve(
        p.ResolveParams(
            a=new.id, b=old.id, action="dismiss", project="alpha", note="the designers want both"
        )
    )
    assert r.conflict.status == "dismissed" and open_conflicts(vengine) == []
    assert [x.status for x in open_conflicts(vengine, status="dismissed")] == ["dismissed"]
    # the same statement stored again (new id) is not raised again
    vengine.forget(p.ForgetParams(id=new.id, reason="user_deleted", project="alpha"))
    again = store(vengine, "Light theme uses a black background", force=True)
    vengine.flush()
    assert again.id != new.id and open_conflicts(vengine) == []
    with pytest.raises(NotFound):
        vengine.resolve(p.ResolveParams(a=again.id, b=old.id, action="dismiss", project="alpha"))


def test_resolving_by_supersession_and_by_the_supersede_verb(vengine):
    old = store(vengine, YARN, validFrom="2024-01-01")
    new = store(vengine, PNPM, validFrom="2024-03-01")
    vengine.flush()
    r = vengine.resolve(p.ResolveParams(a=old.id, b=new.id, action="supersede", project="alpha"))
    assert r.conflict.status == "resolved"
    got = vengine.get(p.GetParams(id=old.id, project="alpha"))
    assert got.status == "superseded" and got.superseded_by == [new.id]
    a = store(vengine, "Alice owns the billing service")
    b = store(vengine, "Bob now owns the billing service")
    vengine.flush()
    assert len(open_conflicts(vengine)) == 1
    vengine.supersede(p.SupersedeParams(old=a.id, by=b.id, project="alpha"))
    assert open_conflicts(vengine) == []
    assert [c.status for c in open_conflicts(vengine, status="resolved")] == [
        "resolved",
        "resolved",
    ]


def test_changes_are_announced_after_commit_and_never_for_a_rollback(vengine, monkeypatch):
    import sqlite3

    from memls.store.edges import Conflicts

    old = store(vengine, YARN, validFrom="2024-01-01")
    new = store(vengine, PNPM, validFrom="2024-03-01")
    vengine.flush()
    seen = []

    def listener(method, payload):
        if method != "memory/changed":
            return
        with sqlite3.connect(vengine.db.path) as own:  # sees committed state only
            (status,) = own.execute(
                "SELECT status FROM memories WHERE id = ?", (old.id,)
            ).fetchone()
        seen.append((payload.op, status))

    vengine.listeners.append(listener)

    def fails(*args, **kwargs):
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(Conflicts, "close", fails)  # fails after the nested supersede
    with pytest.raises(RuntimeError):
        vengine.resolve(p.ResolveParams(a=old.id, b=new.id, action="supersede", project="alpha"))
    assert seen == []  # rolled back: nothing happened, nothing announced
    assert vengine.get(p.GetParams(id=old.id, project="alpha")).status == "active"
    monkeypatch.undo()
    vengine.resolve(p.ResolveParams(a=old.id, b=new.id, action="supersede", project="alpha"))
    # announced once committed: the supersession, then the resolved pair
    assert seen == [("supersede", "superseded"), ("resolve", "superseded")]


def test_auto_supersede_only_when_configured(tmp_path, models):
    data = tmp_path / "d"
    data.mkdir()
    (data / "config.toml").write_text("[conflicts]\nauto_supersede = true\n")
    with Engine.open(data, models=models) as e:
        old = store(e, YARN)
        new = store(e, PNPM)
        e.flush()
        assert e.get(p.GetParams(id=old.id, project="alpha")).superseded_by == [new.id]
        [c] = open_conflicts(e, status="resolved")
        assert c.proposal == "supersede"


def test_store_is_acknowledged_before_detection_and_notified_after(vengine):
    seen = []
    vengine.listeners.append(lambda method, payload: seen.append((method, payload)))
    vengine.worker.stop()  # hold detection back
    vengine.worker = None
    store(vengine, YARN)
    new = store(vengine, PNPM)
    assert open_conflicts(vengine) == []
    assert [m for m, _ in seen] == ["memory/changed", "memory/changed"]  # the two stores
    vengine.start_worker()
    assert vengine.flush()
    assert [m for m, _ in seen[2:]] == ["memory/conflicts"]
    note = p.to_wire(seen[2][1])
    assert note["id"] == new.id and note["conflicts"][0]["newer"]["id"] == new.id


def test_detection_runs_without_the_embedder(tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    (data / "config.toml").write_text(f'[models]\nembedder_dir = "{tmp_path}/none"\n')
    with Engine.open(data) as e:
        store(e, YARN)
        store(e, PNPM)
        e.flush(timeout=5)
        [c] = open_conflicts(e)
        assert c.similarity_source == "lexical"


def test_a_batch_is_compared_with_the_index_and_with_its_own_earlier_rows(vengine):
    """The check runs before the batch is indexed: the older side comes from the index (an
    earlier batch) or from the batch itself; a later row of the batch is never the older."""
    e = vengine
    first = store(e, YARN)
    assert e.flush()
    store(e, "The API listens on port 8080")
    port = store(e, "The API listens on port 9090")
    second = store(e, PNPM)
    assert e.flush()
    found = {(c.newer.id, c.older.id) for c in open_conflicts(e)}
    assert (second.id, first.id) in found
    assert all(newer != first.id for newer, _ in found)
    assert any(newer == port.id for newer, _ in found)


def test_a_change_of_a_word_the_whole_project_uses_names_no_one_thing(any_engine):
    """In a project where 'cluster' is in nearly every memory, "We will decommission the
    cluster" replaces no statement that mentions a cluster; in a project where the word is
    rare, the same change aligns with the statement that names it."""
    e = any_engine
    rare = "The build tools run on the cluster."
    change = "We will decommission the cluster."
    store(e, rare, project="beta")
    colours = "red orange yellow green blue indigo violet black white grey pink brown gold"
    for word in (colours + " silver teal navy lime coral amber jade").split():
        store(e, f"The {word} team deploys its services to the shared cluster.")
    store(e, rare)
    store(e, change)
    store(e, change, project="beta")
    assert e.flush()
    assert [c.older.content for c in open_conflicts(e) if c.newer.content == change] == []
    beta = [(c.newer.content, c.older.content) for c in open_conflicts(e, project="beta")]
    assert beta == [(change, rare)]


def test_a_memory_no_longer_current_when_it_is_checked_gets_no_contradiction(engine):
    """An imported memory can come in superseded: its contradictions were its source's."""
    from memls.conflicts.detector import Detector

    store(engine, YARN)
    new = store(engine, PNPM)
    later = store(engine, "We use Bun for package management now")
    assert engine.flush()
    with engine.storage.read("alpha") as tx:
        row = tx.memories.fetch(new.id)
    detector = Detector(engine.storage.search, None, engine.clock())
    assert [f.older["content"] for f in detector.detect_all([row], None)[0]] == [YARN]
    engine.supersede(p.SupersedeParams(old=new.id, by=later.id, project="alpha"))
    with engine.storage.read("alpha") as tx:
        row = tx.memories.fetch(new.id)
    assert row["status"] == "superseded"
    assert detector.detect_all([row], None) == [[]]
