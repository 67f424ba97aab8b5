"""Pure contradiction scorer: does a NEW memory contradict an EXISTING one?

`score_pair(new, existing)` looks at one pair and nothing else: no I/O, no clock, no model,
no state kept between calls. It returns a `Verdict` that names every signal that fired and
the words that triggered it. Acting on a verdict (edges, supersession) is the resolver's job.

How a verdict is reached
1. Both texts are split into clauses; each clause yields subject words, values (numbers with
   what they measure), negators, antonym words and temporal markers (see `text.py`).
2. Signals compare clause pairs that are about the same subject: they share a subject word and
   at most one side has subject words the other lacks ("access tokens" vs "refresh tokens" are
   two subjects; "backups" vs "database backups" are one). Scope qualifiers of the same class
   that differ ("staging" vs "production") mean two subjects and silence every signal.
3. Signal weights combine as a noisy-or into a strength in [0, 1].
4. The similarity gate scales that strength. Similarity is ABSOLUTE, never normalised across
   candidates: below the minimum of its kind nothing fires; from the minimum to the "full"
   value the gate rises from GATE_FLOOR to 1. A single strong signal on a same-subject pair
   passes the threshold at any similarity above the minimum.
"""

from __future__ import annotations

import math
import re
from types import MappingProxyType
from typing import cast

from memls.conflicts import lexicon as lx
from memls.protocol.conflicts import (
    Signal,
    SignalKind,
    SimilarityKind,
    SimilaritySource,
    Verdict,
)
from memls.conflicts.text import (
    ANTONYMS,
    GENERIC_STEMS,
    Analysis,
    Clause,
    Value,
    analyze,
    stem,
)


# ------------------------------------------------------------------ tunables (all absolute)

#: Verdict threshold on the gated confidence.
CONTRADICTION_THRESHOLD = 0.5
#: Fraction of the signal strength kept when similarity sits exactly at the gate minimum.
GATE_FLOOR = 0.6

#: Token Jaccard over content words (values folded to their kind). In the labelled set every
#: contradicting pair but one scores >= 0.2, the lowest 0.14 ("Keycloak instead of Auth0" /
#: "We use Auth0 for authentication"); unrelated pairs score 0-0.1. The signals' own subject
#: checks do most of the work; this gate keeps unrelated pairs out.
LEXICAL_SIMILARITY_MIN = 0.10
LEXICAL_SIMILARITY_FULL = 0.5
#: bge-small (int8) cosine, measured on the labelled set (benchmarks/conflicts.py --models):
#: contradicting pairs 5th percentile 0.70, minimum 0.54; compatible pairs median 0.74.
#: 0.60 / 0.80 kept recall 0.936 at precision 0.978 (0.70 / 0.85 lost 9 more true pairs).
COSINE_SIMILARITY_MIN = 0.60
COSINE_SIMILARITY_FULL = 0.80
#: ms-marco cross-encoder calibrated probability (relevance of existing to new).
#: Not calibrated: the engine gates on the embedding cosine.
PROBABILITY_SIMILARITY_MIN = 0.30
PROBABILITY_SIMILARITY_FULL = 0.75

_GATES = MappingProxyType(
    {
        "lexical": (LEXICAL_SIMILARITY_MIN, LEXICAL_SIMILARITY_FULL),
        "cosine": (COSINE_SIMILARITY_MIN, COSINE_SIMILARITY_FULL),
        "probability": (PROBABILITY_SIMILARITY_MIN, PROBABILITY_SIMILARITY_FULL),
    }
)

#: Weight of each signal when it fires on a same-subject clause pair. Each strong signal is
#: enough on its own: weight x GATE_FLOOR >= CONTRADICTION_THRESHOLD.
SIGNAL_WEIGHTS = MappingProxyType(
    {
        "negation": 0.85,
        "antonym": 0.85,
        "value_change": 0.85,
        "choice_change": 0.85,
        "temporal_override": 0.85,  # the new text names what it replaces and the old has it
    }
)
#: An update marker in the new text about the same subject, naming nothing replaced:
#: corroborates other signals, never decides alone.
WEAK_OVERRIDE_WEIGHT = 0.3

