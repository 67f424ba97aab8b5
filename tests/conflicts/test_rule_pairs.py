"""Each rule of the scorer fires on a pair and leaves a near pair alone.

The sentences are written for these tests, not taken from the labelled sets."""

from __future__ import annotations

import pytest

from memls.conflicts import frames, score_pair
from memls.conflicts.scorer import _preference_swap
from memls.conflicts.text import analyze


def fires(new: str, existing: str) -> bool:
    return score_pair(new, existing).contradiction


# ---------------------------------------------------------------- values said in words


@pytest.mark.parametrize(
    ("new", "existing"),
    [
        ("The on-call rotation is now weekly.", "On-call shifts rotate every day."),
        ("Backups are taken hourly.", "A backup runs every 12 hours."),
        ("Releases ship every other Friday.", "We release weekly."),
        ("The release train leaves every second week.", "We ship a release every Thursday."),
        ("Standups are on Tuesdays.", "Standup happens every Monday."),
    ],
)
def test_frequencies_in_words_are_periods(new: str, existing: str) -> None:
    assert fires(new, existing)


def test_a_frequency_restated_is_no_change() -> None:
    assert not fires("Logs are rotated daily.", "Log files rotate every 24 hours.")
    assert not fires(
        "Nightly snapshots are kept for 14 days.", "Monthly snapshots are kept for 1 year."
    )


def test_frequency_words_stay_subject_words() -> None:
    # "every night" vs "on deploy": two occasions, the negation concerns the other one
    assert not fires(
        "The search index is rebuilt every night.", "The search index is not rebuilt on deploy."
    )


def test_fractions_of_a_unit() -> None:
    assert not fires(
        "Tokens expire after 15 minutes.", "An access token is valid for a quarter of an hour."
    )
    assert not fires("The session timeout is half an hour.", "Sessions time out after 30 minutes.")
    assert fires("The session timeout is half an hour.", "Sessions time out after 10 minutes.")


def test_one_version_per_product() -> None:
    assert fires(
        "Node 22 is the runtime for all Lambda functions.",
        "Our Lambdas run on the Node.js 18 runtime.",
    )
    assert fires("Postgres was upgraded to 16 last weekend.", "Production runs PostgreSQL 13.")
    assert not fires("The worker pool was raised to 16.", "Production runs PostgreSQL 13.")


def test_rates_compare_per_unit_of_time() -> None:
    assert fires("Rate limit: 100 requests per minute.", "Clients may send 1000 requests per hour.")
    assert not fires(
        "Rate limit: 100 requests per minute.", "Clients may send 6000 requests per hour."
    )
    assert not fires(
        "The rate limiter allows 100 requests per minute per token.",
        "Anonymous clients are limited to 10 requests per minute.",
    )


def test_a_reading_is_not_a_threshold() -> None:
    assert not fires("Coverage is currently 87%.", "The coverage gate is 80%.")
    assert not fires(
        "Coverage of the payments module is 91% today.",
        "CI fails when coverage drops below 80 percent.",
    )
    assert fires("The coverage gate is 90%.", "The coverage gate is 80%.")


def test_a_verb_and_its_particle_are_the_compound() -> None:
    assert "timeout" in analyze("Builds time out after 20 minutes.").joined
    assert fires("Sessions now time out after 2 hours.", "The session timeout is 30 minutes.")


def test_two_subjects_with_one_head_noun() -> None:
    assert not fires(
        "The lint job has a 10-minute timeout.", "The test job may run for up to 45 minutes."
    )


def test_hyphenated_durations() -> None:
    assert fires("Sprints last three weeks.", "We work in two-week sprints.")


# ---------------------------------------------------------------- choices and changes


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


def test_change_frames_left_taken_out_of_and_supersedes() -> None:
    assert fires(
        "Docs are hosted on GitHub Pages since we left Read the Docs.",
        "Docs are built on Read the Docs.",
    )
    assert fires("Search now runs on Meilisearch.", "Search is powered by Elasticsearch.")
    assert fires(
        "Moved feature flags out of the database into Unleash.",
        "Feature flags live in the database.",
    )
    assert fires(
        "Use AKS for all clusters; this replaces the self-managed control plane.",
        "We run our own Kubernetes control plane on three dedicated VMs.",
    )
    assert fires(
        "This ADR supersedes ADR-0007: image thumbnails are generated on upload.",
        "ADR-0007: thumbnails are generated lazily on first request and then cached.",
    )


def test_preference_with_one_crossed_filler() -> None:
    assert fires(
        "When in doubt, pick the managed service over running it ourselves.",
        "We prefer self-hosting to managed services to keep costs down.",
    )
    # both put the same thing first: no swap, whatever comes second
    assert not _preference_swap(
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


def test_rules_forbid_compounds_and_avoid() -> None:
    assert fires("Do not use default exports.", "Components are default-exported.")
    assert frames.prohibitions("Avoid global state.")


def test_morphological_opposites() -> None:
    assert fires("Release artifacts are signed.", "Release artifacts are unsigned.")
    assert not fires("Release artifacts are signed.", "Release artifacts are uploaded.")


def test_past_and_markup() -> None:
    assert not fires("The first version stored data in MongoDB.", "Data is stored in Postgres.")
    assert not fires("| Postgres | 15 |", "Postgres 16 is the database.")


def test_a_value_named_as_replaced_is_not_still_stated() -> None:
    assert fires(
        "Releases are now cut every two weeks rather than every month.",
        "We cut a release once a month.",
    )
    assert fires(
        "The timeout was raised from 30 to 60 seconds.", "Requests time out after 30 seconds."
    )
    assert not fires(
        "The timeout was raised from 30 to 60 seconds.", "Requests time out after 60 seconds."
    )


def test_a_negator_is_no_modifier_and_a_possessive_is_its_noun() -> None:
    assert fires(
        "Tests must not call the real payment provider.",
        "Checkout tests call the payment provider's sandbox directly.",
    )


def test_a_named_thing_that_changes_ends_is_the_topic_not_a_slot() -> None:
    assert not fires(
        "Playwright tests run in headless Chromium.", "End-to-end tests use Playwright."
    )
    assert fires("The Android release is signed off by Ravi.", "Mei signs off the Android release.")


def test_self_prefixed_opposites() -> None:
    assert fires("Grafana is hosted by the vendor.", "Grafana is self-hosted.")
