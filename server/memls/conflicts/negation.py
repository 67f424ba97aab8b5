"""The negation signal: one side negates what the other affirms about the same subject
("We do not use Redis for sessions" / "Sessions live in Redis"), or a rule forbids what the
other text states as done ("Never commit generated protobuf files" / "Generated protobuf code
is checked into gen/").
"""

from __future__ import annotations

import re

from memls.conflicts import frames, phrasing
from memls.conflicts import lexicon as lx
from memls.conflicts.stems import GENERIC_STEMS, normalize, stem
from memls.conflicts.subjects import (
    FOR_PHRASE,
    is_compound,
    modified_apart,
    same_subject,
    subject_of,
    with_parts,
)
from memls.conflicts.text import Clause, analyze

_NEGATIVE_STEMS = frozenset(stem(w) for w in lx.NEGATIVE_MEMBERS)


def is_negative(clause: Clause) -> bool:
    """Polarity: a negator, or a negative word ("disabled" reads as "not enabled")."""
    return bool(clause.negators) != bool(clause.switches & _NEGATIVE_STEMS)


def negation(cn: Clause, ce: Clause, ignore: frozenset[str]) -> list[str]:
    negative = cn if cn.negators else ce
    if same_subject(subject_of(cn), subject_of(ce), ignore):
        return list(negative.negators)
    return []


def forbidden(rule: str, other: str, names: tuple[frozenset[str], frozenset[str]]) -> list[str]:
    """A rule forbids what the other text states as done: "Never commit generated protobuf
    files" / "Generated protobuf code is checked into gen/". The forbidden thing (its words
    after the verb, up to the first preposition) is stated by the other text: two of its words,
    or the one identifier it names ("CHANGELOG.md"). Not when the other text negates, weighs or
    recalls; not when a shared word outside the forbidden thing has two different modifiers
    ("the public API does not expose internal IDs" / "the internal admin API exposes database
    IDs"), nor when each applies
    "for" something else ("for generated code" / "for every public function")."""
    found = frames.prohibitions(rule)
    if not found:
        return []
    stated = with_parts(phrasing.words(other) | names[1])
    if phrasing.hedged(other) or phrasing.hedged(rule):
        return []
    clauses = analyze(other).clauses
    for thing, phrase in found:
        hit = thing & stated
        compound = any(
            is_compound(w) and thing <= with_parts(frozenset({w})) for w in phrasing.words(other)
        )  # "default exports" / "default-exported": the thing named as one compound
        if (
            len(hit) < 2
            and not (hit == thing and all(phrasing.identifier(w) for w in hit))
            and not compound
            and not (hit == thing and len(_place(rule, phrase) & stated) >= 2)
        ):
            continue  # one common word ("credentials", "Redis") is a topic, not the act; the
            #           thing and two words of where the rule forbids it are the act ("Do
            #           not use emojis in commits, PR communication" / "Emojis are welcome in
            #           commit messages and PR communication")
        if any(
            (c.negators or c.past or is_negative(c)) and hit & with_parts(frozenset(c.content))
            for c in clauses
        ):
            continue  # the other text denies it too, or recalls it
        shared = (phrasing.words(rule) & phrasing.words(other)) - thing - GENERIC_STEMS
        if modified_apart(phrasing.tokens(rule), phrasing.tokens(other), shared, names):
            continue
        fors = [
            {stem(m.group("first")) for m in FOR_PHRASE.finditer(normalize(t))}
            for t in (rule, other)
        ]
        if fors[0] and fors[1] and not fors[0] & fors[1]:
            continue
        return [phrase, *sorted(hit)[:3]]
    return []


def _place(rule: str, phrase: str) -> frozenset[str]:
    """Where the rule forbids its thing: the words of its sentence after the forbidden phrase
    when they open with "in", "inside", "within" or "on" ("in source, comments, ... commits"
    after "do not use emojis"). A purpose ("for sessions") is not a place: "We do not use Redis
    for sessions" forbids nothing of "Postgres for sessions and Redis for rate limiting"."""
    plain = normalize(rule)
    at = plain.find(phrase)
    if at < 0:
        return frozenset()
    rest = re.split(r"[.;!?](?:\s|$)", plain[at + len(phrase) :], maxsplit=1)[0]
    if not re.match(r"\s+(?:in|inside|within|on)\s", rest):
        return frozenset()
    return with_parts(phrasing.content_stems(rest)) - GENERIC_STEMS