#: A swapped slot filler may span this many subject words ("AWS Secrets Manager"), and the
#: two fillers together at most MAX_SWAP_WORDS ("Fatima, tech lead" / "Joao, engineering
#: manager" differs in two places, not one).
MAX_SLOT_WORDS = 3
MAX_SWAP_WORDS = 4
#: Share of the replaced thing's words ("from session cookies") the old text must contain.
OVERRIDE_MIN_OVERLAP = 0.6
#: Relative tolerance for sizes and durations (10 MB vs 10 MiB, a year vs 12 months).
#: Ports, counts, versions, percentages and clock times compare exactly.
VALUE_TOLERANCE = 0.05
_TOLERANT_KINDS = frozenset({"size", "duration", "offset"})
_NEGATIVE_STEMS = frozenset(stem(w) for w in lx.NEGATIVE_MEMBERS)


# ------------------------------------------------------------------ public API


def score_pair(
    new: str,
    existing: str,
    *,
    similarity: float | None = None,
    similarity_kind: SimilarityKind = "cosine",
) -> Verdict:
    """Score one (new, existing) pair. `similarity` is an absolute model score for this pair
    (embedding cosine in [-1, 1] or cross-encoder probability in [0, 1]); without it a
    lexical overlap is computed from the two texts."""
    a, b = analyze(new), analyze(existing)
    if similarity is None:
        sim, source = lexical_similarity(a, b), "lexical"
    else:
        sim, source = _checked(similarity, similarity_kind), similarity_kind
    signals = [] if _scope_conflict(a, b) else _signals(a, b)
    strength = 1.0 - math.prod(1.0 - s.weight for s in signals)
    confidence = round(min(1.0, max(0.0, strength * gate(sim, source))), 4)
    return Verdict(
        contradiction=confidence >= CONTRADICTION_THRESHOLD,
        confidence=confidence,
        signals=signals,
        similarity=round(sim, 4),
        similarity_source=cast(SimilaritySource, source),
        update_marker=bool(a.markers),
    )


def lexical_similarity(a: Analysis, b: Analysis) -> float:
    """Jaccard of content words (stemmed; numbers folded to their kind)."""
    union = a.content | b.content
    return len(a.content & b.content) / len(union) if union else 0.0


def gate(similarity: float, source: str) -> float:
    """0 below the minimum of the similarity kind, then GATE_FLOOR rising linearly to 1."""
    low, full = _GATES[source]
    if similarity < low:
        return 0.0
    rise = min(1.0, (similarity - low) / (full - low))
    return GATE_FLOOR + (1.0 - GATE_FLOOR) * rise


def _checked(similarity: float, kind: str) -> float:
    if kind not in ("cosine", "probability"):
        raise ValueError(f"similarity_kind must be 'cosine' or 'probability', not {kind!r}")
    value = float(similarity)
    if math.isnan(value):
        raise ValueError("similarity is NaN")
    return min(1.0, max(-1.0 if kind == "cosine" else 0.0, value))


# ------------------------------------------------------------------ subjects and scope


def _scope_conflict(a: Analysis, b: Analysis) -> bool:
    """Both texts name a scope of the same class and share none ('staging' vs 'production')."""
    return any(qa and qb and not qa & qb for qa, qb in zip(a.qualifiers, b.qualifiers))


def _same_subject(left: set[str], right: set[str], ignore: frozenset[str] = frozenset()) -> bool:
    """Share a subject word, and at most one side has words the other lacks. Words in
    `ignore` (participles: "compiled for Java 21" / "target Java 17") never count as extra."""
    return bool(left & right) and not ((left - right - ignore) and (right - left - ignore))


def _subject(clause: Clause, drop: frozenset[str] = frozenset()) -> set[str]:
    return set(clause.keys) - drop


def _negative(clause: Clause) -> bool:
    """Polarity: a negator, or a negative word ("disabled" reads as "not enabled")."""
    return bool(clause.negators) != bool(clause.switches & _NEGATIVE_STEMS)


# ------------------------------------------------------------------ signals


