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

import functools
import math
import re
from types import MappingProxyType
from typing import cast

from memls.conflicts import frames
from memls.conflicts import lexicon as lx
from memls.conflicts.text import (
    ANTONYMS,
    GENERIC_STEMS,
    Analysis,
    Clause,
    Value,
    analyze,
    normalize,
    stem,
)
from memls.protocol.conflicts import (
    Signal,
    SimilarityKind,
    SimilaritySource,
    Verdict,
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
#: Clauses with more subject words than this swap a slot only between named things
#: ("Arachne achieves ..." / "components ..." in two long ADR sentences is no choice).
SHORT_CLAUSE_KEYS = 8
#: A named-thing swap is read only between short statements (content words each) that share
#: at least this many content words.
NAMED_SWAP_MAX_WORDS = 14
#: Texts with more subject words than this (a paragraph) swap a slot only between named things.
SHORT_TEXT_KEYS = 12
NAMED_SWAP_SHARED = 2
#: ... and in which at most this many other content words differ.
NAMED_SWAP_REST = 5
#: Share of the replaced thing's words ("from session cookies") the old text must contain.
OVERRIDE_MIN_OVERLAP = 0.6
#: Share of a change frame's replaced filler ("from our homegrown table") the old text states.
FRAME_MIN_SHARE = 0.5
#: Relative tolerance for sizes and durations (10 MB vs 10 MiB, a year vs 12 months).
#: Ports, counts, versions, percentages and clock times compare exactly.
VALUE_TOLERANCE = 0.05
_TOLERANT_KINDS = frozenset({"size", "duration", "offset", "rate"})
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
    silent = _scope_conflict(a, b) or _code_only(new) or _code_only(existing)
    signals, related = ([], False) if silent else _signals(a, b, new, existing)
    strength = 1.0 - math.prod(1.0 - s.weight for s in signals)
    opened = gate(sim, source)
    if related:
        opened = max(opened, GATE_FLOOR)  # an aligned change frame on the same subject:
        #                                   related whatever the similarity
    confidence = round(min(1.0, max(0.0, strength * opened)), 4)
    return Verdict(
        contradiction=confidence >= CONTRADICTION_THRESHOLD,
        confidence=confidence,
        signals=signals,
        similarity=round(sim, 4),
        similarity_source=cast(SimilaritySource, source),
        update_marker=bool(a.markers),
    )


_CODE_LINE = re.compile(r"^\s*(?:`[^`]+`|```.*```|\|.*\|)\s*$", re.DOTALL)


def _code_only(text: str) -> bool:
    """A line that is only code (`uv run pytest -q`) or a table row (`| Postgres | 15 |`)
    shows something, it claims nothing."""
    return bool(_CODE_LINE.match(text))


def lexical_similarity(a: Analysis, b: Analysis) -> float:
    """Jaccard of content words (stemmed; numbers folded to their kind; a compound counts by
    its parts too: "service-to-service" shares "service")."""
    x, y = _with_parts(a.content), _with_parts(b.content)
    union = x | y
    return len(x & y) / len(union) if union else 0.0


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


def _signals(
    a: Analysis, b: Analysis, new: str = "", existing: str = ""
) -> tuple[list[Signal], bool]:
    """The signals that fired, and whether an aligned change frame makes the pair related
    whatever its similarity."""
    if frames.apart(new, existing):
        return [], False  # about two different systems (`frames.topics`)
    found: dict[str, list[str]] = {}
    names = (frames.entities(new), frames.entities(existing))
    hedged = frames.hedged(new) or frames.hedged(existing)  # an option weighed is no choice
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
            if not flipped and not hedged and (triggers := _choice_change(cn, ce, a, b, names)):
                fire("choice_change", triggers)
    if len(antonym_pairs) > 1:
        found.pop("antonym", None)  # two opposites at once describe two sides, not a change
    if "negation" not in found and (
        (triggers := _forbidden(new, existing, names))
        or (triggers := _forbidden(existing, new, names[::-1]))
    ):
        fire("negation", triggers)
    if triggers := _preference_swap(new, existing):
        fire("choice_change", triggers)
    if "choice_change" not in found and (triggers := _named_swap(new, existing, names)):
        fire("choice_change", triggers)
    if "choice_change" not in found and (triggers := _typed_swap(new, existing, names)):
        fire("choice_change", triggers)
    if "choice_change" not in found and (
        (triggers := _decided_swap(new, existing, names))
        or (triggers := _decided_swap(existing, new, names[::-1]))
    ):
        fire("choice_change", triggers)
    if "choice_change" in found and _told_before(new, existing, names):
        found.pop("choice_change")  # "renamed utils to common" / "... the common package"
    strong_frame, related = _change_frame(new, existing, a, b, names)
    signals = [
        Signal(kind=kind, weight=SIGNAL_WEIGHTS[kind], triggers=triggers)  # type: ignore[arg-type]
        for kind, triggers in found.items()
    ]
    override = strong_frame or _override(a, b, strong_evidence=bool(signals))
    if override is not None:
        signals.append(override)
    order = list(SIGNAL_WEIGHTS)
    return sorted(signals, key=lambda s: order.index(s.kind)), related and strong_frame is not None


def _word(cn: Clause, ce: Clause, stem: str) -> str:
    return cn.surface.get(stem) or ce.surface.get(stem) or stem


def _negation(cn: Clause, ce: Clause, ignore: frozenset[str]) -> list[str]:
    negative = cn if cn.negators else ce
    if _same_subject(_subject(cn), _subject(ce), ignore):
        return list(negative.negators)
    return []


def _antonyms(cn: Clause, ce: Clause) -> set[tuple[str, str]]:
    hits = _prefixed_opposites(cn, ce)
    if not cn.switches or not ce.switches:
        return hits  # a listed opposite needs a switch word on both sides
    for x, y in ANTONYMS:
        for p, q in ((x, y), (y, x)):
            if (
                p in cn.switches
                and q in ce.switches
                and q not in cn.switches
                and p not in ce.switches
                and not (p in cn.scoped and q in ce.scoped)
            ):
                hits.add((p, q))
    return hits


_NOT_PREFIXES = ("un", "non-", "non", "in", "self-")


def _prefixed_opposites(cn: Clause, ce: Clause) -> set[tuple[str, str]]:
    """A word and its negated form ("signed" / "unsigned", "blocking" / "non-blocking"): the
    morphology of an opposite, not a list of words."""
    hits = set()
    keys_n, keys_e = frozenset(cn.keys), frozenset(ce.keys)
    for base, neg in _negated_forms(keys_e):  # "unsigned" in ce, "signed" in cn
        if base in keys_n and base not in keys_e and neg not in keys_n:
            hits.add((base, neg))
    for base, neg in _negated_forms(keys_n):
        if base in keys_e and base not in keys_n and neg not in keys_e:
            hits.add((neg, base))
    return hits


@functools.lru_cache(maxsize=4096)
def _negated_forms(keys: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """(word, its negated form) for each key that is a negating prefix + a word of four
    letters or more (six after "in": "insecure", not "index")."""
    return tuple(
        (neg[len(prefix) :], neg)
        for neg in keys
        for prefix in _NOT_PREFIXES
        if neg.startswith(prefix) and len(neg) - len(prefix) >= (6 if prefix == "in" else 4)
    )


def _comparable(x: Value, y: Value) -> bool:
    if x.kind != y.kind or x.kind == "year":
        return False
    if x.kind == "version":
        return _same_anchor(x.anchor, y.anchor)
    if x.kind == "count":
        return not x.units or not y.units or bool(x.units & y.units)
    if x.kind == "rate":
        return bool(x.units & y.units)
    return True


def _same_anchor(x: str, y: str) -> bool:
    """One product named two ways: "node" / "node.js", "postgres" / "postgresql"."""
    if not x or not y:
        return False
    short, long = sorted((x, y), key=len)
    if "." in long and "." not in short:
        long = stem(long.split(".")[0])  # "node.js" is node
    return x == y or short == long or (len(short) >= 4 and long.startswith(short))


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
            if any(_comparable(y, z) and _equal(y, z) for z in _kept(a)):
                continue  # the new text still states the old value
            pairs.append((x, y))
    return pairs


_REPLACED_BEFORE = re.compile(
    r"\b(?:instead of|rather than|in place of|from)\s+(?:(?!to\b|into\b)\S+\s+){0,3}$"
)


def _kept(a: Analysis) -> list[Value]:
    """The values a text states as holding: not one it names as replaced ("every two weeks
    rather than every month", "from 30 to 60 seconds")."""
    out = []
    for c in a.clauses:
        for v in c.values:
            at = c.text.find(v.surface)
            if at > 0 and _REPLACED_BEFORE.search(c.text[:at]):
                continue
            out.append(v)
    return out


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
    pairs = [(x, y) for x, y in pairs if _periodic(cn, x) == _periodic(ce, y)]
    pairs = [(x, y) for x, y in pairs if not _reading_and_bound(cn, x, ce, y)]
    if not pairs:
        return []  # "retained for 90 days" / "run every 6 hours": a lifetime and a period
    spelled = bool(a.joined & set(ce.keys) or b.joined & set(cn.keys))  # "time out"/"timeout"
    if not _same_subject(subject_n, subject_e, ignore) and not (
        _one_attribute(pairs, cn, ce, subject_n, subject_e, a, b)
        and (spelled or not _parallel(cn, ce))
    ):
        return []
    return [t for x, y in pairs for t in (x.surface, y.surface)]


_PERIOD = re.compile(r"\b(?:every|each|per|once a|once an?)\s+$")


def _periodic(clause: Clause, value: Value) -> bool:
    """A duration said as a period ("every 6 hours"), not as a length ("for 90 days")."""
    if value.kind != "duration":
        return False
    if "<every>" in value.units:
        return True  # "weekly", "every night", "once a week"
    at = clause.text.find(value.surface)
    return at > 0 and bool(_PERIOD.search(clause.text[:at]))


_BOUND = re.compile(
    r"\b(?:below|above|under|over|at least|at most|less than|more than|fewer than|no more than|"
    r"up to|exceeds?|exceeding|minimum of|maximum of|max|min)\s+$"
)
#: Words of a norm: a value that is a rule ("the coverage gate is 80%"), not a reading.
_NORM = re.compile(
    r"\b(?:gate|threshold|limit|minimum|maximum|target|budget|cap|must|required|fails?)\b"
)
_READING = re.compile(r"\b(?:today|currently|right now|at the moment|as of|so far|this week)\b")


def _bound(clause: Clause, value: Value) -> bool:
    at = clause.text.find(value.surface)
    return at > 0 and bool(_BOUND.search(clause.text[:at]))


def _reading_and_bound(cn: Clause, x: Value, ce: Clause, y: Value) -> bool:
    """A measurement taken at a time ("coverage is 91% today") against a threshold ("CI fails
    when coverage drops below 80 percent"): a reading within a rule, two attributes."""
    return any(
        _READING.search(c.text) is not None
        and not _bound(c, v)
        and (_bound(d, w) or _NORM.search(d.text) is not None)
        and _READING.search(d.text) is None
        for c, v, d, w in ((cn, x, ce, y), (ce, y, cn, x))
    )


def _parallel(cn: Clause, ce: Clause) -> bool:
    """The two clauses say the same thing of two different subjects: one run of words differs,
    at the same place ("Worker pods get 2 GiB" / "API pods get 512 MiB")."""
    said = {stem(w) for v in (*cn.values, *ce.values) if _spoken(v) for w in v.surface.split()}
    keys_n = tuple(k for k in cn.keys if k not in said)  # "weekly" / "every day" are values
    keys_e = tuple(k for k in ce.keys if k not in said)
    only_n = [k for k in keys_n if k not in keys_e]
    only_e = [k for k in keys_e if k not in keys_n]
    if not only_n or not only_e:
        return False
    slot_n, slot_e = _slot(keys_n, only_n), _slot(keys_e, only_e)
    if slot_n is None or slot_e is None:
        return False
    return (slot_n[0] is not None and slot_n[0] == slot_e[0]) or (
        slot_n[1] is not None and slot_n[1] == slot_e[1]
    )


def _spoken(value: Value) -> bool:
    """A value said in words that stay subject words ("weekly", "every day", "Thursdays")."""
    return value.kind == "weekday" or "<every>" in value.units


#: Value kinds that measure one attribute whatever the words around them.
_MEASURES = frozenset({"duration", "size", "percent", "port", "weekday", "offset"})


_NO_NAMES: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())


def _wordy(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Tokens without bare numbers ("100 requests"): a value is what differs, not a modifier
    of a subject; identifiers with digits ("v1 clients") stay."""
    return tuple("" if t.replace(".", "").replace(",", "").isdigit() else t for t in tokens)


def _one_attribute(
    pairs: list[tuple[Value, Value]],
    cn: Clause,
    ce: Clause,
    subject_n: set[str],
    subject_e: set[str],
    a: Analysis,
    b: Analysis,
) -> bool:
    """Two statements that each give ONE measure of a kind, about a shared subject word:
    "The HTTP client times out after 5 seconds" / "Outbound HTTP requests time out after 30
    seconds". A second measure of the kind on either side means two attributes."""
    for x, y in pairs:
        if x.kind in _MEASURES:
            same = lambda v, w: v.kind == w.kind  # noqa: E731
        elif x.kind == "rate":
            each = {u[1:] for u in x.units | y.units if u.startswith("/")}
            if not each <= (a.keys & b.keys) | frozenset(u[1:] for u in x.units & y.units):
                continue  # "per token" / "anonymous clients": a rate of another thing
            same = lambda v, w: v.kind == w.kind and bool(v.units & w.units)  # noqa: E731
        elif x.kind == "version":
            same = lambda v, w: v.kind == w.kind and _same_anchor(v.anchor, w.anchor)  # noqa: E731
        else:
            continue  # a bare count ("3 times") measures whatever its words say
        if (
            len({v.magnitude for v in _kept(a) if same(v, x)}) != 1
            or len({v.magnitude for v in _kept(b) if same(v, y)}) != 1
        ):
            continue
        shared = ((subject_n | a.joined) & (subject_e | b.joined)) - GENERIC_STEMS
        head = next((k for k in cn.keys if k in shared), None)  # the first shared word
        if head and _modified_apart(
            _wordy(frames.tokens(cn.text)),
            _wordy(frames.tokens(ce.text)),
            frozenset({head}),
            _NO_NAMES,
        ):
            continue  # "the lint job" / "the test job": two subjects
        if shared and len(a.keys) <= SHORT_TEXT_KEYS and len(b.keys) <= SHORT_TEXT_KEYS:
            return True
    return False


def _choice_change(
    cn: Clause,
    ce: Clause,
    a: Analysis,
    b: Analysis,
    names: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset()),
) -> list[str]:
    """One slot holds another filler: 'use yarn' / 'use pnpm', 'Alice owns' / 'Bob now owns'.

    The two clauses must share a frame of at least two subject words and differ in exactly one
    place: a run of at most MAX_SLOT_WORDS words on each side, sitting between the same frame
    words (or at the edges of both clauses)."""
    if cn.additive or ce.additive or _differing_values(cn, ce, a, b):
        return []  # "also"/"too" adds; differing values mean a second difference
    if cn.values and ce.values and _values_rule_out_a_swap(cn, ce):
        return []
    if bool(cn.values) != bool(ce.values) and len(set(cn.keys) & set(ce.keys)) < 3:
        return []  # "enforces a 30 second timeout" / "terminates TLS": a measure is no filler
    shared = set(cn.keys) & set(ce.keys)
    only_n = [k for k in cn.keys if k not in shared]
    only_e = [k for k in ce.keys if k not in shared]
    if len(shared) < 2 or not only_n or not only_e:
        return []
    if shared <= names[0] | names[1]:
        return []  # only the named thing is shared ("Argo CD uses ..." / "... by Argo CD"): two
        #            things said of it, not two fillers of one slot
    if max(len(only_n), len(only_e)) > MAX_SLOT_WORDS:
        return []
    slot_n, slot_e = _slot(cn.keys, only_n), _slot(ce.keys, only_e)
    if slot_n is None or slot_e is None or not _aligned(slot_n, slot_e):
        return []  # differences in two places, or in different places: not one slot
    swapped = {
        k
        for k in shared
        if (k == cn.keys[0] and k == ce.keys[-1]) or (k == cn.keys[-1] and k == ce.keys[0])
    }
    if swapped & (names[0] | names[1]):
        return []  # "Playwright tests run in ..." / "... tests use Playwright": the named thing
        #            opens one clause and closes the other, it is what both talk about
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
    if any("/" in cn.surface[k] for k in fill_n) or any("/" in ce.surface[k] for k in fill_e):
        return []  # links and paths are references, not fillers
    if _in_for_phrase(cn, fill_n) or _in_for_phrase(ce, fill_e):
        return []  # "for the cart service" / "for the ledger": where a rule applies, two scopes
    long = (
        max(len(cn.keys), len(ce.keys)) > SHORT_CLAUSE_KEYS
        or max(len(a.keys), len(b.keys)) > SHORT_TEXT_KEYS
    )
    if (_relation(cn, fill_n) in _WHEN) != (_relation(ce, fill_e) in _WHEN):
        return []  # "live in the database" / "cleaned up after a release": where vs when
    if long and not (set(fill_n) & names[0] and set(fill_e) & names[1]):
        return []  # in a long sentence only named things are alternatives for a slot
    return [cn.surface[k] for k in fill_n] + [ce.surface[k] for k in fill_e]


_FOR_PHRASE = re.compile(r"\bfor\s+(?:(?:the|our|a|an|all|each|every)\s+)?(?P<first>[^\s,;.]+)")


_RELATIONS = frozenset(
    "in into on onto at to from with by via through over under after before for as using".split()
)
#: Prepositions of time: a filler they open says when, not what or where.
_WHEN = frozenset("after before during until since".split())


def _relation(clause: Clause, fill: list[str]) -> str | None:
    """The preposition that introduces a slot filler ("stored [in] UTC", "log [to] stdout"):
    the nearest one before the filler's last word, not further than two words before its
    first. None without one."""
    words = [w.strip(".,:;()`'\"") for w in clause.text.split()]
    spots = [i for k in fill for i, w in enumerate(words) if w == clause.surface.get(k)]
    if not spots:
        return None
    first, last = min(spots), max(spots)
    for j in range(last - 1, max(-1, first - 3), -1):
        if words[j] in _RELATIONS:
            return words[j]
    return None


def _in_for_phrase(clause: Clause, fill: list[str]) -> bool:
    """The filler opens a "for ..." phrase of its clause: a scope, not a choice."""
    firsts = {stem(m.group("first")) for m in _FOR_PHRASE.finditer(clause.text)}
    return any(k in firsts for k in fill)


def _overlap(x: frozenset[str], y: frozenset[str]) -> float:
    return len(x & y) / min(len(x), len(y)) if x and y else 0.0


def _named_swap(new: str, existing: str, names: tuple[frozenset[str], frozenset[str]]) -> list[str]:
    """Two short statements about the same thing, each naming a thing the other does not:
    "The team will adopt Kafka for event streaming between services" / "Services exchange
    events through RabbitMQ". Needs NAMED_SWAP_SHARED shared content words, no hedge ("we
    could", "option"), nothing added ("also"), and no shared word with two different
    modifiers ("the admin app ... Vite" / "the customer app ... Webpack": two subjects)."""
    words_n, words_e = frames.words(new), frames.words(existing)
    if max(len(words_n), len(words_e)) > NAMED_SWAP_MAX_WORDS:
        return []
    if frames.changes(new) or frames.changes(existing):
        return []  # a change frame says what replaced what; the frame rules read it
    only_n = frozenset(w for w in names[0] - words_e - names[1] if w[:1].isalpha())
    only_e = frozenset(w for w in names[1] - words_n - names[0] if w[:1].isalpha())
    if not only_n or not only_e:
        return []  # versions and numbers are the value signal's business
    shared = (words_n & words_e) - GENERIC_STEMS - only_n - only_e
    if len(shared) < NAMED_SWAP_SHARED:
        return []
    rest = (words_n - shared - only_n) | (words_e - shared - only_e)
    if len(rest) > NAMED_SWAP_REST:
        return []  # more differs than the named things: another statement, not another choice
    if _no_present_choice(new, existing):
        return []
    if _modified_apart(frames.tokens(new), frames.tokens(existing), shared, names):
        return []
    return sorted(only_n)[:3] + sorted(only_e)[:3]


def _no_present_choice(new: str, existing: str) -> bool:
    """Either side weighs an option ("we could"), adds ("also") or speaks of the past: no
    choice of now to swap."""
    return (
        frames.hedged(new)
        or frames.hedged(existing)
        or frames.additive(new)
        or frames.additive(existing)
        or any(c.past for text in (new, existing) for c in analyze(text).clauses)
    )


def _typed_swap(new: str, existing: str, names: tuple[frozenset[str], frozenset[str]]) -> list[str]:
    """Two short statements on one subject, each naming a thing of the same kind the other does
    not: "read from TOML files" / "lives in YAML files", "docstrings in Google style" /
    "docstrings follow the NumPy style". The kind is the noun right after the name; a kind
    that names instances ("the Kavon service") makes two subjects, not one slot."""
    words_n, words_e = frames.words(new), frames.words(existing)
    if max(len(words_n), len(words_e)) > NAMED_SWAP_MAX_WORDS:
        return []
    tn, te = frames.tokens(new), frames.tokens(existing)
    lead_n, lead_e = next((w for w in tn if w), ""), next((w for w in te if w), "")
    if lead_n not in words_e | names[1] and lead_e not in words_n | names[0]:
        return []  # "Black formats the Python code" / "Prettier formats the TypeScript code":
        #            two agents, each on its own kind of thing
    kinds_n = _kinds(tn, names[0] - words_e - names[1])
    kinds_e = _kinds(te, names[1] - words_n - names[0])
    for kind in sorted(kinds_n.keys() & kinds_e.keys()):  # sorted: one answer, any hash seed
        shared = (words_n & words_e) - GENERIC_STEMS - {kind}
        if not shared:
            continue
        if _no_present_choice(new, existing):
            return []
        return [kinds_n[kind], kinds_e[kind], kind]
    return []


def _decided_swap(
    decided: str, other: str, names: tuple[frozenset[str], frozenset[str]]
) -> list[str]:
    """A decision for a thing for a job ("We chose gRPC for service-to-service calls") against
    a short statement of the same job that names another thing and not the chosen one
    ("Internal services talk to each other over JSON REST"): an implicit replacement."""
    found = frames.decisions(decided)
    if (
        not found
        or frames.changes(decided)
        or frames.hedged(decided)
        or frames.hedged(other)
        or frames.additive(other)
    ):
        return []
    theirs = analyze(other)
    if len(theirs.keys) > SHORT_TEXT_KEYS or any(c.past for c in theirs.clauses):
        return []
    stated = _with_parts(frames.words(other) | names[1])
    for decision in found:
        job = decision.subject - GENERIC_STEMS
        if not _with_parts(job) & stated or _restated(decision.new, names[0], stated):
            continue  # another job, or the other text already names the chosen thing
        others = frozenset(
            w
            for w in names[1] - names[0] - _with_parts(job) - decision.new
            if len(w) > 1 and w[:1].isalpha()
        )
        if not others:
            continue
        shared = (frames.words(decided) & frames.words(other)) - GENERIC_STEMS
        if _modified_apart(frames.tokens(decided), frames.tokens(other), shared, names):
            continue
        return [decision.trigger, *sorted(others)[:3]]
    return []


def _kinds(seq: tuple[str, ...], only: frozenset[str]) -> dict[str, str]:
    """kind noun -> the named thing before it ("toml" "file" -> {"file": "toml"})."""
    out = {}
    for i, w in enumerate(seq[:-1]):
        kind = seq[i + 1]
        if (
            w in only
            and w[:1].isalpha()
            and kind
            and kind not in GENERIC_STEMS
            and kind not in _INSTANCE_KINDS
            and kind not in only
        ):
            out[kind] = w
    return out


def _modified_apart(
    tn: tuple[str, ...],
    te: tuple[str, ...],
    shared: frozenset[str],
    names: tuple[frozenset[str], frozenset[str]],
) -> bool:
    """A shared word with different modifiers on each side ("runtime secrets" / "secrets for
    CI ... GitHub Actions secrets"): two subjects."""

    def before(seq: tuple[str, ...], word: str) -> set[str]:
        return {
            seq[i - 1]
            for i, w in enumerate(seq)
            if w == word
            and i > 0
            and seq[i - 1]
            and seq[i - 1] not in GENERIC_STEMS
            and seq[i - 1] not in lx.NEGATORS  # "must not call" / "tests call": one act
        }

    for word in shared:
        pn, pe = before(tn, word), before(te, word)
        if pn and pe and not pn & pe:
            return True
    return False


def _forbidden(rule: str, other: str, names: tuple[frozenset[str], frozenset[str]]) -> list[str]:
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
    stated = _with_parts(frames.words(other) | names[1])
    if frames.hedged(other) or frames.hedged(rule):
        return []
    clauses = analyze(other).clauses
    for thing, phrase in found:
        hit = thing & stated
        compound = any(
            _compound(w) and thing <= _with_parts(frozenset({w})) for w in frames.words(other)
        )  # "default exports" / "default-exported": the thing named as one compound
        if (
            len(hit) < 2
            and not (hit == thing and all(frames.identifier(w) for w in hit))
            and not compound
        ):
            continue  # one common word ("credentials", "Redis") is a topic, not the act
        if any(
            (c.negators or c.past or _negative(c)) and hit & _with_parts(frozenset(c.content))
            for c in clauses
        ):
            continue  # the other text denies it too, or recalls it
        shared = (frames.words(rule) & frames.words(other)) - thing - GENERIC_STEMS
        if _modified_apart(frames.tokens(rule), frames.tokens(other), shared, names):
            continue
        fors = [
            {stem(m.group("first")) for m in _FOR_PHRASE.finditer(normalize(t))}
            for t in (rule, other)
        ]
        if fors[0] and fors[1] and not fors[0] & fors[1]:
            continue
        return [phrase, *sorted(hit)[:3]]
    return []


def _preference_swap(new: str, existing: str) -> list[str]:
    """'A over B' against 'B over A' (order-sensitive preferences)."""
    for pa, pb, phrase_n in frames.preferences(new):
        for qa, qb, phrase_e in frames.preferences(existing):
            crossed = (_overlap(pa, qb) >= 0.5 and _overlap(pa, qa) < 0.5) or (
                _overlap(pb, qa) >= 0.5 and _overlap(pb, qb) < 0.5
            )  # what one prefers, the other ranks below something: "the managed service over
            #    running it ourselves" / "self-hosting to managed services"
            if (
                crossed
                and _overlap(pa, qa) < 0.5
                and _overlap(pb, qb) < 0.5
                and not _scoped_preferences(new, existing, pa | pb, qa | qb)
            ):
                return [phrase_n, phrase_e]
    return []


#: Nouns for the whole project: "in this codebase" scopes nothing.
_UNIVERSAL = frozenset(
    stem(w) for w in ("codebase", "code", "project", "repo", "repository", "everywhere", "we")
)


def _scoped_preferences(
    new: str, existing: str, terms_n: frozenset[str], terms_e: frozenset[str]
) -> bool:
    """Both preferences are said of something and of different things ("for the cart service
    ... availability over consistency" / "for the ledger ... consistency over availability")."""
    rest_n = frames.words(new) - terms_n - GENERIC_STEMS - _UNIVERSAL
    rest_e = frames.words(existing) - terms_e - GENERIC_STEMS - _UNIVERSAL
    return bool(rest_n) and bool(rest_e) and not _with_parts(rest_n) & _with_parts(rest_e)


def _present(b: Analysis) -> frozenset[str]:
    return frozenset(w for c in b.clauses if not c.past for w in c.content)


def _change_frame(
    new: str,
    existing: str,
    a: Analysis,
    b: Analysis,
    names: tuple[frozenset[str], frozenset[str]],
) -> tuple[Signal | None, bool]:
    """The new text's change-of-state frame, aligned with what the existing text states:
    the replaced filler (A) is there and the new filler (B) is not; or, when the frame names
    only B, the existing text shares the subject and names another thing in its place; or the
    existing text chose against A ("rather than using EKS") and the new one states A."""
    stated = _with_parts(_present(b) | names[1] | frames.words(existing))
    old_keys = frozenset(k for c in b.clauses if not c.past for k in c.keys)  # its length is
    #   read on b.keys: a past clause ("Initially we'll ...") still makes a statement long
    if not frames.changes(new) and not frames.changes(existing):
        return None, False
    for change in () if frames.hedged(new) else frames.changes(new):
        fill = change.new - change.old
        if change.head in fill and not fill & names[0]:
            fill = frozenset({change.head})  # "services log with zap instead of logrus": zap
        if change.new and _restated(fill, names[0], stated):
            continue  # the existing text already says the new state
        if change.old:
            named = (change.old & names[0]) - change.new  # "EKS" in "from EKS nodes to EKS
            #                                               Fargate" is context, not the filler
            named = frozenset(w for w in named if frames.tokens(new).count(w) < 2)  # nor is
            # a name said again ("Use Managed Service for Prometheus ... instead of Prometheus")
            key = named or (change.old - change.new)
            if not named and len(b.keys) > SHORT_TEXT_KEYS:
                continue  # common words replaced, against a paragraph: too loose to align
            if _share(key, stated) < FRAME_MIN_SHARE or not all(
                w in stated
                for w in key | change.old
                if frames.identifier(w) and not _compound(w) and (w in key or w[:1].isdigit())
            ):
                continue  # "the v1 API was deprecated" says nothing of "the v2 API"
            scope = change.scope
            if len(scope) > 1 and _scoped_apart(scope, existing, stated):
                continue  # "replaced Webpack for the admin app" / "the customer app ... Webpack"
            aside = not (change.subject - GENERIC_STEMS) & old_keys
            if aside and len(b.keys) > SHORT_CLAUSE_KEYS:
                continue  # the replaced thing named in passing, by a statement on another subject
            return _strong([change.marker, *change.old_words]), _related(change, old_keys)
        if change.kind in ("rewrite", "adopt") and change.new:
            if not (change.subject - GENERIC_STEMS) & old_keys or len(b.keys) > SHORT_TEXT_KEYS:
                continue  # only a short statement on the same subject names the old filler
            others = frozenset(
                w
                for w in names[1] - names[0] - change.subject - change.new
                if len(w) > 1 and w[:1].isalpha()
            )
            if others:
                return _strong([change.marker, *sorted(others)[:3]]), _related(change, old_keys)
    said = frames.words(new) | names[0]
    removed = frozenset(w for c in frames.changes(new) for w in c.old)
    for change in frames.changes(existing):
        if change.kind != "replace" or not change.old or not change.new:
            continue
        named = change.old & names[1]
        key = named or change.old
        if _share(key, said) < 1.0 or key & removed:
            continue  # the new text does not name the rejected thing, or removes it too
        rest = (said & stated) - change.old - GENERIC_STEMS
        if len(rest) >= 2:  # the same subject besides the rejected thing
            return _strong([change.marker, *sorted(key)[:2]]), _related(change, said)
    return None, False


def _scoped_apart(scope: tuple[str, ...], existing: str, stated: frozenset[str]) -> bool:
    """The frame's trailing scope ("for the admin app") names its head word, and the existing
    text gives that head another modifier ("the customer app"): two scopes. "for all unit
    tests in the TypeScript packages" / "TypeScript packages are unit-tested" is one."""
    if scope[-1] not in stated or set(scope) <= _with_parts(stated):
        return False
    seq = frames.tokens(existing)
    modifiers = {seq[i - 1] for i, w in enumerate(seq) if w == scope[-1] and i > 0 and seq[i - 1]}
    return not modifiers or bool(modifiers - set(scope) - GENERIC_STEMS)


@functools.lru_cache(maxsize=4096)
def _with_parts(words: frozenset[str]) -> frozenset[str]:
    """Stems and the stemmed parts of compounds ("unit-test" -> unit, test; "acme/gateway-chart"
    -> acme, gateway-chart, gateway, chart)."""
    return words | frozenset(
        stem(p) for w in words for p in re.split(r"[-/]", w) + w.split("/") if p and p != w
    )


def _compound(word: str) -> bool:
    """Words joined by hyphens ("self-managed"): a compound, not an identifier like "v1"."""
    return "-" in word and word.replace("-", "").isalpha()


def _told_before(new: str, existing: str, names: tuple[frozenset[str], frozenset[str]]) -> bool:
    """The new text's change leads to what the existing text already states, and the existing
    text does not name what it replaces: same news, not a choice ("Renamed utils to common" /
    "Shared helpers live in the common package")."""
    stated = _with_parts(frames.words(existing) | names[1])
    return any(
        change.new
        and _restated(change.new - change.old, names[0], stated)
        and not (change.old and _restated(change.old, names[0], stated))
        for change in frames.changes(new)
    )


def _related(change: frames.Change, keys: frozenset[str]) -> bool:
    """The frame's own subject is in the other text, or the other text is a short statement:
    then the pair is related whatever its similarity ("switched from Jenkins to Buildkite" is
    not about "Jenkins also builds the nightly APKs, publishes the docs, ...")."""
    return bool(change.subject & keys) or len(keys) <= SHORT_CLAUSE_KEYS


def _restated(part: frozenset[str], named: frozenset[str], whole: frozenset[str]) -> bool:
    """Does `whole` state `part`? Every named thing of it, or half its words without any."""
    key = part & named
    return key <= whole if key else _share(part, whole) >= 0.5


def _strong(triggers: list[str]) -> Signal:
    return Signal(
        kind="temporal_override", weight=SIGNAL_WEIGHTS["temporal_override"], triggers=triggers
    )


def _share(part: frozenset[str], whole: frozenset[str]) -> float:
    return len(part & whole) / len(part) if part else 0.0


#: Nouns after a name that make it name an instance ("the Kavon service", "the data team"):
#: two such names are two subjects, not two fillers of one slot.
_INSTANCE_KINDS = frozenset(
    stem(w)
    for w in (
        "service",
        "services",
        "team",
        "teams",
        "repo",
        "repository",
        "project",
        "app",
        "application",
        "module",
        "component",
        "cluster",
        "bucket",
        "microservice",
        "squad",
        "namespace",
        "environment",
        "tenant",
        "region",
        "site",
    )
)


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
    return (
        (x[0] is not None and x[0] == y[0])
        or (x[1] is not None and x[1] == y[1])
        or (None in x and None in y)
    )


# ------------------------------------------------------------------ temporal override

_MOVE = (
    r"(?:switched|switching|migrated|migrating|moved|changed|took over|taken over|"
    r"upgraded|downgraded)"
)
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
    return (
        bool(rest_n & rest_e)
        and bool(rest_n - rest_e - cn.predicates)
        and bool(rest_e - rest_n - ce.predicates)
    )
