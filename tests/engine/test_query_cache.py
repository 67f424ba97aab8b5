"""The query cache: a cached answer is never stale.

Random histories of every kind of write (store, forget, supersede, feedback, review, note sync,
maintain/expiry, import, resolve) and of the clock moving, interleaved with repeated queries
against the real engine: after each step every query's answer from `query` (cached when
nothing changed) must equal the answer computed afresh (`query_uncached`) at the same moment.
"""

from __future__ import annotations

import tempfile
import threading
from datetime import timedelta

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import query, store
from memls import protocol
from memls.engine import Engine
from memls.engine.cache import MAX_AGE_SECONDS
from memls.errors import MemlsError
from memls.retrieval.pipeline import RetrievalConfig
from memls.scope import USER_PROJECT
from property_helpers import BASE, VOCAB, text_strategy, ts


class StoppedClock:
    """Stands still until the test moves it: a cached and a fresh answer see one moment."""

    def __init__(self) -> None:
        self.moment = BASE
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            return ts(self.moment)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.moment += timedelta(seconds=seconds)


PROJECT = "alpha"
QUERIES = [
    protocol.QueryParams(query=q, project=PROJECT, **kw)
    for q, kw in [
        (" ".join(VOCAB), {}),
        ("deploy database", {"k": 3}),
        ("cache token", {"include_user": True}),
        ("release schema", {"types": ["decision", "note"]}),
        ("lint migration deploy", {"explain": True, "depth": "none"}),
        ("deploy", {"valid_at": ts(BASE + timedelta(days=2))}),
        ("database cache", {"as_of": ts(BASE + timedelta(hours=1))}),
        ("token release", {"mode": "interactive"}),
    ]
]

WRITE = st.one_of(
    st.tuples(
        st.just("store"),
        text_strategy(),
        st.sampled_from(["note", "decision", "fact"]),
        st.sampled_from([PROJECT, PROJECT, USER_PROJECT]),
        st.sampled_from([None, -3600, 30, 90, 4000]),  # valid_from offset (s)
        st.sampled_from([None, None, 20, 45, 70, 7200]),  # validity length (s)
    ),
    st.tuples(st.just("forget"), st.integers(0, 30)),
    st.tuples(st.just("supersede"), st.integers(0, 30), st.integers(0, 30)),
    st.tuples(
        st.just("feedback"),
        st.integers(0, 30),
        st.sampled_from(["helpful", "unhelpful", "outdated"]),
    ),
    st.tuples(
        st.just("review"), st.integers(0, 30), st.sampled_from(["approve", "reject", "restore"])
    ),
    st.tuples(st.just("note"), st.lists(text_strategy(), max_size=3)),
    st.tuples(st.just("maintain")),
    st.tuples(st.just("import")),
    st.tuples(st.just("resolve")),
)


def apply(engine: Engine, ids: list[str], step: tuple) -> None:
    """One write; a refused one (unknown id, a forbidden transition) changes nothing."""
    kind, *args = step
    pick = lambda i: ids[i % len(ids)] if ids else "m-none"  # noqa: E731
    try:
        if kind == "store":
            text, type_, project, start, length = args
            moment = engine.clock()
            valid_from = None
            if start is not None:
                valid_from = ts(_parse(moment) + timedelta(seconds=start))
            valid_until = None
            if length is not None:
                begin = _parse(valid_from or moment)
                valid_until = ts(begin + timedelta(seconds=length))
            r = store(
                engine,
                text,
                project,
                type=type_,
                **({"validFrom": valid_from} if valid_from else {}),
                **({"validUntil": valid_until} if valid_until else {}),
            )
            if r.project == PROJECT:
                ids.append(r.id)
        elif kind == "forget":
            engine.forget(
                protocol.ForgetParams(id=pick(args[0]), reason="user_deleted", project=PROJECT)
            )
        elif kind == "supersede":
            engine.supersede(
                protocol.SupersedeParams(old=pick(args[0]), by=pick(args[1]), project=PROJECT)
            )
        elif kind == "feedback":
            engine.feedback(
                protocol.FeedbackParams(id=pick(args[0]), signal=args[1], project=PROJECT)
            )
        elif kind == "review":
            engine.review(protocol.ReviewParams(action=args[1], id=pick(args[0]), project=PROJECT))
        elif kind == "note":
            text = "".join(f"- {t}\n" for t in args[0])
            engine.sync_note(
                protocol.SyncNoteParams(uri="file:///w/AGENTS.md", text=text, project=PROJECT)
            )
        elif kind == "maintain":
            engine.maintain(protocol.MaintainParams(project=PROJECT))
        elif kind == "import":
            # a round trip of the other project's export into a project of its own name
            lines = [msgspec.json.encode(x).decode() for x in engine.export("beta")]
            engine.import_("beta", lines)
        elif kind == "resolve":
            open_pairs = engine.conflicts(protocol.ConflictsParams(project=PROJECT)).conflicts
            if open_pairs:
                c = open_pairs[0]
                engine.resolve(
                    protocol.ResolveParams(
                        a=c.newer.id, b=c.older.id, action="supersede", project=PROJECT
                    )
                )
    except MemlsError:
        pass


