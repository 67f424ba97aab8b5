"""Property tests for the engine: scope isolation, point-in-time reads, the review state machine.

Each example gets a fresh data directory and a fake clock (one step per reading), so histories
have distinct, predictable times. Engines are lexical-only (vectors=False) except in
test_scope_isolation_with_vectors, which shares the session `models` runtime: never let an engine
load its own models per example (each open/close cycle keeps ~100 MB).

The models below follow the rules written in memls.scope / memls.lifecycle / the Visibility
docstring, not the SQL that implements them. Before reading audit/conflicts, tests flush the
background indexer (it runs the write-time contradiction check and adds audit entries).
"""

from __future__ import annotations

import tempfile
import threading
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from memls import lifecycle, protocol, timeutil
from memls.engine import Engine
from memls.errors import InvalidInput, NotFound, Refused
from memls.scope import USER_PROJECT

# ---------------------------------------------------------------- shared helpers

BASE = datetime(2025, 1, 1, tzinfo=timezone.utc)
VISIBLE = ("candidate", "verified")
TRUST_STATES = ("candidate", "verified", "flagged", "rejected")


def ts(moment: datetime) -> str:
    return timeutil.format_ts(moment)


class FakeClock:
    """Zero-argument clock: every call moves one step forward.

    The engine's background indexer (write-time contradiction check) reads the clock too, from
    its own thread; `last` is the latest reading taken on the calling (test) thread.
    """

    def __init__(self, start: datetime = BASE, step: timedelta = timedelta(seconds=1)) -> None:
        self.moment = start
        self.step = step
        self._lock = threading.Lock()
        self._local = threading.local()

    def __call__(self) -> str:
        with self._lock:
            self.moment += self.step
            value = ts(self.moment)
        self._local.last = value
        return value

    @property
    def last(self) -> str | None:
        return getattr(self._local, "last", None)

    def peek(self) -> str:
        """The earliest value the next call can return."""
        with self._lock:
            return ts(self.moment + self.step)


class Fresh:
    """A new data directory and engine (fake clock) for one example."""

    def __init__(self, front: str = "test", models=None) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="memls-prop-")
        self.clock = FakeClock()
        # Lexical-only unless a shared model runtime is given (never load models per example).
        self.engine = Engine.open(self._tmp.name, front=front, clock=self.clock,
                                  vectors=models is not None, models=models)

    def close(self) -> None:
        try:
            self.engine.close()
        finally:
            self._tmp.cleanup()

    def __enter__(self) -> Fresh:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def expected_key(raw: str) -> str:
    """The documented normalisation: NFC, then outer white space stripped."""
    return unicodedata.normalize("NFC", raw).strip()


def model_feedback_trust(trust: str, old: int, new: int) -> str:
    """Feedback rule written from the lifecycle docstring (not by calling lifecycle)."""
    if trust in VISIBLE and old > -3 and new <= -3:
        return "flagged"
    if trust == "flagged" and new > -3:
        return "candidate"
    return trust


DELTA = {"helpful": 1, "unhelpful": -1, "outdated": -2}
REVIEW_TARGET = {"approve": "verified", "reject": "rejected", "restore": "candidate"}


def test_model_constants_match_lifecycle() -> None:
    # The models above restate lifecycle.py; keep them honest.
    assert DELTA == lifecycle.SIGNAL_DELTA
    assert REVIEW_TARGET == lifecycle.REVIEW_TARGET
    assert lifecycle.FLAG_AT == -3


# ================================================================ 1. scope isolation

