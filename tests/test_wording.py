"""How a person reads a contradiction (`memls.protocol.wording`): the kind in words, the other
statement quoted and cut at a word, and its place as a workspace-relative path and line."""

from __future__ import annotations

import pytest

from memls import protocol as p
from memls.protocol import wording


def memory(text: str, uri: str | None = None, where: str | None = None) -> p.Memory:
    return p.Memory(
        id="m",
        project="/w/app",
        type="convention",
        content=text,
        status="active",
        trust="candidate",
        valid_from="2026-01-01T00:00:00Z",
        valid_until=None,
        recorded_at="2026-01-01T00:00:00Z",
        invalidated_at=None,
        source_uri=uri,
        source_range=where,
        canonical_hash="h",
        content_hash="h",
        feedback_score=0,
    )


def signal(kind: str, weight: float = 0.85) -> p.Signal:
    return p.Signal(kind=kind, weight=weight, triggers=[])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("signals", "words"),
    [
        pytest.param([signal("temporal_override")], "a later switch", id="change"),
        pytest.param([signal("negation")], "opposite instructions", id="negation"),
        pytest.param([signal("antonym")], "opposite instructions", id="antonym"),
        pytest.param([signal("value_change")], "different values", id="value"),
        pytest.param([signal("choice_change")], "different choices", id="choice"),
        pytest.param([signal("negation"), signal("temporal_override")], "a later switch", id="tie"),
        pytest.param(
            [signal("temporal_override", 0.3), signal("value_change")],
            "different values",
            id="the strongest wins",
        ),
        pytest.param([], "a contradiction", id="none"),
    ],
)
def test_the_kind_in_words(signals, words) -> None:
    assert wording.kind(signals) == words


def test_a_quote_is_cut_at_a_word_within_120_characters() -> None:
    text = "Use the modern python typing style, " * 6
    cut = wording.quote(text)
    assert len(cut) <= 120 and cut.endswith("…")
    assert text.startswith(cut[:-1]) and text[len(cut) - 1] in " ,"  # ends where a word ends
    assert wording.quote("  two\n lines ") == "two lines"
    assert len(wording.quote("x" * 300)) == 120  # one word longer than the limit: cut inside


def test_the_place_is_the_path_in_the_workspace_and_the_line() -> None:
    note = memory("Use yarn", "file:///w/app/docs/adr/0035-bouncer%20v2.md", "18:0-18:8")
    assert wording.place(note, "/w/app") == "docs/adr/0035-bouncer v2.md:19"
    assert wording.place(note, "billing") == "/w/app/docs/adr/0035-bouncer v2.md:19"
    assert wording.place(memory("Use yarn"), "/w/app") == "a stored memory"


def test_the_sentence_on_each_side() -> None:
    newer = memory("We switched from yarn to pnpm", "file:///w/app/AGENTS.md", "6:0-6:29")
    older = memory("Use yarn to install dependencies.", "file:///w/app/AGENTS.md", "3:0-3:33")
    said = wording.words("/w/app", [signal("temporal_override")], newer, older)
    assert wording.sentence(said, newer_side=True, confidence=0.98) == (
        "A later switch: contradicts “Use yarn to install dependencies.” (AGENTS.md:4); "
        "confidence 0.98"
    )
    assert wording.sentence(said, newer_side=False) == (
        "A later switch: contradicted by “We switched from yarn to pnpm” (AGENTS.md:7)"
    )