def _parse(moment: str):
    from datetime import datetime

    return datetime.fromisoformat(moment.replace("Z", "+00:00"))


def comparable(result: protocol.QueryResult) -> dict:
    data = protocol.to_wire(result)
    data.pop("tookMs", None)
    data.pop("cached", None)
    return data


def check_queries(engine: Engine) -> int:
    """Every query, twice through the cache, against a fresh answer; returns the hits."""
    engine.flush()  # the write-time contradiction check runs on the indexer: let it land
    hits = 0
    for params in QUERIES:
        for _ in range(2):
            cached = engine.query(params)
            hits += cached.cached
            assert comparable(cached) == comparable(engine.query_uncached(params)), (
                params,
                cached.cached,
            )
    return hits


def run_history(config: RetrievalConfig, steps, moves) -> int:
    clock = StoppedClock()
    with tempfile.TemporaryDirectory(prefix="memls-cache-") as tmp:
        engine = Engine.open(tmp, front="test", clock=clock, vectors=False, retrieval=config)
        try:
            store(engine, "deploy release beta", "beta")
            ids: list[str] = []
            hits = check_queries(engine)
            for step, move in zip(steps, moves, strict=True):
                if move:
                    clock.advance(move)
                else:
                    apply(engine, ids, step)
                hits += check_queries(engine)
            return hits
        finally:
            engine.close()