# Families of raw project names: every variant in a family normalises to the same key;
# different families are different projects (they differ in inner content).
NAME_FAMILIES: list[list[str]] = [
    ["alpha", " alpha", "alpha ", "alpha\t", "\talpha\n", "\u3000alpha\xa0"],
    ["Alpha", " Alpha"],  # case is content: a different project from "alpha"
    ["a b", " a b ", "a b\t"],
    ["a  b", "\na  b"],  # inner white space is content
    ["ab"],
    ["caf\u00e9", "cafe\u0301", " cafe\u0301 ", "caf\u00e9\u2003"],  # NFC vs NFD
    ["cafe"],  # without the accent: different
    ["\u00c5ngstr\u00f6m", "A\u030angstro\u0308m", "\u212bngstr\u00f6m"],  # incl. ANGSTROM SIGN
    ["\ud55c\uad6d\uc5b4", "\u1112\u1161\u11ab\u1100\u116e\u11a8\u110b\u1165"],  # Hangul NFD
    ["\u65e5\u672c\u8a9e/\u30d7\u30ed\u30b8\u30a7\u30af\u30c8",
     " \u65e5\u672c\u8a9e/\u30d7\u30ed\u30b8\u30a7\u30af\u30c8"],
    ["alpha/beta", "alpha/beta\r\n"],
]
USER_FAMILY = [USER_PROJECT, " " + USER_PROJECT, USER_PROJECT + "\n"]

VOCAB = ["deploy", "database", "cache", "token", "release", "schema", "lint", "migration"]
QUERY_ALL = " ".join(VOCAB)


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
    assume(key and key != USER_PROJECT and len(key) <= 512)
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


def _text_strategy():
    return st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3, unique=True).map(" ".join)


SCOPE_SETTINGS = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.filter_too_much],
)


@SCOPE_SETTINGS
@given(data=st.data(), extra=st.lists(random_family(), min_size=0, max_size=2))
def test_scope_isolation_every_read_path(data, extra) -> None:
    """Lexical-only engine (BM25 candidates; the contradiction check runs on BM25 too)."""
    _scope_isolation(data, extra, models=None, max_ops=30)


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much])
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
                st.sampled_from(["store", "store", "store", "feedback", "forget", "supersede",
                                 "review"]),
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
                    text = data.draw(_text_strategy(), label="text")
                dup = next((m for m in model.live(key)
                            if m.text == text and m.status == "active"), None)
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
                    target.id)
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
        flaggable = [m for m in model.memories.values()
                     if not m.forgotten and m.trust in VISIBLE and -3 < m.score <= 1]
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


def _check_project(eng: Engine, model: ScopeModel, key: str, variants: list[str],
                   all_ids: set[str], data) -> None:
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
        q = eng.query(protocol.parse(protocol.QueryParams, {
            "query": QUERY_ALL, "project": raw, "k": 1000, "includeUser": include_user}))
        want = {m.id: m.text for m in live if m.status == "active" and m.trust in VISIBLE}
        if include_user:
            want.update({m.id: m.text for m in model.live(USER_PROJECT)
                         if m.status == "active" and m.trust in VISIBLE})
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


