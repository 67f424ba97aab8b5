"""Scope isolation, as a property: whatever is written to one project (under any spelling of
its name) is never read, counted, audited, exported or touched through another. Every read
path is checked against a model of each project (see property_helpers for the set-up)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

from memls import protocol
from memls.engine import Engine
from memls.errors import InvalidInput, NotFound, Refused
from memls.scope import USER_PROJECT
from property_helpers import (
    DELTA,
    NAME_FAMILIES,
    QUERY_ALL,
    REVIEW_TARGET,
    TRUST_STATES,
    USER_FAMILY,
    VISIBLE,
    Fresh,
    expected_key,
    invisible_only,
    model_feedback_trust,
    text_strategy,
)


def test_name_families_are_well_formed() -> None:
    keys = []
    for family in NAME_FAMILIES + [USER_FAMILY]:
        family_keys = {expected_key(v) for v in family}
        assert len(family_keys) == 1, family
        keys.append(family_keys.pop())
    assert len(set(keys)) == len(keys)


@st.composite
def random_family(draw) -> list[str]:
    """A random project name and some variants of it (NFD, outer white space)."""
    alphabet = st.characters(codec="utf-8", exclude_characters="\x00")
    name = draw(st.text(alphabet=alphabet, min_size=1, max_size=10))
    key = expected_key(name)
    assume(key and key != USER_PROJECT and len(key) <= 512 and not invisible_only(key))
    pad = st.sampled_from(["", " ", "\t", "\n", "\u3000", "\xa0", "\u2003", "\r\n"])
    variants = [name, unicodedata.normalize("NFD", name), unicodedata.normalize("NFC", name)]
    variants.append(draw(pad) + unicodedata.normalize("NFD", name) + draw(pad))
    assume(len({expected_key(v) for v in variants}) == 1)
    return variants


@dataclass
class M:
    """Model of one memory."""

    id: str
    key: str
    text: str
    status: str = "active"
    trust: str = "candidate"
    score: int = 0
    forgotten: bool = False


@dataclass
class ScopeModel:
    memories: dict[str, M] = field(default_factory=dict)
    tombstones: set[tuple[str, str]] = field(default_factory=set)
    forgotten: dict[str, list[str]] = field(default_factory=dict)  # key -> ids
    feedback: dict[str, int] = field(default_factory=dict)  # key -> signals
    audit: dict[str, int] = field(default_factory=dict)  # key -> entries

    def live(self, key: str) -> list[M]:
        return [m for m in self.memories.values() if m.key == key and not m.forgotten]

    def ever(self, key: str) -> set[str]:
        return {m.id for m in self.memories.values() if m.key == key}

    def bump(self, key: str, n: int = 1) -> None:
        self.audit[key] = self.audit.get(key, 0) + n


SCOPE_SETTINGS = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)


@SCOPE_SETTINGS
@given(data=st.data(), extra=st.lists(random_family(), min_size=0, max_size=2))
def test_scope_isolation_every_read_path(data, extra) -> None:
    """Lexical-only engine (BM25 candidates; the contradiction check runs on BM25 too)."""
    _scope_isolation(data, extra, models=None, max_ops=30)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data(), extra=st.lists(random_family(), min_size=0, max_size=1))
def test_scope_isolation_with_vectors(models, data, extra) -> None:
    """The same, with Chroma (one collection per project) and the embedder/reranker: the
    `models` session fixture of tests/conftest.py is shared, never loaded per example."""
    _scope_isolation(data, extra, models=models, max_ops=15)


def _scope_isolation(data, extra, *, models, max_ops: int) -> None:
    families = NAME_FAMILIES + [USER_FAMILY] + extra
    # Random families may coincide with a fixed one (or each other): merge them by key.
    by_key: dict[str, list[str]] = {}
    for family in families:
        by_key.setdefault(expected_key(family[0]), []).extend(family)
    keys = list(by_key)
    # Work over a random subset of projects, but always several (so leaks can show).
    chosen = data.draw(
        st.lists(st.sampled_from(keys), min_size=3, max_size=len(keys), unique=True),
        label="projects",
    )
    if USER_PROJECT not in chosen and data.draw(st.booleans(), label="with @user"):
        chosen.append(USER_PROJECT)

    def variant(key: str) -> str:
        return data.draw(st.sampled_from(by_key[key]), label=f"variant of {key!r}")

    model = ScopeModel()
    with Fresh(models=models) as fx:
        eng = fx.engine

        def pick_memory(live_only: bool = True) -> M | None:
            pool = [m for m in model.memories.values() if not (live_only and m.forgotten)]
            return data.draw(st.sampled_from(pool), label="memory") if pool else None

        n_ops = data.draw(st.integers(min_value=4, max_value=max_ops), label="n_ops")
        for _ in range(n_ops):
            op = data.draw(
                st.sampled_from(
                    ["store", "store", "store", "feedback", "forget", "supersede", "review"]
                ),
                label="op",
            )
            target = None if op == "store" else pick_memory()
            if target is not None and data.draw(st.integers(0, 3), label="same project") > 0:
                key = target.key  # mostly act within the memory's own project
            else:
                key = data.draw(st.sampled_from(chosen), label="project")
            raw = variant(key)
            if op == "store":
                known = sorted({m.text for m in model.memories.values()})
                if known and data.draw(st.integers(0, 2), label="reuse a text") == 0:
                    # Text already used somewhere (maybe forgotten, maybe another project).
                    text = data.draw(st.sampled_from(known), label="text")
                else:
                    text = data.draw(text_strategy(), label="text")
                dup = next(
                    (m for m in model.live(key) if m.text == text and m.status == "active"), None
                )
                if (key, text) in model.tombstones:
                    event("store: tombstone refused")
                    with pytest.raises(Refused):
                        eng.store(protocol.StoreParams(text=text, project=raw))
                    continue
                if dup is not None and dup.trust == "rejected":
                    event("store: rejected content refused")
                    with pytest.raises(Refused, match="rejected on review"):
                        eng.store(protocol.StoreParams(text=text, project=raw))
                    continue
                res = eng.store(protocol.StoreParams(text=text, project=raw))
                assert res.project == key
                assert res.memory.project == key
                if dup is not None:
                    event("store: duplicate")
                    assert res.duplicate and not res.created and res.id == dup.id
                elif res.duplicate == "near":
                    # a restatement (with vectors): answered with a memory of this project
                    event("store: near duplicate")
                    same = model.memories.get(res.id)
                    assert not res.created and same is not None and same.key == key
                    assert not same.forgotten and same.status == "active"
                    assert same.trust in VISIBLE
                else:
                    # Same text in another project is never a duplicate.
                    if any(m.text == text for m in model.memories.values()):
                        event("store: same text as elsewhere, created")
                    assert res.created and not res.duplicate
                    assert res.id not in model.memories
                    model.memories[res.id] = M(res.id, key, text)
                    model.bump(key)
                continue

            if target is None:
                continue
            foreign = target.key != key
            if op == "feedback":
                signal = data.draw(st.sampled_from(list(DELTA)), label="signal")
                params = protocol.FeedbackParams(id=target.id, signal=signal, project=raw)
                if foreign:
                    event("feedback: foreign id refused")
                    with pytest.raises(NotFound):
                        eng.feedback(params)
                    continue
                res = eng.feedback(params)
                old_trust, old = target.trust, target.score
                target.score += DELTA[signal]
                target.trust = model_feedback_trust(old_trust, old, target.score)
                assert (res.score, res.trust) == (target.score, target.trust)
                model.feedback[key] = model.feedback.get(key, 0) + 1
                model.bump(key, 1 + (target.trust != old_trust))
            elif op == "forget":
                params = protocol.ForgetParams(id=target.id, reason="user_deleted", project=raw)
                if foreign:
                    with pytest.raises(NotFound):
                        eng.forget(params)
                    continue
                event("forget: done")
                res = eng.forget(params)
                assert res.project == key
                target.forgotten = True
                model.tombstones.add((key, target.text))
                model.forgotten.setdefault(key, []).append(target.id)
                model.bump(key)
            elif op == "supersede":
                same = [m for m in model.live(target.key) if m.id != target.id]
                if same and data.draw(st.integers(0, 3), label="same-project by") > 0:
                    other = data.draw(st.sampled_from(same), label="by")
                else:
                    other = pick_memory()
                assert other is not None
                params = protocol.SupersedeParams(old=target.id, by=other.id, project=raw)
                if foreign or other.key != key:
                    event("supersede: foreign id refused")
                    with pytest.raises(NotFound):
                        eng.supersede(params)
                    continue
                if other.id == target.id:
                    with pytest.raises(InvalidInput):
                        eng.supersede(params)
                    continue
                # valid_from is the store time, so an earlier-stored memory cannot supersede.
                earlier = list(model.memories).index(other.id) < list(model.memories).index(
                    target.id
                )
                if target.status != "active" or other.status != "active" or earlier:
                    event("supersede: refused by state/order")
                    with pytest.raises(Refused):
                        eng.supersede(params)
                    continue
                event("supersede: done")
                res = eng.supersede(params)
                assert res.project == key == res.old.project == res.new.project
                target.status = "superseded"
                model.bump(key)
            elif op == "review":
                action = data.draw(st.sampled_from(list(REVIEW_TARGET)), label="action")
                params = protocol.ReviewParams(action=action, id=target.id, project=raw)
                if foreign:
                    with pytest.raises(NotFound):
                        eng.review(params)
                    continue
                if target.trust == REVIEW_TARGET[action]:
                    with pytest.raises(Refused):
                        eng.review(params)
                    continue
                event(f"review: {target.trust} -> {REVIEW_TARGET[action]}")
                res = eng.review(params)
                target.trust = REVIEW_TARGET[action]
                assert res.memories[0].trust == target.trust
                model.bump(key)

        # Make sure the review queue is not always empty: flag one memory of a project.
        flaggable = [
            m
            for m in model.memories.values()
            if not m.forgotten and m.trust in VISIBLE and -3 < m.score <= 1
        ]
        if flaggable:
            m = flaggable[0]
            for _ in range(2):
                eng.feedback(protocol.FeedbackParams(id=m.id, signal="outdated", project=m.key))
                old = m.score
                m.score -= 2
                before = m.trust
                m.trust = model_feedback_trust(m.trust, old, m.score)
                model.feedback[m.key] = model.feedback.get(m.key, 0) + 1
                model.bump(m.key, 1 + (m.trust != before))
            assert m.trust == "flagged"

        note(f"model: {model}")
        # Let the background indexer (write-time contradiction check) finish before reading.
        assert eng.flush(timeout=30)
        all_ids = set(model.memories)
        for key in chosen:
            _check_project(eng, model, key, by_key[key], all_ids, data)


def _check_project(
    eng: Engine, model: ScopeModel, key: str, variants: list[str], all_ids: set[str], data
) -> None:
    raw = data.draw(st.sampled_from(variants), label=f"read variant of {key!r}")
    live = model.live(key)
    live_ids = {m.id for m in live}
    ever_ids = model.ever(key)
    foreign_ids = all_ids - ever_ids
    visible = {m.id for m in live if m.status == "active" and m.trust in VISIBLE}

    # query: exactly the visible memories of this project; every word is shared by all projects.
    q = eng.query(protocol.QueryParams(query=QUERY_ALL, project=raw, k=1000))
    assert q.project == key
    assert {h.project for h in q.results} <= {key}
    assert {h.id for h in q.results} == visible
    for include_user in (False, True):
        q = eng.query(
            protocol.parse(
                protocol.QueryParams,
                {"query": QUERY_ALL, "project": raw, "k": 1000, "includeUser": include_user},
            )
        )
        want = {m.id: m.text for m in live if m.status == "active" and m.trust in VISIBLE}
        if include_user:
            want.update(
                {
                    m.id: m.text
                    for m in model.live(USER_PROJECT)
                    if m.status == "active" and m.trust in VISIBLE
                }
            )
        got = [h.id for h in q.results]
        allowed = {key, USER_PROJECT} if include_user else {key}
        assert {h.project for h in q.results} <= allowed
        assert set(got) <= set(want), (key, include_user)
        # Retrieval keeps one result per canonical text: with the user scope mixed in, the same
        # words stored in both scopes come back once. Every text is represented exactly once.
        assert sorted(want[i] for i in got) == sorted(set(want.values())), (key, include_user)
        if not include_user:
            assert set(got) == visible

    # get: own ids found, every other id (other project, or forgotten) not found.
    for mid in live_ids:
        got = eng.get(protocol.GetParams(id=mid, project=raw))
        assert got.id == mid and got.project == key
    for mid in sorted(foreign_ids | (ever_ids - live_ids)):
        with pytest.raises(NotFound):
            eng.get(protocol.GetParams(id=mid, project=raw))

    # list: every live memory of the project (any trust, any status), nothing else.
    listed = eng.list(protocol.ListParams(project=raw, limit=1000))
    assert listed.project == key
    assert {m.project for m in listed.memories} <= {key}
    assert len(listed.memories) == len(live_ids)
    assert {m.id for m in listed.memories} == live_ids
    with_user = eng.list(protocol.ListParams(project=raw, limit=1000, include_user=True))
    assert {m.id for m in with_user.memories} == live_ids | {m.id for m in model.live(USER_PROJECT)}

    # review list: per trust state.
    for state in TRUST_STATES:
        rv = eng.review(protocol.ReviewParams(action="list", project=raw, state=state))
        assert rv.project == key
        assert {m.project for m in rv.memories} <= {key}
        assert {m.id for m in rv.memories} == {m.id for m in live if m.trust == state}, state

    # forgotten
    fg = eng.forgotten(protocol.ForgottenParams(project=raw, limit=1000))
    assert fg.project == key
    assert {e.project for e in fg.entries} <= {key}
    assert sorted(e.memory_id for e in fg.entries) == sorted(model.forgotten.get(key, []))

    # stats: counts of exactly this project.
    s = eng.stats(protocol.StatsParams(project=raw))
    assert s.project == key
    assert s.memories == len(live)
    by_trust: dict[str, int] = {}
    by_status: dict[str, int] = {}
    for m in live:
        by_trust[m.trust] = by_trust.get(m.trust, 0) + 1
        by_status[m.status] = by_status.get(m.status, 0) + 1
    assert s.by_trust == by_trust
    assert s.by_status == by_status
    assert s.review_queue == by_trust.get("flagged", 0)
    assert s.forgotten == len(model.forgotten.get(key, []))
    assert s.tombstones == len({t for (k, t) in model.tombstones if k == key})
    assert s.feedback_signals == model.feedback.get(key, 0)

    # audit: only this project's entries and memories, and all of them.
    au = eng.audit(protocol.AuditParams(project=raw, limit=1000))
    assert au.project == key
    assert {e.project for e in au.entries} <= {key}
    assert {e.memory_id for e in au.entries} - {None} <= ever_ids
    # The write-time contradiction check (background) adds entries of its own; it must only
    # ever pair memories of the same project.
    conflicts = [e for e in au.entries if e.op == "conflict_detected"]
    for e in conflicts:
        assert e.detail["older"] in ever_ids, e
    assert len(au.entries) - len(conflicts) == model.audit.get(key, 0)
    found = eng.conflicts(protocol.ConflictsParams(project=raw, status=None, limit=1000))
    for c in found.conflicts:
        assert c.project == key == c.newer.project == c.older.project
    for mid in sorted(foreign_ids)[:3]:
        assert eng.audit(protocol.AuditParams(project=raw, id=mid)).entries == []

    # export: every line belongs to this project and names only its memories.
    lines = list(eng.export(raw))
    assert lines[0]["project"] == key
    exported_memories = set()
    for line in lines[1:]:
        row = line["row"]
        assert row["project"] == key, line
        for column in ("id", "memory_id", "src", "dst"):
            if column in row and row[column] is not None:
                assert row[column] in ever_ids, line
        if line["table"] == "memories":
            exported_memories.add(row["id"])
    assert exported_memories == live_ids