HISTORY = st.integers(4, 14).flatmap(
    lambda n: st.tuples(st.lists(WRITE, min_size=n, max_size=n), st.just(n))
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_a_cached_answer_is_never_stale_without_decay(data):
    """Scores without time decay: the clock moves by any amount (validity starts and ends
    between queries, with no write), and every write kind happens."""
    steps, n = data.draw(HISTORY)
    moves = data.draw(
        st.lists(st.sampled_from([0, 0, 0, 1, 15, 25, 50, 3600]), min_size=n, max_size=n)
    )
    run_history(RetrievalConfig(boosts=False), steps, moves)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_a_cached_answer_is_never_stale_with_decay(data):
    """The default scoring (decay moves scores with time): an entry lives `MAX_AGE_SECONDS`,
    so the clock either stands or moves at least that far."""
    steps, n = data.draw(HISTORY)
    moves = data.draw(
        st.lists(
            st.sampled_from([0, 0, 0, MAX_AGE_SECONDS, MAX_AGE_SECONDS + 1, 86_400 * 30]),
            min_size=n,
            max_size=n,
        )
    )
    run_history(RetrievalConfig(), steps, moves)


# ---------------------------------------------------------------- behaviour, one at a time


@pytest.fixture
def engine(tmp_path):
    e = Engine.open(tmp_path / "data", front="test", clock=StoppedClock(), vectors=False)
    yield e
    e.close()


def test_a_repeated_query_is_a_hit_and_stats_count_it(engine):
    store(engine, "deploy on tuesdays")
    assert engine.flush()  # the indexer's batch drops the project's answers: let it pass first
    first = query(engine, "deploy")
    second = query(engine, "deploy")
    assert (first.cached, second.cached) == (False, True)
    assert comparable(first) == comparable(second)
    stats = engine.stats(protocol.StatsParams(project="alpha")).query_cache
    assert (stats.hits, stats.misses, stats.entries, stats.enabled) == (1, 1, 1, True)


def test_every_parameter_is_part_of_the_key(engine):
    store(engine, "deploy on tuesdays", type="decision")
    assert engine.flush()  # the indexer's batch drops the project's answers: let it pass first
    query(engine, "deploy")
    for kw in (
        {"k": 3},
        {"types": ["decision"]},
        {"includeUser": True},
        {"validAt": "2025-01-01T00:00:00Z"},
        {"asOf": "2025-01-01T00:00:00Z"},
        {"mode": "lexical"},
        {"depth": "interactive"},
        {"rerank": False},
        {"rerankDepth": 3},
        {"explain": True},
    ):
        assert not query(engine, "deploy", **kw).cached, kw
        assert query(engine, "deploy", **kw).cached, kw
    assert not query(engine, "Deploy").cached


def test_a_write_to_any_project_drops_the_entry(engine):
    """BM25 statistics span every project's text: another project's write moves scores."""
    store(engine, "deploy on tuesdays")
    assert engine.flush()  # alpha's index batch has passed: only the write can drop the entry
    query(engine, "deploy")
    store(engine, "deploy on fridays", project="beta")
    assert engine.flush()  # beta's batch drops no answer of alpha's
    assert not query(engine, "deploy").cached
    assert query(engine, "deploy").cached


def test_an_index_batch_drops_only_the_answers_that_saw_its_project(engine):
    """The vector copy is per project (the indexer tells which)."""
    store(engine, "deploy on tuesdays")
    store(engine, "I deploy with care", project=USER_PROJECT)
    engine.flush()
    query(engine, "deploy")
    query(engine, "deploy", includeUser=True)
    engine.cache.invalidate(USER_PROJECT, record=False)
    assert query(engine, "deploy").cached  # @user is not seen without includeUser
    assert not query(engine, "deploy", includeUser=True).cached


def test_cache_off_by_setting_and_by_open(tmp_path):
    (tmp_path / "a").mkdir(mode=0o700)
    (tmp_path / "a" / "config.toml").write_text("[retrieval]\ncache = false\n")
    for e in (
        Engine.open(tmp_path / "a", vectors=False),
        Engine.open(tmp_path / "b", vectors=False, cache=False),
    ):
        with e:
            store(e, "deploy on tuesdays")
            assert [query(e, "deploy").cached for _ in range(2)] == [False, False]
            assert e.stats(protocol.StatsParams(project="alpha")).query_cache.enabled is False


def test_the_cache_is_bounded_least_recently_used_first(tmp_path):
    (tmp_path / "config.toml").write_text("[retrieval]\ncache_entries = 2\n")
    with Engine.open(tmp_path, vectors=False) as e:
        store(e, "deploy database cache")
        e.flush()  # the indexer's batch drops the project's answers: let it land first
        for word in ("deploy", "database", "deploy", "cache"):
            query(e, word)
        assert query(e, "deploy").cached  # used recently: kept
        assert not query(e, "database").cached  # the least recently used: dropped
        assert e.stats(protocol.StatsParams(project="alpha")).query_cache.entries == 2


def test_a_query_that_raced_a_write_is_not_stored(engine):
    """The generation taken before the search no longer matches after the write."""
    store(engine, "deploy on tuesdays")
    cache = engine.cache
    key = ("k",)
    generation = cache.generation(("alpha",))
    store(engine, "deploy on fridays")  # commits while the (pretend) search runs
    assert not cache.put(key, ("alpha",), generation, "stale", now_us=0)
    assert cache.get(key, 0) is None