# ---------------------------------------------------------------- @user scope


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    user_texts=st.lists(_text_strategy(), min_size=1, max_size=4, unique=True),
    project_texts=st.lists(_text_strategy(), min_size=0, max_size=4, unique=True),
    user_variant=st.sampled_from(USER_FAMILY),
    project=st.sampled_from([f[0] for f in NAME_FAMILIES]),
)
def test_user_scope_only_with_include_user(user_texts, project_texts, user_variant, project):
    with Fresh() as fx:
        eng = fx.engine
        user_ids = {eng.store(protocol.StoreParams(text=t, project=user_variant)).id
                    for t in user_texts}
        own_ids = {eng.store(protocol.StoreParams(text=t, project=project)).id
                   for t in project_texts}
        for mid in user_ids:
            assert eng.get(protocol.GetParams(id=mid, project=user_variant)).project == USER_PROJECT

        def q(include_user=None):
            data = {"query": QUERY_ALL, "project": project, "k": 1000}
            if include_user is not None:
                data["includeUser"] = include_user
            return {h.id for h in eng.query(protocol.parse(protocol.QueryParams, data)).results}

        def ls(include_user=None):
            data = {"project": project, "limit": 1000}
            if include_user is not None:
                data["includeUser"] = include_user
            return {m.id for m in eng.list(protocol.parse(protocol.ListParams, data)).memories}

        assert q() == q(False) == own_ids
        # One result per canonical text: words stored in both scopes come back once.
        both = set(user_texts) & set(project_texts)
        assert own_ids | user_ids >= q(True)
        assert len(q(True)) == len(own_ids | user_ids) - len(both)
        assert not both or q(True) != own_ids | user_ids
        assert ls() == ls(False) == own_ids
        assert ls(True) == own_ids | user_ids
        # No other read path of the project shows the user scope.
        for mid in user_ids:
            with pytest.raises(NotFound):
                eng.get(protocol.GetParams(id=mid, project=project))
        assert eng.stats(protocol.StatsParams(project=project)).memories == len(own_ids)
        for state in TRUST_STATES:
            rv = eng.review(protocol.ReviewParams(action="list", project=project, state=state))
            assert not ({m.id for m in rv.memories} & user_ids)
        assert eng.flush(timeout=30)
        assert {e.memory_id for e in eng.audit(protocol.AuditParams(project=project)).entries} \
            == own_ids
        assert all(line["row"]["project"] != USER_PROJECT for line in list(eng.export(project))[1:])


# ---------------------------------------------------------------- refusing an empty project

WHITESPACE = st.text(
    alphabet=st.sampled_from(
        [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\xa0", "\u3000", "\u2003", "\u2000",
         "\u2028", "\u2029", "\x1c", "\x1f", "\x85", "\u1680", "\u205f", "\u202f"]
    ),
    min_size=0,
    max_size=6,
)


def _calls(eng: Engine, project):
    """Every engine method, with otherwise valid parameters, given `project`."""
    mid = "m_0123456789abcdef"
    return {
        "store": lambda: eng.store(protocol.StoreParams(text="deploy cache", project=project)),
        "get": lambda: eng.get(protocol.GetParams(id=mid, project=project)),
        "list": lambda: eng.list(protocol.ListParams(project=project)),
        "list+user": lambda: eng.list(protocol.ListParams(project=project, include_user=True)),
        "query": lambda: eng.query(protocol.QueryParams(query="deploy", project=project)),
        "query+user": lambda: eng.query(
            protocol.QueryParams(query="deploy", project=project, include_user=True)),
        "supersede": lambda: eng.supersede(
            protocol.SupersedeParams(old=mid, by=mid + "0", project=project)),
        "feedback": lambda: eng.feedback(
            protocol.FeedbackParams(id=mid, signal="helpful", project=project)),
        "review list": lambda: eng.review(protocol.ReviewParams(action="list", project=project)),
        "review approve": lambda: eng.review(
            protocol.ReviewParams(action="approve", id=mid, project=project)),
        "forget": lambda: eng.forget(
            protocol.ForgetParams(id=mid, reason="user_deleted", project=project)),
        "forgotten": lambda: eng.forgotten(protocol.ForgottenParams(project=project)),
        "stats": lambda: eng.stats(protocol.StatsParams(project=project)),
        "audit": lambda: eng.audit(protocol.AuditParams(project=project)),
        "maintain": lambda: eng.maintain(protocol.MaintainParams(project=project)),
        "dead_letters": lambda: eng.dead_letters(protocol.MaintainParams(project=project)),
        "export": lambda: list(eng.export(project)),
        "import": lambda: eng.import_(project, ['{"format": "memls-export", "version": 1}']),
        "conflicts": lambda: eng.conflicts(protocol.ConflictsParams(project=project)),
        "resolve": lambda: eng.resolve(
            protocol.ResolveParams(a=mid, b=mid + "0", action="dismiss", project=project)),
        "doctor": lambda: eng.doctor(protocol.DoctorParams(project=project)),
        "reindex": lambda: eng.reindex(protocol.ReindexParams(project=project)),
    }


