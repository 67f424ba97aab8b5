"""The value-change signal (`memls.conflicts.values`) and the values it reads
(`memls.conflicts.quantities`): one attribute of one subject holds another value."""

from __future__ import annotations

import pytest

from memls.conflicts import score_pair
from memls.conflicts.text import analyze
from memls.conflicts.values import can_compare, equal_values, value_change


def fires(new: str, existing: str) -> bool:
    return score_pair(new, existing).contradiction


def kinds(new: str, existing: str) -> set[str]:
    return {s.kind for s in score_pair(new, existing).signals if s.weight >= 0.85}


def value(text: str):
    (found,) = analyze(text).values
    return found


def test_sizes_compare_with_a_tolerance_ports_exactly() -> None:
    assert value("The upload limit is 10 MB.").magnitude == 10_000_000.0
    assert equal_values(value("The upload limit is 10 MB."), value("The upload limit is 10.4 MB."))
    assert not equal_values(
        value("The upload limit is 10 MB."), value("The upload limit is 11 MB.")
    )
    assert not equal_values(
        value("The API listens on port 8080."), value("The API is on port 8081.")
    )


def test_versions_compare_only_for_one_product() -> None:
    assert can_compare(value("Our Lambdas run on Node.js 18."), value("We run Node 22."))
    assert not can_compare(value("We run Python 3.12."), value("We run Node 20."))


def test_a_value_change_names_both_values_of_one_subject() -> None:
    def change(new: str, existing: str) -> list[str]:
        a, b = analyze(new), analyze(existing)
        return value_change(a.clauses[0], b.clauses[0], a, b, frozenset())

    assert change(
        "The API server listens on port 8000.", "The API server listens on port 8080."
    ) == [
        "8000",
        "8080",
    ]
    assert (
        change("The API server listens on port 8000.", "The admin dashboard listens on port 9000.")
        == []
    )


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


def test_a_period_and_a_length_are_two_attributes() -> None:
    assert not fires("Snapshots are kept for 30 days.", "Snapshots run every 4 hours.")
    assert fires("Snapshots run every 12 hours.", "Snapshots run every 4 hours.")


def test_one_measure_on_each_side_of_one_subject() -> None:
    assert fires(
        "The search client times out after 2 seconds.",
        "Outbound search requests time out after 10 seconds.",
    )
    assert not fires(
        "Image pods get 4 GiB of memory.",
        "Gateway pods get 1 GiB of memory.",
    )


def test_one_product_named_two_ways_has_one_version() -> None:
    assert kinds("We run Postgres 16.", "We run PostgreSQL 14.") == {"value_change"}
    assert not fires("We run Postgres 16.", "We run Redis 7.")


def test_a_number_after_raised_to_is_a_count() -> None:
    assert fires("Queue consumers are raised to 12.", "Run the queue consumers with 3.")


@pytest.mark.parametrize(
    ("new", "existing", "fires"),
    [
        ("Use pnpm 9 for this repository.", "**pnpm**: v10+ (`npm install -g pnpm@10`)", True),
        ("Use pnpm 11 for this repository.", "**pnpm**: v10+", False),
        ("Use pnpm 10 for this repository.", "**pnpm**: v10+", False),
        ("Node v18 is enough.", "**Node**: v20.1+", True),
    ],
)
def test_a_version_with_a_plus_is_a_lower_bound(new: str, existing: str, fires: bool) -> None:
    """ "v10+" is 10 or later: 9 contradicts it, 10 and 11 agree with it."""
    verdict = score_pair(new, existing, similarity=0.85)
    assert ("value_change" in {s.kind for s in verdict.signals}) is fires
