"""Maintenance: expiry by validUntil and per-type TTL, dead letters and their retry."""

from __future__ import annotations

from engine_helpers import store
from memls import protocol as p
from memls.engine import Engine


def test_maintain_expires_by_valid_until_and_ttl_and_keeps_superseded(engine, clock, tmp_path):
    clock.set("2025-01-01T00:00:00Z")
    gone = store(engine, "Freeze until the release", validUntil="2025-01-10")
    old = store(engine, "Old policy")
    new = store(engine, "New policy", validFrom="2025-01-02")
    engine.supersede(p.SupersedeParams(old=old.id, by=new.id, project="alpha"))
    keep = store(engine, "Lasting convention", type="convention")
    clock.set("2025-02-01T00:00:00Z")
    r = engine.maintain(p.MaintainParams(project="alpha"))
    assert r.expired == [gone.id] and r.failed == []
    assert {m.id for m in engine.list(p.ListParams(project="alpha")).memories} == {
        old.id,
        new.id,
        keep.id,
    }
    log = engine.forgotten(p.ForgottenParams(project="alpha", reason="ttl_expired")).entries
    assert [e.memory_id for e in log] == [gone.id]


def test_maintain_ttl_per_type(tmp_path, clock):
    data = tmp_path / "d"
    data.mkdir()
    (data / "config.toml").write_text("[ttl_days]\nnote = 30\n")
    clock.set("2025-01-01T00:00:00Z")
    with Engine.open(data, clock=clock, vectors=False) as engine:
        note = store(engine, "A passing note")
        decision = store(engine, "A lasting decision", type="decision")
        clock.set("2025-01-20T00:00:00Z")
        assert engine.maintain(p.MaintainParams(project="alpha")).expired == []
        clock.set("2025-02-05T00:00:00Z")
        assert engine.maintain(p.MaintainParams(project="alpha")).expired == [note.id]
        assert engine.get(p.GetParams(id=decision.id, project="alpha"))


def test_failed_maintenance_goes_to_dead_letters_and_is_retried(engine, clock):
    clock.set("2025-01-01T00:00:00Z")
    stuck = store(engine, "Stuck memory", validUntil="2025-01-02")
    free = store(engine, "Free memory", validUntil="2025-01-02")
    with engine.db.transaction() as conn:
        conn.execute(
            f"CREATE TRIGGER stuck BEFORE DELETE ON memories WHEN old.id = '{stuck.id}' "
            "BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
        )
    clock.set("2025-02-01T00:00:00Z")
    r = engine.maintain(p.MaintainParams(project="alpha"))
    assert r.expired == [free.id]
    assert [(d.memory_id, d.attempts) for d in r.failed] == [(stuck.id, 1)]
    assert "disk says no" in r.failed[0].error
    again = engine.maintain(p.MaintainParams(project="alpha"))
    assert [(d.memory_id, d.attempts) for d in again.failed] == [(stuck.id, 2)]
    assert engine.dead_letters(p.MaintainParams(project="alpha")).failed[0].attempts == 2
    assert engine.dead_letters(p.MaintainParams(project="beta")).failed == []
    with engine.db.transaction() as conn:
        conn.execute("DROP TRIGGER stuck")
    fixed = engine.maintain(p.MaintainParams(project="alpha"))
    assert fixed.expired == [stuck.id] and fixed.retried == 1 and fixed.failed == []
    assert engine.stats(p.StatsParams(project="alpha")).dead_letters == 0