def _signals(a: Analysis, b: Analysis) -> list[Signal]:
    found: dict[str, list[str]] = {}
    antonym_pairs: set[tuple[str, str]] = set()

    def fire(kind: str, triggers: list[str]) -> None:
        bucket = found.setdefault(kind, [])
        bucket.extend(t for t in triggers if t not in bucket)

    for cn in a.clauses:
        for ce in b.clauses:
            if cn.past or ce.past:
                continue  # a clause about the past does not assert the present
            flipped = bool(cn.negators) != bool(ce.negators)
            opposites = _antonyms(cn, ce)
            if flipped and opposites:
                continue  # "not enabled" vs "disabled": two flips agree
            ignore = cn.predicates | ce.predicates
            if not opposites and _negative(cn) != _negative(ce) and (cn.negators or ce.negators):
                if triggers := _negation(cn, ce, ignore):
                    fire("negation", triggers)
            if opposites:
                antonym_pairs.update(opposites)
                drop = frozenset(w for pair in opposites for w in pair)
                if _same_subject(_subject(cn, drop), _subject(ce, drop), ignore):
                    fire("antonym", [_word(cn, ce, w) for pair in opposites for w in pair])
            if triggers := _value_change(cn, ce, a, b, ignore):
                fire("value_change", triggers)
            if not flipped and (triggers := _choice_change(cn, ce, a, b)):
                fire("choice_change", triggers)
    if len(antonym_pairs) > 1:
        found.pop("antonym", None)  # two opposites at once describe two sides, not a change
    signals = [
        Signal(kind=kind, weight=SIGNAL_WEIGHTS[kind], triggers=triggers)  # type: ignore[arg-type]
        for kind, triggers in found.items()
    ]
    override = _override(a, b, strong_evidence=bool(signals))
    if override is not None:
        signals.append(override)
    order = list(SIGNAL_WEIGHTS)
    return sorted(signals, key=lambda s: order.index(s.kind))


def _word(cn: Clause, ce: Clause, stem: str) -> str:
    return cn.surface.get(stem) or ce.surface.get(stem) or stem


def _negation(cn: Clause, ce: Clause, ignore: frozenset[str]) -> list[str]:
    negative = cn if cn.negators else ce
    if _same_subject(_subject(cn), _subject(ce), ignore):
        return list(negative.negators)
    return []


def _antonyms(cn: Clause, ce: Clause) -> set[tuple[str, str]]:
    hits = set()
    for x, y in ANTONYMS:
        for p, q in ((x, y), (y, x)):
            if p in cn.switches and q in ce.switches and q not in cn.switches \
                    and p not in ce.switches and not (p in cn.scoped and q in ce.scoped):
                hits.add((p, q))
    return hits


def _comparable(x: Value, y: Value) -> bool:
    if x.kind != y.kind or x.kind == "year":
        return False
    if x.kind == "version":
        return x.anchor != "" and x.anchor == y.anchor
    if x.kind == "count":
        return not x.units or not y.units or bool(x.units & y.units)
    return True


def _equal(x: Value, y: Value) -> bool:
    if isinstance(x.magnitude, tuple) and isinstance(y.magnitude, tuple):
        n = min(len(x.magnitude), len(y.magnitude))  # "Python 3" agrees with "Python 3.12"
        return x.magnitude[:n] == y.magnitude[:n]
    if isinstance(x.magnitude, float) and isinstance(y.magnitude, float):
        if x.kind not in _TOLERANT_KINDS:
            return x.magnitude == y.magnitude
        scale = max(abs(x.magnitude), abs(y.magnitude), 1e-9)
        return abs(x.magnitude - y.magnitude) <= VALUE_TOLERANCE * scale
    return False


def _differing_values(
    cn: Clause, ce: Clause, a: Analysis, b: Analysis
) -> list[tuple[Value, Value]]:
    pairs = []
    for x in cn.values:
        for y in ce.values:
            if not _comparable(x, y) or _equal(x, y):
                continue
            if any(_comparable(x, z) and _equal(x, z) for z in b.values):
                continue  # the old text also states the new value
            if any(_comparable(y, z) and _equal(y, z) for z in a.values):
                continue  # the new text still states the old value
            pairs.append((x, y))
    return pairs


