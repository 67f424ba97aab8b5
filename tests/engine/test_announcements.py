"""What the engine tells the fronts: every change that can alter what an editor shows is
announced after it commits — maintenance expiry and resolving a pair included."""

from __future__ import annotations

from memls import protocol as p


def _listen(engine):
    heard: list[tuple[str, object]] = []
    engine.listeners.append(lambda method, payload: heard.append((method, payload)))
    return heard


def test_maintain_announces_what_it_expired_and_the_index_drops_it(vengine, clock):
    keep = vengine.store(p.StoreParams(text="Deploys go out on Tuesdays", project="m")).id
    gone = vengine.store(
        p.StoreParams(text="The staging database is db-7", project="m", valid_until="2025-01-02")
    ).id
    assert vengine.flush(timeout=120)
    assert gone in vengine.index.all_ids("m")
    heard = _listen(vengine)
    clock.set("2025-01-03T00:00:00Z")
    result = vengine.maintain(p.MaintainParams(project="m"))
    assert result.expired == [gone]
    changed = [payload for method, payload in heard if method == "memory/changed"]
    assert [(c.op, c.ids) for c in changed] == [("maintain", [gone])]
    assert vengine.flush(timeout=120)  # the indexer was kicked: the copy follows the record
    assert set(vengine.index.all_ids("m")) == {keep}
    assert vengine.doctor(p.DoctorParams(project="m")).ok


def test_maintain_with_nothing_due_announces_nothing(engine):
    engine.store(p.StoreParams(text="Deploys go out on Tuesdays", project="m"))
    heard = _listen(engine)
    assert engine.maintain(p.MaintainParams(project="m")).expired == []
    assert heard == []


def test_resolving_a_pair_is_announced_with_both_ids(engine):
    older = engine.store(p.StoreParams(text="We use yarn for package management", project="r")).id
    newer = engine.store(
        p.StoreParams(text="We no longer use yarn; we use pnpm for package management", project="r")
    ).id
    assert engine.flush(timeout=60)
    pairs = engine.conflicts(p.ConflictsParams(project="r")).conflicts
    assert [(c.newer.id, c.older.id) for c in pairs] == [(newer, older)]
    heard = _listen(engine)
    engine.resolve(p.ResolveParams(a=newer, b=older, action="dismiss", project="r"))
    changed = [payload for method, payload in heard if method == "memory/changed"]
    assert [(c.op, sorted(c.ids)) for c in changed] == [("resolve", sorted([newer, older]))]
