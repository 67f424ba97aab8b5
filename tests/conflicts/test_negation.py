"""The negation signal (`memls.conflicts.negation`): one side negates what the other states
about the same subject, or a rule forbids what the other text does."""

from __future__ import annotations

import pytest

from memls.conflicts import Verdict, frames, score_pair
from memls.conflicts.negation import forbidden, is_negative, negation
from memls.conflicts.phrasing import entities
from memls.conflicts.text import analyze

LESSONS_NEW = "We do not use Redis for sessions."
LESSONS_OLD = "We use Postgres for sessions and Redis for rate limiting."


def fires(new: str, existing: str) -> bool:
    return score_pair(new, existing).contradiction


def kinds(new: str, existing: str) -> set[str]:
    return {s.kind for s in score_pair(new, existing).signals if s.weight >= 0.85}


def signal_kinds(verdict: Verdict) -> set[str]:
    return {s.kind for s in verdict.signals}


def test_a_negated_clause_about_the_same_subject_names_its_negator() -> None:
    (negated,) = analyze("We don't use Docker for local development.").clauses
    (stated,) = analyze("We use Docker for local development.").clauses
    (other,) = analyze("We use Podman for CI builds.").clauses
    assert negation(negated, stated, frozenset()) == ["don't"]
    assert negation(negated, other, frozenset()) == []  # another subject: nothing to negate


def test_polarity_is_a_negator_or_a_negative_word() -> None:
    def negative(text: str) -> bool:
        (clause,) = analyze(text).clauses
        return is_negative(clause)

    assert negative("Telemetry is disabled.")
    assert not negative("Telemetry is not disabled.")  # two flips agree
    assert not negative("Telemetry is enabled.")


def test_a_rule_reads_one_way() -> None:
    rule = "Never commit compiled wasm bundles."
    done = "Compiled wasm bundles are checked into dist/ for the docs site."
    names = (entities(rule), entities(done))
    phrase, *stated = forbidden(rule, done, names)
    assert phrase == "never commit compiled wasm bundles" and stated
    assert forbidden(done, rule, names[::-1]) == []  # the statement forbids nothing


@pytest.mark.parametrize(
    ("new", "existing"), [(LESSONS_NEW, LESSONS_OLD), (LESSONS_OLD, LESSONS_NEW)]
)
def test_lessons_false_positive_is_compatible(new, existing):
    verdict = score_pair(new, existing)
    assert not verdict.contradiction
    assert "negation" not in signal_kinds(verdict)


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


def test_rules_forbid_compounds_and_avoid() -> None:
    assert fires("Do not use default exports.", "Components are default-exported.")
    assert frames.prohibitions("Avoid global state.")


def test_a_negator_is_no_modifier_and_a_possessive_is_its_noun() -> None:
    assert fires(
        "Tests must not call the real payment provider.",
        "Checkout tests call the payment provider's sandbox directly.",
    )


RULE_EMOJI = (
    "Do not use emojis in source, comments, rustdoc, tests, commits, issues, PR communication, "
    "or agent output."
)


@pytest.mark.parametrize(
    ("other", "found"),
    [
        ("Emojis are welcome in commit messages and PR communication.", True),  # thing and place
        ("Emojis are welcome in commit messages.", False),  # one word of the place: a topic
        ("Emojis render badly in some terminals.", False),  # the thing alone is a topic
        ("Emojis are not welcome in commit messages.", False),  # it denies them too
    ],
)
def test_a_one_word_thing_forbidden_where_the_other_text_states_it(other: str, found: bool) -> None:
    """A one-word forbidden thing is a topic on its own; with where the rule forbids it (the
    words after the forbidden phrase) also stated by the other text, it is the act."""
    names = (entities(RULE_EMOJI), entities(other))
    assert bool(forbidden(RULE_EMOJI, other, names)) is found