def _value_change(
    cn: Clause, ce: Clause, a: Analysis, b: Analysis, ignore: frozenset[str]
) -> list[str]:
    pairs = _differing_values(cn, ce, a, b)
    if not pairs:
        return []
    anchors = frozenset(x.anchor for x, _ in pairs if x.kind == "version")
    subject_n, subject_e = _subject(cn), _subject(ce)
    if anchors:  # the product is the shared subject of a version ("Django 5.0" / "Django 4.2")
        subject_n, subject_e = subject_n | anchors, subject_e | anchors
    if not _same_subject(subject_n, subject_e, ignore):
        return []
    return [t for x, y in pairs for t in (x.surface, y.surface)]


def _choice_change(cn: Clause, ce: Clause, a: Analysis, b: Analysis) -> list[str]:
    """One slot holds another filler: 'use yarn' / 'use pnpm', 'Alice owns' / 'Bob now owns'.

    The two clauses must share a frame of at least two subject words and differ in exactly one
    place: a run of at most MAX_SLOT_WORDS words on each side, sitting between the same frame
    words (or at the edges of both clauses)."""
    if cn.additive or ce.additive or _differing_values(cn, ce, a, b):
        return []  # "also"/"too" adds; differing values mean a second difference
    if cn.values and ce.values and _values_rule_out_a_swap(cn, ce):
        return []
    shared = set(cn.keys) & set(ce.keys)
    only_n = [k for k in cn.keys if k not in shared]
    only_e = [k for k in ce.keys if k not in shared]
    if len(shared) < 2 or not only_n or not only_e:
        return []
    if max(len(only_n), len(only_e)) > MAX_SLOT_WORDS:
        return []
    slot_n, slot_e = _slot(cn.keys, only_n), _slot(ce.keys, only_e)
    if slot_n is None or slot_e is None or not _aligned(slot_n, slot_e):
        return []  # differences in two places, or in different places: not one slot
    if slot_n[1] is not None and slot_n[1] == slot_e[1] and slot_n[1] in _INSTANCE_KINDS:
        return []  # "the Tressil service" / "the Kavon service": two things, not one slot
    if any((x in only_n and y in only_e) or (y in only_n and x in only_e) for x, y in ANTONYMS):
        return []  # opposites are the antonym signal's business
    # Participles are predicate words: "hosted at X" / "lives at Y" swaps X for Y, but
    # "tagged with the git SHA" / "built on every commit" changes the predicate on both sides,
    # and "AWS region is eu-west-1" / "deployed to eu-west-1" differs only in the predicate.
    fill_n = [k for k in only_n if k not in cn.predicates]
    fill_e = [k for k in only_e if k not in ce.predicates]
    if not fill_n or not fill_e or (len(fill_n) < len(only_n) and len(fill_e) < len(only_e)):
        return []
    if len(fill_n) + len(fill_e) > MAX_SWAP_WORDS:
        return []
    return [cn.surface[k] for k in fill_n] + [ce.surface[k] for k in fill_e]


#: Nouns after a name that make it name an instance ("the Kavon service", "the data team"):
#: two such names are two subjects, not two fillers of one slot.
_INSTANCE_KINDS = frozenset(stem(w) for w in (
    "service", "services", "team", "teams", "repo", "repository", "project", "app",
    "application", "module", "component", "cluster", "bucket", "microservice", "squad",
    "namespace", "environment", "tenant", "region", "site",
))


def _values_rule_out_a_swap(cn: Clause, ce: Clause) -> bool:
    """Both clauses carry values: they measure different things ("1200 requests per second" /
    "port 8080"), or they agree on one ("gives up after 10 seconds" / "timeout: 10s") and the
    differing words are a rephrasing, not another filler."""
    comparable = [(x, y) for x in cn.values for y in ce.values if _comparable(x, y)]
    return not comparable or any(_equal(x, y) for x, y in comparable)


def _slot(keys: tuple[str, ...], part: list[str]) -> tuple[str | None, str | None] | None:
    """The frame words on either side of a contiguous run of `part` in `keys`."""
    positions = [keys.index(k) for k in part]
    first, last = min(positions), max(positions)
    if last - first + 1 != len(positions):
        return None
    left = keys[first - 1] if first > 0 else None
    right = keys[last + 1] if last + 1 < len(keys) else None
    return left, right


