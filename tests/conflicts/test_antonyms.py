"""The antonym signal (`memls.conflicts.antonyms`): opposite words on the two sides, from the
lexicon's pairs or from a negated form ("signed" / "unsigned")."""

from __future__ import annotations

import pytest

from memls.conflicts import Signal, Verdict, lexicon, score_pair
from memls.conflicts.antonyms import opposite_pairs
from memls.conflicts.text import analyze


def fires(new: str, existing: str) -> bool:
    return score_pair(new, existing).contradiction


def signal(verdict: Verdict, kind: str) -> Signal:
    found = [s for s in verdict.signals if s.kind == kind]
    assert found, f"no {kind} signal in {verdict}"
    return found[0]


def opposites(new: str, existing: str) -> set[tuple[str, str]]:
    (cn,), (ce,) = analyze(new).clauses, analyze(existing).clauses
    return opposite_pairs(cn, ce)


def test_opposites_from_the_lexicon_and_from_a_negated_form() -> None:
    assert opposites("Telemetry is enabled.", "Telemetry is disabled.") == {("enabl", "disabl")}
    assert opposites("Release artifacts are signed.", "Release artifacts are unsigned.") == {
        ("sign", "unsign")
    }


def test_the_same_word_on_both_sides_is_no_opposite() -> None:
    assert opposites("Telemetry is enabled.", "Telemetry is enabled.") == set()
    assert opposites("The index is rebuilt nightly.", "The dex is rebuilt nightly.") == set()


def test_there_are_at_least_twenty_antonym_pairs():
    assert len(set(lexicon.ANTONYM_PAIRS)) >= 20


@pytest.mark.parametrize(("left", "right"), lexicon.ANTONYM_PAIRS)
def test_antonym_pairs_work_both_ways(left, right):
    for x, y in ((left, right), (right, left)):
        verdict = score_pair(
            f"The widget mode is {x} for the billing page.",
            f"The widget mode is {y} for the billing page.",
        )
        assert verdict.contradiction, (x, y)
        assert {x, y} <= set(signal(verdict, "antonym").triggers)


def test_morphological_opposites() -> None:
    assert fires("Release artifacts are signed.", "Release artifacts are unsigned.")
    assert not fires("Release artifacts are signed.", "Release artifacts are uploaded.")


def test_self_prefixed_opposites() -> None:
    assert fires("Grafana is hosted by the vendor.", "Grafana is self-hosted.")
