"""The document rules of the contradiction check, for pairs of note units (notes, decision
records, instruction files): which two units are compared at all (`compared`), and when a
contradiction the scorer finds between two of them counts (`records` and `changes_state` for
two decision records, `one_instruction_file` and `firm` for two lines of one instruction
file). Pure: rows and verdicts in, a yes or no out."""

from __future__ import annotations

import re
import sqlite3

import msgspec

from memls.conflicts.choices import preference_swap, preferred_against
from memls.conflicts.frames import prohibitions
from memls.conflicts.negation import forbidden
from memls.conflicts.phrasing import entities, words
from memls.conflicts.scorer import gate
from memls.conflicts.subjects import with_parts
from memls.notes import NoteFacts, comparable
from memls.protocol import Signal, SourceRange, Verdict

_FACTS = msgspec.json.Decoder(NoteFacts)


def compared(newer: sqlite3.Row | None, older: sqlite3.Row | None) -> bool:
    """The document rules for one pair (None: the memory is no note unit)."""
    if older is None:
        return True
    if not older["claim"]:
        return False
    if newer is None or newer["source_uri"] != older["source_uri"]:
        return True
    facts = _FACTS.decode(newer["facts"]) if newer["facts"] else NoteFacts()
    return comparable(
        (_line(newer["source_range"]), newer["section"]),
        (_line(older["source_range"]), older["section"]),
        facts,
    )


def records(newer: sqlite3.Row | None, older: sqlite3.Row | None) -> bool:
    """Are these units of two different decision records (notes with a record number or a
    status, like ADRs)? A record is written at one time about its own decision and is not
    edited to agree with later ones: a later record that reverses an earlier one says so,
    with its status and links (`note_links`) or in the language of a change ("replaces",
    "instead of", "move from", "no longer"). Two records that merely differ (another choice
    for another part, a negated remark, a consequence) are no contradiction."""
    if newer is None or older is None or newer["source_uri"] == older["source_uri"]:
        return False
    return _is_record(newer["facts"]) and _is_record(older["facts"])


def one_instruction_file(newer: sqlite3.Row | None, older: sqlite3.Row | None) -> bool:
    """Are these two units of one instruction file (AGENTS.md, CLAUDE.md, rule files), not
    on either side of a change the file records (an Update section: such a pair is compared
    as in any note, with every signal)?"""
    if newer is None or older is None or newer["source_uri"] != older["source_uri"]:
        return False
    if not newer["facts"]:
        return False
    facts = _FACTS.decode(newer["facts"])
    if facts.kind != "instructions":
        return False
    return not comparable(
        (_line(newer["source_range"]), newer["section"]),
        (_line(older["source_range"]), older["section"]),
        msgspec.structs.replace(facts, kind=""),
    )


def firm(verdict: Verdict, new: str, old: str) -> bool:
    """A contradiction between two lines of one instruction file: the lines of one file share
    their project's words, so a shared subject word beside a negator, or two different names
    near each other, is what neighbouring instructions look like. What a later edit that
    contradicts an earlier line looks like: it states a change of what the other line says
    (an aligned change frame), gives the same attribute another value, uses the opposite word,
    reverses a preference, says the same with one thing changed, or forbids exactly what the
    other line prescribes (or prescribes what it forbids), or the pair model is sure the two
    contradict — and the two lines are related by
    meaning on their own (the similarity gate open)."""
    if gate(verdict.similarity, verdict.similarity_source) <= 0.0:
        return False
    if _labelled_apart(new, old):
        return False  # "**Structural:** ..." / "**Content:** ...": two items of a list
    kinds = {s.kind for s in verdict.signals if s.weight >= 0.85}
    if kinds & {"value_change", "antonym", "meaning"}:
        return True
    if any(_names_all_it_replaced(s, old) for s in verdict.signals):
        return True
    if kinds & {"negation", "choice_change"} and _mirrored(new, old):
        return True
    if preference_swap(new, old) or preferred_against(new, old) or preferred_against(old, new):
        return True  # one line prefers what the other ranks below ("Prefer mocks over
        #              end-to-end tests" / "Use end-to-end tests (not mocks)")
    return _forbids_what_it_says(new, old) or _forbids_what_it_says(old, new)


def _mirrored(new: str, old: str) -> bool:
    """The later line says what the earlier says with one thing changed: at least two words
    in common and at most two that are not ("Use double quotes for strings" / "Use single
    quotes for strings"; "Always run the linter before committing" / "Never run ...")."""
    a, b = words(new) | entities(new), words(old) | entities(old)
    return len(a & b) >= 2 and len(a ^ b) <= 2


def _labelled_apart(new: str, old: str) -> bool:
    """Both lines open with a label and the labels differ: two items of one list, each about
    its own thing ("**Fixtures**: Store in ..." / "**Snapshots**: Store in ...")."""
    labels = [_LABEL.match(t) for t in (new, old)]
    return bool(
        labels[0] and labels[1] and labels[0].group(1).lower() != labels[1].group(1).lower()
    )


_LABEL = re.compile(r"^[*_\s]*([\w .-]{1,40}?)[*_\s]*:[*_]*\s")


def _names_all_it_replaced(signal: Signal, old: str) -> bool:
    """A change frame whose replaced thing the other line names in full, not a word of it
    ("Edit package.json directly instead of using `pnpm add`" / "Run commands with `pnpm
    run`": the other line states pnpm, not `pnpm add`)."""
    if signal.kind != "temporal_override" or signal.weight < 0.85:
        return False
    replaced = frozenset().union(*(words(t) for t in signal.triggers[1:]))
    return replaced <= with_parts(words(old) | entities(old))


def _forbids_what_it_says(rule: str, other: str) -> bool:
    """`rule` forbids a thing, and `other` names all of that thing, not some of its words
    ("Never create random example files" / "Update the files in examples/": no)."""
    names = (entities(rule), entities(other))
    if not forbidden(rule, other, names):
        return False
    stated = with_parts(words(other) | names[1])
    return any(thing <= stated and not _FACT.match(p) for thing, p in prohibitions(rule))


#: "so uv doesn't rewrite uv.lock", "the client cannot reach ...": what a thing does or can
#: do, not a rule that forbids an act.
_FACT = re.compile(r"(?:does not|doesn't|cannot|can't|may not)\b")


def _is_record(facts: str | None) -> bool:
    """A decision record: by its path (`notes.records` globs), else, for a note of no known
    kind, by its record number or status. An instruction file never is one."""
    if not facts:
        return False
    read = _FACTS.decode(facts)
    if read.kind:
        return read.kind == "record"
    return read.number is not None or read.status != ""


def changes_state(verdict: Verdict) -> bool:
    """A change-of-state frame of the newer text aligned with the older (not the weak
    update-marker corroboration), between two statements also related by meaning: the
    similarity gate open on its own, not only held at its floor by the frame's alignment."""
    return gate(verdict.similarity, verdict.similarity_source) > 0.0 and any(
        s.kind == "temporal_override" and s.weight >= 0.85 for s in verdict.signals
    )


def _line(source_range: str | None) -> int:
    where = SourceRange.parse(source_range)
    return where.start_line if where is not None else 0