@pytest.fixture(scope="module")
def shared_engine():
    fx = Fresh()
    # Something to leak, were an empty project ever read as "all projects".
    fx.engine.store(protocol.StoreParams(text="deploy cache", project="alpha"))
    assert fx.engine.flush(timeout=30)  # so stats (index_pending) is stable
    yield fx
    fx.close()


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(project=st.one_of(st.none(), WHITESPACE))
def test_empty_project_refused_everywhere(shared_engine, project) -> None:
    eng = shared_engine.engine
    before = eng.stats(protocol.StatsParams(project="alpha"))
    for name, call in _calls(eng, project).items():
        with pytest.raises(InvalidInput) as info:
            call()
        assert info.value.field == "project", (name, repr(project), info.value)
    after = eng.stats(protocol.StatsParams(project="alpha"))
    assert before == after
    assert eng.db.read("SELECT count(*) FROM memories")[0][0] == 1
    assert eng.db.read("SELECT count(*) FROM audit")[0][0] == 1


@settings(max_examples=30, deadline=None)
@given(project=st.one_of(st.none(), WHITESPACE))
def test_empty_project_refused_by_the_wire_parser(project) -> None:
    # Fronts parse camelCase dicts first; either the parser or the engine must refuse, with
    # field "project" either way.
    kinds = [
        (protocol.StoreParams, {"text": "x"}), (protocol.GetParams, {"id": "m_1"}),
        (protocol.ListParams, {}), (protocol.QueryParams, {"query": "x"}),
        (protocol.SupersedeParams, {"old": "m_1", "by": "m_2"}),
        (protocol.FeedbackParams, {"id": "m_1", "signal": "helpful"}),
        (protocol.ReviewParams, {"action": "list"}),
        (protocol.ForgetParams, {"id": "m_1", "reason": "user_deleted"}),
        (protocol.ForgottenParams, {}), (protocol.StatsParams, {}), (protocol.AuditParams, {}),
        (protocol.MaintainParams, {}), (protocol.ConflictsParams, {}),
        (protocol.ResolveParams, {"a": "m_1", "b": "m_2", "action": "dismiss"}),
        (protocol.DoctorParams, {}), (protocol.ReindexParams, {}),
    ]
    for kind, data in kinds:
        try:
            parsed = protocol.parse(kind, {**data, "project": project})
        except InvalidInput as exc:
            assert exc.field == "project", (kind, exc)
            continue
        from memls.scope import project_key

        with pytest.raises(InvalidInput) as info:
            project_key(parsed.project)
        assert info.value.field == "project"


def test_malformed_project_refused(shared_engine) -> None:
    # Not a string, a NUL inside, or longer than 512 characters once normalised.
    for bad in (5, b"alpha", ["alpha"], "al\x00pha", "x" * 513, " " + "y" * 513 + " "):
        for name, call in _calls(shared_engine.engine, bad).items():
            with pytest.raises(InvalidInput) as info:
                call()
            assert info.value.field == "project", name


@settings(max_examples=200, deadline=None)
@given(raw=st.text(min_size=1, max_size=20))
def test_project_key_is_idempotent(raw) -> None:
    from memls.scope import project_key

    try:
        key = project_key(raw)
    except InvalidInput as exc:
        assert exc.field == "project"
        assert not expected_key(raw) or "\x00" in raw
        return
    assert key == expected_key(raw)
    assert project_key(key) == key
    assert project_key(unicodedata.normalize("NFD", raw)) == key
    assert project_key(" " + raw + "\t") == key


# ================================================================ 2. point in time

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


