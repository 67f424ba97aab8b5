"""Bitemporal reads: valid time (validAt), transaction time (asOf), both at once, and the
supersession chain that links versions, against a model of every memory's intervals."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import count_rows, ids, query, store
from memls import protocol
from memls.errors import InvalidInput, NotFound, Refused
from property_helpers import Fresh, ts

WORD = "kubernetes"  # shared by every chain version (and some unrelated memories)


@dataclass
class PIT:
    """Model of a memory's times."""

    id: str
    text: str
    valid_from: str
    valid_until: str | None
    recorded_at: str
    invalidated_at: str | None = None
    matches: bool = True
    chain: int | None = None  # position in the chain, if part of it

    def valid_at(self, t: str) -> bool:
        return self.valid_from <= t and (self.valid_until is None or t < self.valid_until)

    def known_as_of(self, t: str) -> bool:
        return self.recorded_at <= t and (self.invalidated_at is None or t < self.invalidated_at)


def _around(moments) -> list[str]:
    """Each moment, one microsecond either side, and midpoints between neighbours."""
    parsed = sorted({datetime.fromisoformat(m) for m in moments})
    out = set()
    for a in parsed:
        for d in (-1, 0, 1):
            out.add(ts(a + timedelta(microseconds=d)))
    for a, b in zip(parsed, parsed[1:]):
        out.add(ts(a + (b - a) / 2))
    if parsed:
        out.add(ts(parsed[0] - timedelta(days=400)))
        out.add(ts(parsed[-1] + timedelta(days=400)))
    return sorted(out)


VALID_BASE = datetime(2020, 1, 1, tzinfo=UTC)  # before the fake clock starts


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    data=st.data(),
    gaps=st.lists(st.integers(min_value=1, max_value=10**8), min_size=1, max_size=6),
    start=st.integers(min_value=0, max_value=10**8),
    unrelated=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=4 * 10**8),
            st.one_of(st.none(), st.integers(min_value=0, max_value=10**8)),
            st.booleans(),
        ),
        max_size=4,
    ),
)
def test_point_in_time(data, gaps, start, unrelated) -> None:
    project = "pit"
    # Strictly increasing valid_from for v1..vn (microsecond resolution).
    offsets, at = [], start
    for gap in gaps:
        offsets.append(at)
        at += gap
    chain_from = [ts(VALID_BASE + timedelta(microseconds=o * 10)) for o in offsets]
    n = len(chain_from)
    model: dict[str, PIT] = {}
    chain_ids: list[str | None] = [None] * n

    with Fresh() as fx:
        eng, clock = fx.engine, fx.clock

        def store(text, valid_from, valid_until=None):
            res = eng.store(
                protocol.parse(
                    protocol.StoreParams,
                    {
                        "text": text,
                        "project": project,
                        "validFrom": valid_from,
                        **({"validUntil": valid_until} if valid_until else {}),
                    },
                )
            )
            assert res.created
            assert res.memory.recorded_at == clock.last
            assert res.memory.valid_from == valid_from
            return res.id, clock.last

        # Events: store each version (any order), supersede v_i by v_{i+1} once both exist and
        # v_{i-1} has been superseded (v_{i+1} must still be active), store unrelated memories.
        pending_store = list(range(n))
        next_supersede = 0
        pending_unrelated = list(range(len(unrelated)))
        while pending_store or next_supersede < n - 1 or pending_unrelated:
            choices = [("store", i) for i in pending_store]
            if (
                next_supersede < n - 1
                and chain_ids[next_supersede] is not None
                and chain_ids[next_supersede + 1] is not None
            ):
                choices.append(("supersede", next_supersede))
            choices += [("unrelated", j) for j in pending_unrelated[:1]]
            kind, i = data.draw(st.sampled_from(choices), label="event")
            if kind == "store":
                pending_store.remove(i)
                text = f"{WORD} fact version {i + 1}"
                mid, rec = store(text, chain_from[i])
                chain_ids[i] = mid
                model[mid] = PIT(mid, text, chain_from[i], None, rec, chain=i)
            elif kind == "supersede":
                old, new = chain_ids[i], chain_ids[i + 1]
                res = eng.supersede(protocol.SupersedeParams(old=old, by=new, project=project))
                assert res.old.valid_until == chain_from[i + 1]
                assert res.old.invalidated_at == clock.last
                model[old].valid_until = chain_from[i + 1]
                model[old].invalidated_at = clock.last
                next_supersede += 1
            else:
                pending_unrelated.remove(i)
                off, length, shares = unrelated[i]
                vf = VALID_BASE + timedelta(microseconds=off * 10)
                vu = None if length is None else ts(vf + timedelta(microseconds=length * 10))
                text = (f"{WORD} " if shares else "") + f"unrelated note number {i}"
                mid, rec = store(text, ts(vf), vu)
                model[mid] = PIT(mid, text, ts(vf), vu, rec, matches=shares)

        # A memory in another project with the same words: never seen here.
        eng.store(protocol.StoreParams(text=f"{WORD} fact version 1", project="pit2"))

        def run(**extra) -> set[str]:
            res = eng.query(
                protocol.parse(
                    protocol.QueryParams,
                    {"query": f"{WORD} fact", "project": project, "k": 1000, **extra},
                )
            )
            assert all(h.project == project for h in res.results)
            return {h.id for h in res.results}

        # The query "<WORD> fact" matches all chain versions and unrelated ones sharing WORD.
        relevant = [m for m in model.values() if m.matches]
        chain = [model[i] for i in chain_ids]

        # valid time: every boundary, each side of it, between, before all, after all.
        valid_moments = _around(
            [m.valid_from for m in model.values()]
            + [m.valid_until for m in model.values() if m.valid_until]
        )
        for t in valid_moments:
            got = run(validAt=t)
            assert got == {m.id for m in relevant if m.valid_at(t)}, t
            in_chain = [m for m in chain if m.id in got]
            if t >= chain_from[0]:
                assert len(in_chain) == 1, (t, in_chain)
                j = max(k for k in range(n) if chain_from[k] <= t)
                assert in_chain[0].id == chain_ids[j]
            else:
                assert in_chain == []

        # default: the latest version only (plus unrelated valid now).
        now = clock.peek()
        got = run()
        assert [m.chain for m in chain if m.id in got] == [n - 1]
        assert got == {m.id for m in relevant if m.invalidated_at is None and m.valid_at(now)}

        # transaction time: recorded at or before T, not yet invalidated at T.
        tx_moments = _around(
            [m.recorded_at for m in model.values()]
            + [m.invalidated_at for m in model.values() if m.invalidated_at]
        )
        for t in tx_moments:
            got = run(asOf=t)
            assert got == {m.id for m in relevant if m.known_as_of(t)}, t

        # both at once: the intersection.
        for _ in range(5):
            tv = data.draw(st.sampled_from(valid_moments), label="validAt")
            tt = data.draw(st.sampled_from(tx_moments), label="asOf")
            got = run(validAt=tv, asOf=tt)
            assert got == {m.id for m in relevant if m.valid_at(tv) and m.known_as_of(tt)}

        # Every version still readable, with its interval and links.
        for i, mid in enumerate(chain_ids):
            got = eng.get(protocol.GetParams(id=mid, project=project))
            assert got.valid_until == (chain_from[i + 1] if i < n - 1 else None)
            assert got.status == ("superseded" if i < n - 1 else "active")
            assert got.supersedes == ([chain_ids[i - 1]] if i else [])
            assert got.superseded_by == ([chain_ids[i + 1]] if i < n - 1 else [])


