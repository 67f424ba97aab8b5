"""The scorer's pair-model input (`meaning=`): what the model reads is an input, computed by the
caller, like the similarity. Pure cases with readings given by hand, then the real model through
the real engine (a store, the check after it)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memls import protocol as p
from memls.conflicts.meaning import MEANING_ALONE, MEANING_APART, RESTATES, Meaning, decided
from memls.conflicts.reader import PairReader
from memls.conflicts.scorer import COSINE_SIMILARITY_MIN, score_pair
from memls.dedup import is_restatement

SURE_APART = Meaning(contradiction=0.02, entailment=0.08, neutral=0.90)
SURE_CONTRA = Meaning(contradiction=0.97, entailment=0.01, neutral=0.02)
UNSURE = Meaning(contradiction=0.5, entailment=0.1, neutral=0.4)
MODULES = ("Module 4 is owned by the payments team.", "Module 3 is owned by the payments team.")
SCOPED = ("On macOS, run `bin/check.sh` instead of `make check`.", "Always run `make check`.")


def kinds(verdict):
    return [s.kind for s in verdict.signals]


_PROB = st.floats(min_value=0.0, max_value=1.0)


@given(st.tuples(_PROB, _PROB, _PROB), st.tuples(_PROB, _PROB, _PROB))
def test_a_first_reading_that_settles_the_pair_gives_what_both_orders_would(forward, backward):
    if not decided(forward):
        return
    both, once = Meaning.of(forward, backward), Meaning.one_way(forward)
    assert (both.contradicts, both.apart, both.agrees) == (
        once.contradicts,
        once.apart,
        once.agrees,
    )


def test_a_first_reading_that_could_go_either_way_asks_for_the_second():
    assert not decided((0.05, 0.05, 0.85))  # apart if the other order reads 0.95
    assert decided((0.05, 0.2, 0.75))
    assert Meaning.of((0.05, 0.05, 0.85), (0, 0, 0.95)).apart


def test_both_orders_are_averaged_and_restating_needs_both():
    m = Meaning.of((0.1, 0.8, 0.1), (0.3, 0.2, 0.5))
    assert (m.contradiction, m.entailment, m.neutral) == (0.2, 0.5, 0.3)
    assert m.mutual_entailment == 0.2 and not m.restates
    assert Meaning.of((0, 0.9, 0.1), (0, 0.85, 0.15)).restates
    assert SURE_APART.apart and not UNSURE.contradicts and not UNSURE.apart
    assert MEANING_ALONE > 1 and not SURE_CONTRA.contradicts  # the model alone decides nothing
    assert 0.5 < MEANING_APART <= 1 and 0.5 < RESTATES <= 1


def test_a_number_that_names_the_subject_is_no_value_when_the_model_reads_two_things():
    assert kinds(score_pair(*MODULES)) == ["value_change"]  # words alone: a changed value
    read = score_pair(*MODULES, meaning=SURE_APART)
    assert not read.contradiction and read.signals == []
    # unsure: the words decide as before
    assert score_pair(*MODULES, meaning=UNSURE).contradiction


def test_change_words_count_only_when_the_model_reads_one_subject():
    assert kinds(score_pair(*SCOPED)) == ["temporal_override"]
    assert not score_pair(*SCOPED, meaning=SURE_APART).contradiction


def test_the_model_alone_would_find_what_has_no_change_word(monkeypatch):
    new, old = "Big pull requests are fine here.", "Keep each pull request small."
    assert score_pair(new, old).signals == []
    assert not score_pair(new, old, meaning=SURE_CONTRA).contradiction  # switched off
    monkeypatch.setattr("memls.conflicts.meaning.MEANING_ALONE", 0.9)
    read = score_pair(new, old, meaning=SURE_CONTRA)
    assert read.contradiction and kinds(read) == ["meaning"]
    assert read.signals[0].triggers == ["contradiction 0.97"]


def test_the_reading_counts_only_past_the_similarity_gate(monkeypatch):
    monkeypatch.setattr("memls.conflicts.meaning.MEANING_ALONE", 0.9)
    new, old = "Big pull requests are fine here.", "Keep each pull request small."
    shut = score_pair(new, old, similarity=COSINE_SIMILARITY_MIN - 0.05, meaning=SURE_CONTRA)
    assert not shut.contradiction and shut.signals == []


def test_a_scope_or_a_code_line_silences_the_model_too():
    assert not score_pair(
        "Staging uses Redis.", "Production uses Memcached.", meaning=SURE_CONTRA
    ).contradiction
    assert not score_pair(
        "`make check`", "Never run make check.", meaning=SURE_CONTRA
    ).contradiction


def test_a_restatement_the_model_reads_is_merged_only_close_and_naming_the_same_things():
    old, new = "We use pytest for the Python tests.", "The Python tests are written with pytest."
    both = Meaning(contradiction=0.01, entailment=0.95, neutral=0.04, mutual_entailment=0.93)
    assert not is_restatement(old, new, cosine=0.92, cross=0.5)
    assert is_restatement(old, new, cosine=0.92, cross=0.5, meaning=both)
    assert not is_restatement(old, new, cosine=0.8, cross=0.5, meaning=both)  # not close enough
    assert not is_restatement(*MODULES, cosine=0.99, cross=0.99, meaning=both)  # names differ


# -- the real model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def read(models):
    return PairReader(models.pair)


def test_the_real_model_reads_identifiers_values_and_restatements(read):
    versions = ("Python 3.12 is used in CI.", "Python 3.11 is used in CI.")
    same = ("The cache is Redis.", "Redis holds the cache.")
    modules, changed, restated = read([MODULES, versions, same])
    assert modules.apart and not score_pair(*MODULES, meaning=modules).contradiction
    # the version pair reads as one subject: the changed number still counts
    assert not changed.apart and score_pair(*versions, meaning=changed).contradiction
    assert restated.restates and restated.entailment > 0.9
    assert PairReader(None)([MODULES]) is None


def test_the_detector_s_reading_reads_the_other_way_round_only_what_is_open(models):
    pairs = [
        MODULES,
        ("Python 3.12 is used in CI.", "Python 3.11 is used in CI."),
        ("We deploy on Fridays.", "We never deploy on Fridays."),
        SCOPED,
    ]
    forward = [tuple(map(float, f)) for f in models.pair.classify(pairs)]
    open_ = [k for k, f in enumerate(forward) if not decided(f)]
    assert open_ and len(open_) < len(pairs)  # both kinds among them
    backward = models.pair.classify([pairs[k][::-1] for k in open_])
    expected = [Meaning.one_way(f) for f in forward]
    for k, b in zip(open_, backward):
        expected[k] = Meaning.of(forward[k], tuple(map(float, b)))
    assert PairReader(models.pair, decided)(pairs) == expected


def store(engine, text):
    return engine.store(p.parse(p.StoreParams, {"text": text, "project": "alpha"}))


def open_conflicts(engine):
    engine.flush()
    return engine.conflicts(p.ConflictsParams(project="alpha")).conflicts


def test_the_engine_checks_with_the_model_after_the_store(vengine):
    store(vengine, "Shard 7 runs on the old hardware.")
    store(vengine, "Shard 8 runs on the old hardware.")
    assert open_conflicts(vengine) == []
    store(vengine, "Python 3.11 is used in CI.")
    store(vengine, "Python 3.12 is used in CI.")
    (found,) = open_conflicts(vengine)
    assert {found.newer.content, found.older.content} == {
        "Python 3.11 is used in CI.",
        "Python 3.12 is used in CI.",
    }


def test_a_missing_pair_model_degrades_loudly_and_the_signals_still_decide(tmp_path, clock):
    from memls.engine import Engine
    from memls.models import ModelRuntime

    with (
        ModelRuntime(pair_dir=tmp_path / "no-pair-model") as models,
        Engine.open(tmp_path / "data", front="test", clock=clock, models=models) as engine,
    ):
        store(engine, "We use yarn for package management")
        store(engine, "We switched from yarn to pnpm for package management")
        (found,) = open_conflicts(engine)
        assert [s.kind for s in found.signals] == ["temporal_override"]
        health = engine.health()
        assert not health.ok and any("pair missing" in d for d in health.degraded)
        assert health.models["pair"]["state"] == "missing"
        report = engine.doctor(p.DoctorParams(project="alpha"))
        assert any("pair missing" in line for line in report.problems)
