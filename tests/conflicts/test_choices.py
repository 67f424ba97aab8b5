"""The choice-change signal (`memls.conflicts.choices`): one slot with another filler, two
short statements naming two things of one kind, a decision against what a job uses, a
preference order reversed."""

from __future__ import annotations

import pytest

from memls.conflicts import frames, score_pair
from memls.conflicts.choices import (
    choice_change,
    named_swap,
    preference_swap,
    preferred_against,
    told_before,
)
from memls.conflicts.phrasing import entities
from memls.conflicts.text import analyze

CONTRADICTIONS = [
    (
        "Prefer squash merges over merge commits.",
        "We prefer merge commits over squash merges to keep history.",
    ),
    (
        "Availability is prioritised over consistency for the cart service.",
        "For the cart service we prioritise consistency over availability.",
    ),
    (
        "The team will adopt Kafka for event streaming between services.",
        "Services exchange events through RabbitMQ.",
    ),
]

COMPATIBLE = [
    # the same preference, told twice
    (
        "Prefer small pull requests over large ones.",
        "Small pull requests are preferred to large ones.",
    ),
    # a related remark naming no alternative
    (
        "Kafka topics are created through the self-service portal.",
        "The team will adopt Kafka for event streaming between services.",
    ),
    # a named swap with different modifiers of the shared word: two subjects
    ("Python services are linted with Ruff.", "TypeScript services are linted with ESLint."),
    # an option weighed, not a choice made
    (
        "Alternatively, we could have used DynamoDB for the primary datastore.",
        "We will use PostgreSQL as the primary datastore.",
    ),
    # links are references, not slot fillers
    (
        "See [the runbook](https://docs.google.com/document/d/abc/edit) for the steps.",
        "See [the runbook](https://docs.google.com/document/d/xyz/edit) for the steps.",
    ),
    # paragraphs: a slot filled by common words is no choice
    (
        "Arachne achieves this by defining the whole running system as one set of components "
        "that are started and stopped together, with modules that interact only by referencing "
        "each other through the shared configuration value.",
        "Modules interact by referencing components, and each module contributes a set of data "
        "that Arachne reads at startup and turns into the runtime system of the application.",
    ),
]


def fires(new: str, existing: str) -> bool:
    return score_pair(new, existing).contradiction


def test_one_slot_with_another_filler_names_both_fillers() -> None:
    new, existing = "Use pnpm for installing packages.", "Use yarn for installing packages."
    a, b = analyze(new), analyze(existing)
    names = (entities(new), entities(existing))
    assert choice_change(a.clauses[0], b.clauses[0], a, b, names) == ["pnpm", "yarn"]
    added = analyze("Use pnpm for installing packages too.")
    assert choice_change(added.clauses[0], b.clauses[0], added, b, names) == []  # "too" adds


def test_a_named_swap_needs_a_choice_made() -> None:
    existing = "Services exchange events through RabbitMQ."
    for new, swapped in (
        ("The team will adopt Kafka for event streaming between services.", ["kafka", "rabbitmq"]),
        ("We could adopt Kafka for event streaming between services.", []),
    ):
        assert named_swap(new, existing, (entities(new), entities(existing))) == swapped


def test_a_preference_reversed_names_both_phrases() -> None:
    assert preference_swap(
        "Prefer squash merges over merge commits.",
        "We prefer merge commits over squash merges to keep history.",
    ) == [
        "prefer squash merges over merge commits",
        "prefer merge commits over squash merges to keep history",
    ]
    assert not preference_swap(
        "Prefer small pull requests over large ones.",
        "Small pull requests are preferred to large ones.",
    )


def test_a_change_the_other_text_already_states_is_told_before() -> None:
    new = "Renamed the `misc` module to `toolkit`."
    for existing, told in (
        ("Small helpers live in the toolkit module.", True),
        ("Small helpers live in the misc module.", False),
    ):
        assert told_before(new, existing, (entities(new), entities(existing))) is told


@pytest.mark.parametrize(("new", "existing"), CONTRADICTIONS)
def test_contradictions(new: str, existing: str) -> None:
    verdict = score_pair(new, existing)
    assert verdict.contradiction, verdict


@pytest.mark.parametrize(("new", "existing"), COMPATIBLE)
def test_compatible(new: str, existing: str) -> None:
    verdict = score_pair(new, existing)
    assert not verdict.contradiction, verdict


def test_a_sentence_opening_with_a_over_b_is_a_preference() -> None:
    assert frames.preferences("Latency over throughput for the quote API.")
    assert fires(
        "Latency over throughput for the quote API.",
        "The quote API favours throughput over latency.",
    )


def test_preferences_for_two_different_things_do_not_clash() -> None:
    assert not fires(
        "For the search index we favour recall over precision.",
        "For fraud scoring we favour precision over recall.",
    )


