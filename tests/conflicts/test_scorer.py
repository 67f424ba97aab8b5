"""The contradiction scorer: a pure function of one (new, existing) pair."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memls.conflicts import Signal, Verdict, score_pair, scorer

DATA = Path(__file__).resolve().parents[1] / "data" / "conflict_pairs.jsonl"
LESSONS_NEW = "We do not use Redis for sessions."
LESSONS_OLD = "We use Postgres for sessions and Redis for rate limiting."

CONTRA_CATEGORIES = {
    "contra/negation",
    "contra/antonym",
    "contra/version",
    "contra/port",
    "contra/size",
    "contra/duration",
    "contra/count",
    "contra/tool",
    "contra/person",
    "contra/place",
    "contra/override",
}
COMPAT_CATEGORIES = {
    "compat/lessons_fp",
    "compat/antonym_other_context",
    "compat/other_scope_value",
    "compat/choice_other_slot",
    "compat/paraphrase",
    "compat/additive",
    "compat/past_tense",
    "compat/shared_vocabulary",
    "compat/negation_other_subject",
    "compat/unrelated",
}


def load_pairs() -> list[dict]:
    with DATA.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def fires(new: str, existing: str) -> bool:
    return score_pair(new, existing).contradiction


def kinds(verdict: Verdict) -> set[str]:
    return {s.kind for s in verdict.signals}


def signal(verdict: Verdict, kind: str) -> Signal:
    found = [s for s in verdict.signals if s.kind == kind]
    assert found, f"no {kind} signal in {verdict}"
    return found[0]


# ------------------------------------------------------------------ each signal


@pytest.mark.parametrize(
    ("kind", "new", "existing", "triggers"),
    [
        (
            "negation",
            "The staging environment does not use feature flags.",
            "The staging environment uses feature flags.",
            {"not"},
        ),
        (
            "negation",
            "We don't use Docker for local development.",
            "We use Docker for local development.",
            {"don't"},
        ),
        (
            "antonym",
            "Telemetry is disabled by default.",
            "Telemetry is enabled by default.",
            {"disabled", "enabled"},
        ),
        (
            "antonym",
            "Debug logging is off in production.",
            "Debug logging is on in production.",
            {"off", "on"},
        ),
        (
            "value_change",
            "The API server listens on port 8000.",
            "The API server listens on port 8080.",
            {"8000", "8080"},
        ),
        (
            "value_change",
            "Access tokens expire after 15 minutes.",
            "Access tokens expire after 1 hour.",
            {"15 minutes", "1 hour"},
        ),
        (
            "value_change",
            "The backend runs on Python 3.12.",
            "The backend runs on Python 3.11.",
            {"3.12", "3.11"},
        ),
        (
            "value_change",
            "The max upload size is 50 MB.",
            "The max upload size is 10 MB.",
            {"50 mb", "10 mb"},
        ),
        (
            "choice_change",
            "Use pnpm for installing packages.",
            "Use yarn for installing packages.",
            {"pnpm", "yarn"},
        ),
        ("choice_change", "Bob now owns billing.", "Alice owns billing.", {"bob", "alice"}),
        (
            "choice_change",
            "Production is deployed to eu-west-1.",
            "Production is deployed to us-east-1.",
            {"eu-west-1", "us-east-1"},
        ),
        (
            "temporal_override",
            "We switched from Jest to Vitest for unit tests.",
            "Unit tests are written with Jest.",
            {"switched", "jest"},
        ),
        (
            "temporal_override",
            "We no longer use Celery; background jobs run on Dramatiq.",
            "Background jobs run on Celery.",
            {"no longer", "celery"},
        ),
    ],
)
def test_each_signal_fires_and_names_its_trigger_words(kind, new, existing, triggers):
    verdict = score_pair(new, existing)
    assert verdict.contradiction
    fired = signal(verdict, kind)
    assert triggers <= set(fired.triggers)
    assert fired.weight >= scorer.CONTRADICTION_THRESHOLD / scorer.GATE_FLOOR


# ------------------------------------------------------------------ measured false positives


@pytest.mark.parametrize(
    ("new", "existing"),
    [
        (
            "In the light theme, the background is white.",
            "In the dark theme, the background is black.",
        ),
        ("The API listens on port 8080.", "The admin dashboard listens on port 9000."),
        ("Telemetry is enabled in staging.", "Telemetry is disabled in production."),
        ("We stopped using Jenkins in 2021.", "We use GitHub Actions for CI."),
        ("Access tokens expire after 15 minutes.", "Refresh tokens expire after 30 days."),
        ("Dependencies are installed with pnpm, not npm.", "Use pnpm to install dependencies."),
        ("Alice also owns the invoicing cron jobs.", "Alice owns billing."),
    ],
)
def test_shared_words_in_another_context_do_not_contradict(new, existing):
    assert not score_pair(new, existing).contradiction


# ------------------------------------------------------------------ the similarity gate


def test_gate_blocks_a_strong_signal_on_an_unrelated_pair_lexically():
    verdict = score_pair(
        "We switched from Jenkins to Buildkite.",
        "Jenkins also builds the nightly Android APKs, publishes the docs site, rotates staging "
        "credentials and runs the weekly dependency audit.",
    )
    assert signal(verdict, "temporal_override").weight == scorer.SIGNAL_WEIGHTS["temporal_override"]
    assert verdict.similarity_source == "lexical"
    assert verdict.similarity < scorer.LEXICAL_SIMILARITY_MIN
    assert not verdict.contradiction
    assert verdict.confidence == 0.0


@pytest.mark.parametrize(("kind", "low"), [("cosine", 0.45), ("probability", 0.05)])
def test_gate_blocks_a_strong_signal_when_the_model_says_unrelated(kind, low):
    verdict = score_pair(
        "The API server listens on port 8000.",
        "The API server listens on port 8080.",
        similarity=low,
        similarity_kind=kind,
    )
    assert "value_change" in kinds(verdict)
    assert verdict.similarity_source == kind
    assert not verdict.contradiction


@pytest.mark.parametrize(
    ("kind", "minimum"),
    [("cosine", scorer.COSINE_SIMILARITY_MIN), ("probability", scorer.PROBABILITY_SIMILARITY_MIN)],
)
def test_one_strong_signal_on_one_candidate_fires_at_the_gate_minimum(kind, minimum):
    """No batch normalisation: one candidate, one signal, an absolute similarity at the
    minimum of its kind is enough (OMEGA could never fire with a single candidate)."""
    verdict = score_pair(
        "Use pnpm for installing packages.",
        "Use yarn for installing packages.",
        similarity=minimum,
        similarity_kind=kind,
    )
    assert [s.kind for s in verdict.signals] == ["choice_change"]
    assert verdict.contradiction
    assert verdict.similarity == pytest.approx(minimum)


def test_confidence_grows_with_similarity_and_is_absolute():
    pair = ("Bob now owns billing.", "Alice owns billing.")
    at = [
        score_pair(*pair, similarity=s, similarity_kind="cosine").confidence
        for s in (0.5, 0.7, 0.8, 0.9, 1.0)
    ]
    assert at == sorted(at)
    assert at[0] == 0.0
    # The same pair with the same similarity scores the same whatever else was scored before.
    before = score_pair(*pair, similarity=0.8)
    for other in load_pairs()[:20]:
        score_pair(other["new"], other["existing"], similarity=0.99)
    assert score_pair(*pair, similarity=0.8) == before


def test_bad_similarity_arguments_are_refused():
    with pytest.raises(ValueError):
        score_pair("a", "b", similarity=0.5, similarity_kind="euclid")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        score_pair("a", "b", similarity=float("nan"))


# ------------------------------------------------------------------ symmetry


def test_signals_other_than_the_override_do_not_depend_on_order():
    """The override reads the NEW text only; every other signal is symmetric."""
    for row in load_pairs():
        forward = kinds(score_pair(row["new"], row["existing"])) - {"temporal_override"}
        backward = kinds(score_pair(row["existing"], row["new"])) - {"temporal_override"}
        assert forward == backward, row


# ------------------------------------------------------------------ purity and robustness


def test_same_input_same_output():
    pair = ("The max upload size is 50 MB.", "The max upload size is 10 MB.")
    assert score_pair(*pair) == score_pair(*pair)
    assert msgspec.json.encode(score_pair(*pair)) == msgspec.json.encode(score_pair(*pair))


def test_verdict_serialises_in_camel_case():
    verdict = score_pair("Bob now owns billing.", "Alice owns billing.")
    data = msgspec.json.decode(msgspec.json.encode(verdict))
    assert set(data) == {
        "contradiction",
        "confidence",
        "signals",
        "similarity",
        "similaritySource",
        "updateMarker",
    }
    assert set(data["signals"][0]) == {"kind", "weight", "triggers"}


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_never_raises_and_stays_in_range_on_any_text(new, existing):
    verdict = score_pair(new, existing)
    assert 0.0 <= verdict.confidence <= 1.0
    assert 0.0 <= verdict.similarity <= 1.0
    assert verdict.contradiction == (verdict.confidence >= scorer.CONTRADICTION_THRESHOLD)
    assert score_pair(new, existing) == verdict


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("abc xyz 0123456789.:%-/'@,;")), max_size=80),
    st.text(alphabet=st.sampled_from(list("abc xyz 0123456789.:%-/'@,;")), max_size=80),
    st.floats(min_value=-1.0, max_value=1.0),
    st.sampled_from(["cosine", "probability"]),
)
def test_numbers_punctuation_and_model_similarity_stay_in_range(new, existing, sim, kind):
    verdict = score_pair(new, existing, similarity=sim, similarity_kind=kind)
    assert 0.0 <= verdict.confidence <= 1.0
    assert verdict.similarity_source == kind


# ------------------------------------------------------------------ the labelled set


def test_labelled_set_shape():
    pairs = load_pairs()
    assert len(pairs) >= 120
    for row in pairs:
        assert set(row) == {"new", "existing", "contradiction", "category", "note"}, row
        assert isinstance(row["contradiction"], bool)
        assert row["new"].strip() and row["existing"].strip()
        prefix = "contra/" if row["contradiction"] else "compat/"
        assert row["category"].startswith(prefix), row
    compatible = sum(not row["contradiction"] for row in pairs)
    assert compatible * 2 >= len(pairs)
    categories = Counter(row["category"] for row in pairs)
    assert set(categories) == CONTRA_CATEGORIES | COMPAT_CATEGORIES
    assert len({(row["new"], row["existing"]) for row in pairs}) == len(pairs)
    assert any(
        row["new"] == LESSONS_NEW and row["existing"] == LESSONS_OLD and not row["contradiction"]
        for row in pairs
    )
    markers = [
        score_pair(r["new"], r["existing"]).update_marker for r in pairs if r["contradiction"]
    ]
    assert markers.count(True) >= 10 and markers.count(False) >= 10


def test_precision_and_recall_on_the_labelled_set():
    tp = fp = fn = 0
    for row in load_pairs():
        said = score_pair(row["new"], row["existing"]).contradiction
        tp += said and row["contradiction"]
        fp += said and not row["contradiction"]
        fn += row["contradiction"] and not said
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    assert precision >= 0.95, (precision, recall)
    assert recall >= 0.80, (precision, recall)


@pytest.mark.parametrize(
    "new, existing",
    [
        (
            "checkout-service exchanges messages in Protobuf with its clients.",
            "inventory-store exchanges messages in Protobuf with its clients.",
        ),
        (
            "Backups of catalog-sync run every Monday at 17:00 UTC.",
            "Backups of reporting-pipeline run every Wednesday at 17:00 UTC.",
        ),
        (
            "CI for catalog-api runs on Buildkite; Beatriz Haddad keeps the pipeline green.",
            "CI for checkout-worker runs on Buildkite; Freya Lindqvist keeps the pipeline green.",
        ),
        (
            "inventory-sync is written in Rust; new modules follow the same layout.",
            "inventory-indexer is written in Python; new modules follow the same layout.",
        ),
    ],
)
def test_statements_about_two_different_systems_do_not_contradict(new, existing):
    """What one statement says of its system cannot contradict what another says of another
    (found on the latency corpus: 27k false pairs among 10k generated project memories)."""
    assert not score_pair(new, existing, similarity=0.9, similarity_kind="cosine").contradiction


def test_a_system_that_names_the_other_is_still_compared():
    verdict = score_pair(
        "order-service replaces legacy-orders for all checkouts.",
        "legacy-orders handles every checkout.",
        similarity=0.8,
        similarity_kind="cosine",
    )
    assert verdict.contradiction


def test_a_verdict_is_the_same_in_every_process():
    """Triggers come from sets of words: the verdict (its triggers too) must not depend on the
    interpreter's string-hash seed, or a diagnostic would change its words after a restart.
    Two chat turns with two shared kinds of slot ("guess" after a name, "2023" after a month)
    once gave ['beatriz', 'theo', 'guess'] under one seed and ['september', 'jun', '2023']
    under another."""
    import subprocess
    import sys
    from pathlib import Path

    new = (
        "[6:54 am on 6 September, 2023] Beatriz: Guess what, I hosted a board game night for "
        "the neighbours last Friday. Honestly it calmed me down a lot."
    )
    existing = (
        "[6:10 am on 1 June, 2023] Theo: Guess what, I took up rock climbing at the indoor gym "
        "last month. I felt really proud of myself."
    )
    code = (
        "import sys; from memls.conflicts.scorer import score_pair; "
        "print(repr(score_pair(sys.argv[1], sys.argv[2], similarity=0.8)))"
    )
    server = str(Path(__file__).resolve().parents[2] / "server")
    seen = {
        subprocess.run(
            [sys.executable, "-c", code, new, existing],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "PYTHONPATH": server},
        ).stdout
        for seed in range(6)
    }
    assert len(seen) == 1, seen


def test_wire_shape_is_unchanged() -> None:
    verdict = score_pair(
        "Session storage was migrated from Memcached to Redis.",
        "User sessions live in Memcached.",
    )
    assert {s.kind for s in verdict.signals} <= {
        "negation",
        "antonym",
        "value_change",
        "choice_change",
        "temporal_override",
    }
    assert set(type(verdict).__struct_fields__) == {
        "contradiction",
        "confidence",
        "signals",
        "similarity",
        "similarity_source",
        "update_marker",
    }


def test_past_and_markup() -> None:
    assert not fires("The first version stored data in MongoDB.", "Data is stored in Postgres.")
    assert not fires("| Postgres | 15 |", "Postgres 16 is the database.")


def test_a_code_only_line_claims_nothing() -> None:
    assert not fires("`npm run test -- --watch`", "Run the tests with `npm run test`.")