VALID_BASE = datetime(2020, 1, 1, tzinfo=timezone.utc)  # before the fake clock starts


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    data=st.data(),
    gaps=st.lists(st.integers(min_value=1, max_value=10**8), min_size=1, max_size=6),
    start=st.integers(min_value=0, max_value=10**8),
    unrelated=st.lists(
        st.tuples(st.integers(min_value=0, max_value=4 * 10**8),
                  st.one_of(st.none(), st.integers(min_value=0, max_value=10**8)),
                  st.booleans()),
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
            res = eng.store(protocol.parse(protocol.StoreParams, {
                "text": text, "project": project, "validFrom": valid_from,
                **({"validUntil": valid_until} if valid_until else {}),
            }))
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
            if next_supersede < n - 1 and chain_ids[next_supersede] is not None \
                    and chain_ids[next_supersede + 1] is not None:
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
            res = eng.query(protocol.parse(protocol.QueryParams, {
                "query": f"{WORD} fact", "project": project, "k": 1000, **extra}))
            assert all(h.project == project for h in res.results)
            return {h.id for h in res.results}

        # The query "<WORD> fact" matches all chain versions and unrelated ones sharing WORD.
        relevant = [m for m in model.values() if m.matches]
        chain = [model[i] for i in chain_ids]

        # valid time: every boundary, each side of it, between, before all, after all.
        valid_moments = _around([m.valid_from for m in model.values()]
                                + [m.valid_until for m in model.values() if m.valid_until])
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
        assert got == {m.id for m in relevant
                       if m.invalidated_at is None and m.valid_at(now)}

        # transaction time: recorded at or before T, not yet invalidated at T.
        tx_moments = _around([m.recorded_at for m in model.values()]
                             + [m.invalidated_at for m in model.values() if m.invalidated_at])
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


# ================================================================ 3. review state machine

REVIEW_PROJECT = "review"
REVIEW_WORD = "invariant"


class ReviewMachine(RuleBasedStateMachine):
    """Feedback and review verbs over a few memories, against a model of score and trust."""

    # Across every run (for the coverage check after the stateful test).
    visited_all: set[str] = set()
    left_all: set[str] = set()

    def __init__(self) -> None:
        super().__init__()
        self.fx = Fresh(front="machine")
        self.eng = self.fx.engine
        self.ids: list[str] = []
        self.trust: dict[str, str] = {}
        self.score: dict[str, int] = {}
        self.audit_ops: dict[str, list[tuple]] = {}
        self.visited: set[str] = set()
        self.left: set[str] = set()

    @initialize(count=st.integers(min_value=1, max_value=3))
    def create(self, count: int) -> None:
        for i in range(count):
            res = self.eng.store(protocol.StoreParams(
                text=f"{REVIEW_WORD} memory number {i}", project=REVIEW_PROJECT))
            self.ids.append(res.id)
            self.trust[res.id] = "candidate"
            self.score[res.id] = 0
            self.audit_ops[res.id] = [("store",)]
        self.visited.add("candidate")
        ReviewMachine.visited_all.add("candidate")

    def _moved(self, mid: str, old: str, new: str, cause: str, transition) -> None:
        assert transition is not None
        assert (transition.memory_id, transition.from_trust, transition.to_trust,
                transition.cause) == (mid, old, new, cause)
        self.trust[mid] = new
        self.audit_ops[mid].append(("trust", old, new, cause))
        for s in (self.visited, ReviewMachine.visited_all):
            s.add(new)
        for s in (self.left, ReviewMachine.left_all):
            s.add(old)

    def _pick(self, index: int) -> str:
        return self.ids[index % len(self.ids)]

    @rule(index=st.integers(min_value=0, max_value=2), signal=st.sampled_from(list(DELTA)))
    def feedback(self, index: int, signal: str) -> None:
        mid = self._pick(index)
        res = self.eng.feedback(protocol.FeedbackParams(
            id=mid, signal=signal, project=REVIEW_PROJECT, query=REVIEW_WORD))
        old_trust, old = self.trust[mid], self.score[mid]
        new = old + DELTA[signal]
        self.score[mid] = new
        self.audit_ops[mid].append(("feedback", signal, new))
        target = model_feedback_trust(old_trust, old, new)
        assert res.score == new
        assert res.trust == target
        if target != old_trust:
            self._moved(mid, old_trust, target, "feedback", res.transition)
        else:
            assert res.transition is None

    def _review(self, index: int, action: str) -> None:
        mid = self._pick(index)
        old = self.trust[mid]
        params = protocol.ReviewParams(action=action, id=mid, project=REVIEW_PROJECT,
                                       note=f"{action} by the machine")
        if old == REVIEW_TARGET[action]:
            with pytest.raises(Refused):
                self.eng.review(params)
            return
        res = self.eng.review(params)
        assert res.memories[0].trust == REVIEW_TARGET[action]
        assert res.transition.note == f"{action} by the machine"
        self._moved(mid, old, REVIEW_TARGET[action], action, res.transition)
        if action == "approve" and old == "flagged":
            # A flagged memory, once approved, is found by query again.
            hits = self.eng.query(protocol.QueryParams(query=REVIEW_WORD, project=REVIEW_PROJECT,
                                                       k=1000)).results
            assert mid in {h.id for h in hits}

    @rule(index=st.integers(min_value=0, max_value=2))
    def approve(self, index: int) -> None:
        self._review(index, "approve")

    @rule(index=st.integers(min_value=0, max_value=2))
    def reject(self, index: int) -> None:
        self._review(index, "reject")

    @rule(index=st.integers(min_value=0, max_value=2))
    def restore(self, index: int) -> None:
        self._review(index, "restore")

    @precondition(lambda self: bool(self.ids))
    @invariant()
    def matches_model(self) -> None:
        hits = self.eng.query(protocol.QueryParams(query=REVIEW_WORD, project=REVIEW_PROJECT,
                                                   k=1000)).results
        found = {h.id for h in hits}
        for mid in self.ids:
            got = self.eng.get(protocol.GetParams(id=mid, project=REVIEW_PROJECT))
            assert (got.trust, got.feedback_score) == (self.trust[mid], self.score[mid]), mid
            assert (mid in found) == (self.trust[mid] in VISIBLE), (mid, self.trust[mid])
        # review list == trust, per state
        for state in TRUST_STATES:
            rv = self.eng.review(protocol.ReviewParams(action="list", project=REVIEW_PROJECT,
                                                       state=state))
            assert {m.id for m in rv.memories} == {m for m in self.ids if self.trust[m] == state}

    @precondition(lambda self: bool(self.ids))
    @invariant()
    def audit_records_every_transition(self) -> None:
        for mid in self.ids:
            entries = self.eng.audit(protocol.AuditParams(project=REVIEW_PROJECT, id=mid,
                                                          limit=1000)).entries
            seen = []
            for e in reversed(entries):  # oldest first
                if e.op == "store":
                    seen.append(("store",))
                elif e.op == "feedback":
                    seen.append(("feedback", e.detail["signal"], e.detail["score"]))
                elif e.op == "trust":
                    seen.append(("trust", e.detail["fromTrust"], e.detail["toTrust"],
                                 e.detail["cause"]))
                elif e.op == "conflict_detected":
                    assert e.detail["older"] in self.ids  # background check, same project
                    continue
                else:
                    seen.append((e.op,))
                assert e.front == "machine"
            assert seen == self.audit_ops[mid], mid
        # and the trust_transitions table (seen through export) agrees
        rows = [line["row"] for line in self.eng.export(REVIEW_PROJECT)
                if line.get("table") == "trust_transitions"]
        want = [(mid, *op[1:]) for mid in self.ids for op in self.audit_ops[mid]
                if op[0] == "trust"]
        got = [(r["memory_id"], r["from_trust"], r["to_trust"], r["cause"]) for r in rows]
        assert sorted(got) == sorted(want)

    def teardown(self) -> None:
        self.fx.close()


REVIEW_SETTINGS = settings(max_examples=40, stateful_step_count=25, deadline=None,
                           suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                  HealthCheck.too_slow])