# ---------------------------------------------------------------- examples


def test_supersede_ends_validity_and_links_both_ways(engine, clock):
    clock.set("2025-06-01T00:00:00Z")
    old = store(engine, "We use yarn", validFrom="2025-01-01")
    new = store(engine, "We moved to pnpm", validFrom="2025-03-01")
    r = engine.supersede(protocol.SupersedeParams(old=old.id, by=new.id, project="alpha"))
    assert r.old.status == "superseded" and r.old.valid_until == "2025-03-01T00:00:00.000000Z"
    assert r.old.invalidated_at is not None
    assert r.old.superseded_by == [new.id] and r.new.supersedes == [old.id]
    got = engine.get(protocol.GetParams(id=new.id, project="alpha"))
    assert got.supersedes == [old.id]
    # default query: only what is valid now
    assert ids(query(engine, "yarn pnpm")) == [new.id]
    # point in time: the superseded memory is still found when it was valid
    assert ids(query(engine, "yarn pnpm", validAt="2025-02-01")) == [old.id]
    assert ids(query(engine, "yarn pnpm", validAt="2025-03-01")) == [new.id]
    assert ids(query(engine, "yarn pnpm", validAt="2024-12-31")) == []


def test_supersede_refusals_change_nothing(engine):
    a = store(engine, "A one", validFrom="2025-02-01")
    b = store(engine, "B two", validFrom="2025-01-01")
    c = store(engine, "C three", project="beta")
    with pytest.raises(Refused):  # new became valid before old
        engine.supersede(protocol.SupersedeParams(old=a.id, by=b.id, project="alpha"))
    with pytest.raises(InvalidInput):
        engine.supersede(protocol.SupersedeParams(old=a.id, by=a.id, project="alpha"))
    with pytest.raises(NotFound):
        engine.supersede(protocol.SupersedeParams(old=a.id, by=c.id, project="alpha"))
    engine.supersede(protocol.SupersedeParams(old=b.id, by=a.id, project="alpha"))
    with pytest.raises(Refused):
        engine.supersede(protocol.SupersedeParams(old=b.id, by=a.id, project="alpha"))
    assert count_rows(engine, "edges") == 1


def test_as_of_reads_transaction_time(engine, clock):
    clock.set("2025-01-01T00:00:00Z")
    old = store(engine, "Release train is weekly")
    clock.set("2025-02-01T00:00:00Z")
    new = store(engine, "Release train is biweekly")
    clock.set("2025-03-01T00:00:00Z")
    engine.supersede(protocol.SupersedeParams(old=old.id, by=new.id, project="alpha"))
    assert ids(query(engine, "release train", asOf="2024-12-01")) == []
    assert ids(query(engine, "release train", asOf="2025-01-15")) == [old.id]
    assert set(ids(query(engine, "release train", asOf="2025-02-15"))) == {old.id, new.id}
    assert ids(query(engine, "release train", asOf="2025-03-15")) == [new.id]


def test_future_validity_is_not_visible_now(engine):
    store(engine, "From next year we use Python 3.14", validFrom="2999-01-01")
    assert query(engine, "python").results == []
    assert len(query(engine, "python", validAt="2999-06-01").results) == 1
