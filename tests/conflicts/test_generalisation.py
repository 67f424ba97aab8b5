"""Rules that generalise beyond the phrasing of the tuning set.

Each rule has a pair it must fire on and a near pair it must leave alone. The sentences are
written for these tests, not taken from the labelled sets."""

from __future__ import annotations

import pytest

from memls.conflicts import frames, score_pair


def fires(new: str, existing: str) -> bool:
    return score_pair(new, existing).contradiction


def kinds(new: str, existing: str) -> set[str]:
    return {s.kind for s in score_pair(new, existing).signals if s.weight >= 0.85}


# ---------------------------------------------------------------- preferences


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


# ---------------------------------------------------------------- change frames


def test_rewritten_from_a_names_what_was_replaced() -> None:
    assert fires(
        "The billing worker is a Go binary now, rewritten from the old Ruby code.",
        "The billing worker is written in Ruby.",
    )
    assert not fires(
        "The billing worker is a Go binary now, rewritten from the old Ruby code.",
        "The billing worker is written in Go.",
    )


def test_instead_of_reads_the_word_next_to_it_as_the_new_filler() -> None:
    assert fires(
        "Rust services log with tracing instead of log4rs.",
        "Rust services log through log4rs with a JSON appender.",
    )
    assert not fires(
        "Rust services log with tracing instead of log4rs.",
        "Rust services log with tracing and a JSON layer.",
    )


def test_a_trailing_scope_matches_a_compound_of_the_other_text() -> None:
    assert fires(
        "Playwright instead of Cypress for all browser tests in the web packages.",
        "Web packages are browser-tested with Cypress.",
    )
    assert not fires(
        "Playwright instead of Cypress for the admin app.",
        "The customer app runs its browser tests with Cypress.",
    )


def test_imperative_removal_and_dropping_support() -> None:
    assert fires(
        "Drop the Memcached layer entirely; Postgres is fast enough.",
        "Search results are cached in Memcached for a minute.",
    )
    assert fires("We are dropping support for Safari 14.", "The web app supports Safari 14.")
    assert not fires("We are dropping support for Safari 14.", "The web app supports Safari 16.")


def test_a_thing_no_longer_used_is_removed() -> None:
    (change,) = frames.changes("Vagrant is no longer used for local development.")
    assert change.kind == "remove" and "vagrant" in change.old
    assert fires(
        "Vagrant is no longer used for local development.",
        "Start the local stack with `Vagrant up`.",
    )
    assert not fires(
        "Vagrant is no longer used for local development.",
        "Local development uses Docker Compose.",
    )


def test_off_a_onto_b_and_got_rid_of() -> None:
    assert fires(
        "we moved the tracing pipeline off Zipkin and onto Tempo",
        "Services send spans to Zipkin through the local agent.",
    )
    assert fires(
        "we got rid of the shared QA cluster",
        "Testers deploy to the shared QA cluster on qa.internal.",
    )
    assert not fires(
        "we got rid of the shared QA cluster",
        "Each team runs its own preview environments.",
    )


def test_supersede_without_s() -> None:
    assert fires(
        "Grafana alerts supersede the old Zabbix triggers.",
        "Disk usage is watched by Zabbix triggers that page the on-call engineer.",
    )


def test_an_option_weighed_states_no_change() -> None:
    new = "Option 3: replace Celery with Dramatiq. Pros: simpler. Cons: fewer integrations."
    assert not fires(new, "Background jobs run on Celery.")
    assert fires("We replaced Celery with Dramatiq.", "Background jobs run on Celery.")


def test_a_change_to_what_the_other_text_already_states_is_no_choice() -> None:
    assert not fires(
        "Renamed the `misc` module to `toolkit`.",
        "Small helpers live in the toolkit module.",
    )
    assert fires(
        "Renamed the `misc` module to `toolkit`.",
        "Small helpers live in the misc module.",
    )


# ---------------------------------------------------------------- values


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


# ---------------------------------------------------------------- choices and rules


def test_named_things_of_the_same_kind_fill_one_slot() -> None:
    assert fires(
        "Feature flags are read from JSON files.",
        "Feature flags live in INI files under settings/.",
    )
    assert not fires(
        "Ruff formats the Python code.",
        "Biome formats the JavaScript code.",
    )


def test_a_rule_forbids_what_the_other_text_does() -> None:
    assert frames.prohibitions("Never commit compiled wasm bundles.")
    assert kinds(
        "Never commit compiled wasm bundles.",
        "Compiled wasm bundles are checked into dist/ for the docs site.",
    ) == {"negation"}
    assert fires(
        "Do not edit CHANGELOG.md by hand.",
        "Add a line to CHANGELOG.md with every change.",
    )


@pytest.mark.parametrize(
    ("rule", "other"),
    [
        ("Never hardcode tokens in the Helm values.", "Tokens are injected from Vault."),
        (
            "We do not write snapshot tests for generated code.",
            "We write snapshot tests for every page.",
        ),
        (
            "The public API does not return internal IDs.",
            "The internal admin API returns database IDs.",
        ),
        ("Never commit compiled wasm bundles.", "Compiled wasm bundles are not committed."),
    ],
)
def test_a_rule_on_another_thing_or_scope_is_no_negation(rule: str, other: str) -> None:
    assert "negation" not in kinds(rule, other)


def test_a_code_only_line_claims_nothing() -> None:
    assert not fires("`npm run test -- --watch`", "Run the tests with `npm run test`.")