def _aligned(x: tuple[str | None, str | None], y: tuple[str | None, str | None]) -> bool:
    """Same left or same right frame word; or both runs at an edge of their clause
    ("Kenji is the on-call lead" / "the on-call lead is Dana")."""
    return (x[0] is not None and x[0] == y[0]) or (x[1] is not None and x[1] == y[1]) or (
        None in x and None in y
    )


# ------------------------------------------------------------------ temporal override

_MOVE = r"(?:switched|switching|migrated|migrating|moved|changed|took over|taken over|" \
        r"upgraded|downgraded)"
_OLD_END = re.compile(
    r" (?:since|for|in|on|at|because|when|after|before|during|with|to|from|by|as|last|"
    r"years?|months?|weeks?)\b.*$"
)
_REPLACED_PATTERNS = (
    re.compile(_MOVE + r" (?:\S+ ){0,3}?from (?P<old>.+?)(?: to\b|$)"),
    re.compile(r"\b(?:no longer|stopped|quit) (?P<old>.+)"),
    re.compile(r"\bused to (?P<old>.+)"),
    re.compile(r"\binstead of (?P<old>.+)"),
    re.compile(r"\breplaced (?P<old>.+?) (?:with|by)\b"),
    re.compile(r"\brenamed (?P<old>.+?) to\b"),
    re.compile(r"\bmoved off (?P<old>.+)"),
    re.compile(
        r"^(?P<old>.+?) (?:was|were|has been|have been|got|is|are) (?:replaced|renamed|"
        r"deprecated|dropped|retired|superseded|removed|switched off)\b"
    ),
)


def _override(a: Analysis, b: Analysis, *, strong_evidence: bool) -> Signal | None:
    """The new text says something changed. Strong when it names the replaced thing and the
    old text states it; weak (corroboration only) when it merely shares the subject."""
    if not a.markers:
        return None
    present = [c for c in b.clauses if not c.past]
    old_keys = frozenset(k for c in present for k in c.keys)
    old_values = tuple(v for c in present for v in c.values)
    for clause in a.clauses:
        if not clause.markers:
            continue
        for pattern in _REPLACED_PATTERNS:
            match = pattern.search(clause.text)
            if match is None:
                continue
            replaced = analyze(_OLD_END.sub("", match.group("old")))
            words = [k for k in replaced.keys if k not in GENERIC_STEMS]
            if not words:
                continue
            hit = [k for k in words if k in old_keys]
            values_agree = all(
                any(_comparable(v, w) and _equal(v, w) for w in old_values) for v in replaced.values
            )
            if (
                len(hit) / len(words) >= OVERRIDE_MIN_OVERLAP
                and values_agree
                and not any(_other_scope(clause, c, frozenset(words)) for c in present)
            ):
                surfaces = [c.surface[k] for c in replaced.clauses for k in c.keys if k in hit]
                return Signal(
                    kind="temporal_override",
                    weight=SIGNAL_WEIGHTS["temporal_override"],
                    triggers=[*clause.markers, *dict.fromkeys(surfaces)],
                )
    if strong_evidence or any(
        len(set(cn.keys) & set(ce.keys)) >= 2 for cn in a.clauses for ce in present
    ):
        return Signal(
            kind="temporal_override", weight=WEAK_OVERRIDE_WEIGHT, triggers=list(a.markers)
        )
    return None


def _other_scope(cn: Clause, ce: Clause, replaced: frozenset[str]) -> bool:
    """Besides the replaced thing, both clauses share context yet each has its own qualifiers:
    'replaced Webpack for the admin app' says nothing about 'the customer app ... Webpack'."""
    if not replaced & set(ce.keys):
        return False
    rest_n, rest_e = set(cn.keys) - replaced, set(ce.keys) - replaced
    return bool(rest_n & rest_e) and bool(rest_n - rest_e - cn.predicates) and bool(
        rest_e - rest_n - ce.predicates
    )