def test_review_state_machine() -> None:
    ReviewMachine.visited_all = set()
    ReviewMachine.left_all = set()
    run_state_machine_as_test(ReviewMachine, settings=REVIEW_SETTINGS)
    # Over the whole run every state was reached and left (overwhelmingly likely at 60 x 25).
    assert ReviewMachine.visited_all == set(TRUST_STATES)
    assert ReviewMachine.left_all == set(TRUST_STATES)


def _step(machine: ReviewMachine, name: str, *args) -> None:
    getattr(machine, name)(*args)
    machine.matches_model()
    machine.audit_records_every_transition()


def test_review_machine_reaches_and_leaves_every_state() -> None:
    """Deterministic walk through every state and out of it, with the same model checks."""
    machine = ReviewMachine()
    try:
        machine.create(1)
        machine.matches_model()
        script = [
            ("approve", 0),                 # candidate -> verified
            ("approve", 0),                 # refused: already verified
            ("feedback", 0, "unhelpful"),   # -1
            ("feedback", 0, "outdated"),    # -3: verified -> flagged
            ("feedback", 0, "unhelpful"),   # -4: stays flagged
            ("feedback", 0, "helpful"),     # -3: stays flagged
            ("feedback", 0, "helpful"),     # -2: flagged -> candidate
            ("feedback", 0, "outdated"),    # -4: candidate -> flagged
            ("approve", 0),                 # flagged -> verified (found by query again)
            ("reject", 0),                  # verified -> rejected
            ("reject", 0),                  # refused
            ("feedback", 0, "helpful"),     # rejected stays rejected
            ("restore", 0),                 # rejected -> candidate
            ("restore", 0),                 # refused
            ("reject", 0),                  # candidate -> rejected
            ("approve", 0),                 # rejected -> verified
            ("feedback", 0, "outdated"),    # -5: verified, old score not above -3: stays
            ("feedback", 0, "helpful"),     # -4
            ("feedback", 0, "helpful"),     # -3
            ("feedback", 0, "helpful"),     # -2
            ("feedback", 0, "outdated"),    # -4: crosses: verified -> flagged
            ("reject", 0),                  # flagged -> rejected
            ("restore", 0),                 # rejected -> candidate
            ("feedback", 0, "outdated"),    # -6: candidate, not crossing: stays candidate
        ]
        for name, *args in script:
            _step(machine, name, *args)
        assert machine.visited == set(TRUST_STATES)
        assert machine.left == set(TRUST_STATES)
        assert machine.trust[machine.ids[0]] == "candidate"
        assert machine.score[machine.ids[0]] == -6
    finally:
        machine.teardown()


# ================================================================ regressions
# A memory forgotten while the background contradiction check scores it must not break the
# indexer (found by this file; fixed in the engine).


def test_forget_between_contradiction_detection_and_record(monkeypatch) -> None:
    from memls.conflicts.detector import Detector

    real_detect = Detector.detect
    with Fresh() as fx:
        eng = fx.engine
        # Drive the indexer on this thread, deterministically (no background worker).
        eng.worker.stop()
        eng.worker = None
        older = eng.store(protocol.StoreParams(text="deploy database cache", project="p")).id
        eng.indexer.drain()

        def detect_then_forget(detector, row, *rest):
            found = real_detect(detector, row, *rest)
            if any(f.older["id"] == older for f in found):
                # A user forgets the older memory while the check is between read and write.
                eng.forget(protocol.ForgetParams(id=older, reason="user_deleted", project="p"))
            return found

        monkeypatch.setattr(Detector, "detect", detect_then_forget)
        eng.store(protocol.StoreParams(text="deploy database lint", project="p"))  # contradicts
        eng.indexer.drain()  # raises sqlite3.IntegrityError: FOREIGN KEY constraint failed
        assert eng.indexer.last_error is None
        assert eng.indexer.pending() == 0