def test_a_verb_of_preference_reads_the_sentence_once() -> None:
    assert len(frames.preferences("Prefer tabs over spaces.")) == 1


def test_a_change_to_what_the_other_text_already_states_is_no_choice() -> None:
    assert not fires(
        "Renamed the `misc` module to `toolkit`.",
        "Small helpers live in the toolkit module.",
    )
    assert fires(
        "Renamed the `misc` module to `toolkit`.",
        "Small helpers live in the misc module.",
    )


def test_named_things_of_the_same_kind_fill_one_slot() -> None:
    assert fires(
        "Feature flags are read from JSON files.",
        "Feature flags live in INI files under settings/.",
    )
    assert not fires(
        "Ruff formats the Python code.",
        "Biome formats the JavaScript code.",
    )


def test_a_decision_for_a_job_replaces_what_the_job_used() -> None:
    assert frames.decisions("We chose gRPC for service-to-service calls.")
    assert fires(
        "We will use Kafka as the event backbone for order events.",
        "Order events are published to Amazon SNS topics and fanned out to SQS queues.",
    )
    assert not fires(
        "We will use Kafka as the event backbone for order events.",
        "Order events go through Kafka.",
    )
    assert not fires("We will use Sentry for error tracking.", "Metrics are scraped by Prometheus.")


def test_preference_with_one_crossed_filler() -> None:
    assert fires(
        "When in doubt, pick the managed service over running it ourselves.",
        "We prefer self-hosting to managed services to keep costs down.",
    )
    # both put the same thing first: no swap, whatever comes second
    assert not preference_swap(
        "Prefer explicit imports over wildcard imports.",
        "Prefer explicit imports over relative imports.",
    )


def test_choice_slot_guards() -> None:
    assert not fires(
        "Feature flags live in the database.", "Feature flags are cleaned up after a release."
    )
    assert not fires("Argo CD uses the app-of-apps pattern.", "Deployments are handled by Argo CD.")
    assert not fires(
        "The API gateway enforces a 30 second timeout.", "The API gateway terminates TLS."
    )
    assert not fires(
        "EU customer data stays in Frankfurt.", "US customer data is stored in us-east-1."
    )
    assert fires("Timestamps are stored in UTC.", "Timestamps are stored in local time.")


def test_a_named_thing_that_changes_ends_is_the_topic_not_a_slot() -> None:
    assert not fires(
        "Playwright tests run in headless Chromium.", "End-to-end tests use Playwright."
    )
    assert fires("The Android release is signed off by Ravi.", "Mei signs off the Android release.")


def test_a_thing_used_with_another_in_brackets_is_a_preference() -> None:
    """ "Use end-to-end tests (not mocks)" ranks end-to-end tests above mocks; what it is used
    for is no part of either."""
    ((used, over, _),) = frames.preferences("Use end-to-end tests (not mocks)")
    assert (used, over) == (frozenset({"end-to-end", "test"}), frozenset({"mock"}))
    ((used, over, _),) = frames.preferences("Use **tox** for testing (not pytest directly):")
    assert used == frozenset({"tox"})


@pytest.mark.parametrize(
    ("new", "existing", "swapped"),
    [
        (
            "Prefer mocks over end-to-end tests for integrations",
            "Use end-to-end tests (not mocks)",
            True,
        ),
        (
            "Prefer mocks over end-to-end tests for integrations",
            "Use **tox** for testing (not pytest directly):",
            False,
        ),
        ("Prefer end-to-end tests over mocks", "Use end-to-end tests (not mocks)", False),
    ],
)
def test_a_bracketed_preference_reversed(new: str, existing: str, swapped: bool) -> None:
    assert bool(preference_swap(new, existing)) is swapped


@pytest.mark.parametrize(
    ("rule", "other", "found"),
    [
        ("Use spaces, never tabs.", "Indent with tabs.", True),
        ("Indent with 4 spaces, never tabs.", "Indent with tabs.", True),
        ("Use uv, never pip.", "Install the package with pip install -e .", True),
        ("Use spaces, never tabs.", "Indent with spaces; tabs are converted.", False),  # names A
        ("Use spaces, never tabs.", "Never indent with tabs.", False),  # agrees
        ("Use spaces, never tabs.", "Use tabs over spaces in Makefiles.", False),  # a preference
        ("Use spaces, never tabs.", "Only Makefiles are indented with tabs.", False),  # limited
    ],
)
def test_a_preference_against_the_thing_the_other_text_states(
    rule: str, other: str, found: bool
) -> None:
    """A over B, and the other text states B for itself (no A, no negator, no preference)."""
    assert bool(preferred_against(rule, other)) is found
    if found:
        assert score_pair(other, rule, similarity=0.85).contradiction
