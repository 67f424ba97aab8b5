"""The choice-change signal: one slot holds another filler ("use yarn" / "use pnpm", "Alice
owns" / "Bob now owns"); two short statements of one subject each name another thing
(`named_swap`, `typed_swap`); a decision for a job against what the job uses
(`decided_swap`); a preference order reversed (`preference_swap`).
"""

from __future__ import annotations

import re

from memls.conflicts import frames, phrasing
from memls.conflicts.stems import ANTONYMS, GENERIC_STEMS, stem
from memls.conflicts.subjects import (
    FOR_PHRASE,
    SHORT_CLAUSE_KEYS,
    SHORT_TEXT_KEYS,
    modified_apart,
    restated,
    slot_of,
    with_parts,
)
from memls.conflicts.text import Analysis, Clause, analyze
from memls.conflicts.values import can_compare, differing_values, equal_values

#: A swapped slot filler may span this many subject words ("AWS Secrets Manager"), and the
#: two fillers together at most MAX_SWAP_WORDS ("Fatima, tech lead" / "Joao, engineering
#: manager" differs in two places, not one).
MAX_SLOT_WORDS = 3


MAX_SWAP_WORDS = 4


#: A named-thing swap is read only between short statements (content words each) that share
#: at least this many content words.
NAMED_SWAP_MAX_WORDS = 14


NAMED_SWAP_SHARED = 2


#: ... and in which at most this many other content words differ.
NAMED_SWAP_REST = 5


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


def choice_change(
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
    if cn.additive or ce.additive or differing_values(cn, ce, a, b):
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
    slot_n, slot_e = slot_of(cn.keys, only_n), slot_of(ce.keys, only_e)
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


def _values_rule_out_a_swap(cn: Clause, ce: Clause) -> bool:
    """Both clauses carry values: they measure different things ("1200 requests per second" /
    "port 8080"), or they agree on one ("gives up after 10 seconds" / "timeout: 10s") and the
    differing words are a rephrasing, not another filler."""
    comparable = [(x, y) for x in cn.values for y in ce.values if can_compare(x, y)]
    return not comparable or any(equal_values(x, y) for x, y in comparable)


def _aligned(x: tuple[str | None, str | None], y: tuple[str | None, str | None]) -> bool:
    """Same left or same right frame word; or both runs at an edge of their clause
    ("Kenji is the on-call lead" / "the on-call lead is Dana")."""
    return (
        (x[0] is not None and x[0] == y[0])
        or (x[1] is not None and x[1] == y[1])
        or (None in x and None in y)
    )


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
    firsts = {stem(m.group("first")) for m in FOR_PHRASE.finditer(clause.text)}
    return any(k in firsts for k in fill)


def named_swap(new: str, existing: str, names: tuple[frozenset[str], frozenset[str]]) -> list[str]:
    """Two short statements about the same thing, each naming a thing the other does not:
    "The team will adopt Kafka for event streaming between services" / "Services exchange
    events through RabbitMQ". Needs NAMED_SWAP_SHARED shared content words, no hedge ("we
    could", "option"), nothing added ("also"), and no shared word with two different
    modifiers ("the admin app ... Vite" / "the customer app ... Webpack": two subjects)."""
    words_n, words_e = phrasing.words(new), phrasing.words(existing)
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
    if modified_apart(phrasing.tokens(new), phrasing.tokens(existing), shared, names):
        return []
    return sorted(only_n)[:3] + sorted(only_e)[:3]


def _no_present_choice(new: str, existing: str) -> bool:
    """Either side weighs an option ("we could"), adds ("also") or speaks of the past: no
    choice of now to swap."""
    return (
        phrasing.hedged(new)
        or phrasing.hedged(existing)
        or phrasing.additive(new)
        or phrasing.additive(existing)
        or any(c.past for text in (new, existing) for c in analyze(text).clauses)
    )


def typed_swap(new: str, existing: str, names: tuple[frozenset[str], frozenset[str]]) -> list[str]:
    """Two short statements on one subject, each naming a thing of the same kind the other does
    not: "read from TOML files" / "lives in YAML files", "docstrings in Google style" /
    "docstrings follow the NumPy style". The kind is the noun right after the name; a kind
    that names instances ("the Kavon service") makes two subjects, not one slot."""
    words_n, words_e = phrasing.words(new), phrasing.words(existing)
    if max(len(words_n), len(words_e)) > NAMED_SWAP_MAX_WORDS:
        return []
    tn, te = phrasing.tokens(new), phrasing.tokens(existing)
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


def decided_swap(
    decided: str, other: str, names: tuple[frozenset[str], frozenset[str]]
) -> list[str]:
    """A decision for a thing for a job ("We chose gRPC for service-to-service calls") against
    a short statement of the same job that names another thing and not the chosen one
    ("Internal services talk to each other over JSON REST"): an implicit replacement."""
    found = frames.decisions(decided)
    if (
        not found
        or frames.changes(decided)
        or phrasing.hedged(decided)
        or phrasing.hedged(other)
        or phrasing.additive(other)
    ):
        return []
    theirs = analyze(other)
    if len(theirs.keys) > SHORT_TEXT_KEYS or any(c.past for c in theirs.clauses):
        return []
    stated = with_parts(phrasing.words(other) | names[1])
    for decision in found:
        job = decision.subject - GENERIC_STEMS
        if not with_parts(job) & stated or restated(decision.new, names[0], stated):
            continue  # another job, or the other text already names the chosen thing
        others = frozenset(
            w
            for w in names[1] - names[0] - with_parts(job) - decision.new
            if len(w) > 1 and w[:1].isalpha()
        )
        if not others:
            continue
        shared = (phrasing.words(decided) & phrasing.words(other)) - GENERIC_STEMS
        if modified_apart(phrasing.tokens(decided), phrasing.tokens(other), shared, names):
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


def preference_swap(new: str, existing: str) -> list[str]:
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


_ONLY = re.compile(r"\bonly\b", re.IGNORECASE)
_RANKED = re.compile(r"\b(?:not|never|over|rather than)\b")


def preferred_against(rule: str, other: str) -> list[str]:
    """`rule` ranks A over B and `other` states B for itself, naming less than half of A, with
    no negator, no preference of its own and no "only": "Use spaces, never tabs" / "Indent with
    tabs"."""
    if frames.preferences(other) or any(c.negators for c in analyze(other).clauses):
        return []
    if _ONLY.search(other):
        return []  # "Only re-export ... for the most fundamental types": it limits B too
    stated = with_parts(phrasing.words(other) | phrasing.entities(other))
    for preferred, over, phrase in frames.preferences(rule):
        if not _RANKED.search(phrase):
            continue  # "use the /e2e skill to run e2e tests": a means to an end, no ranking
        a = preferred - GENERIC_STEMS
        if a and over <= stated and len(a & stated) < len(a) / 2 and not over & GENERIC_STEMS:
            return [phrase]
    return []


def _overlap(x: frozenset[str], y: frozenset[str]) -> float:
    return len(x & y) / min(len(x), len(y)) if x and y else 0.0


#: Nouns for the whole project: "in this codebase" scopes nothing.
_UNIVERSAL = frozenset(
    stem(w) for w in ("codebase", "code", "project", "repo", "repository", "everywhere", "we")
)


def _scoped_preferences(
    new: str, existing: str, terms_n: frozenset[str], terms_e: frozenset[str]
) -> bool:
    """Both preferences are said of something and of different things ("for the cart service
    ... availability over consistency" / "for the ledger ... consistency over availability")."""
    rest_n = phrasing.words(new) - terms_n - GENERIC_STEMS - _UNIVERSAL
    rest_e = phrasing.words(existing) - terms_e - GENERIC_STEMS - _UNIVERSAL
    return bool(rest_n) and bool(rest_e) and not with_parts(rest_n) & with_parts(rest_e)


def told_before(new: str, existing: str, names: tuple[frozenset[str], frozenset[str]]) -> bool:
    """The new text's change leads to what the existing text already states, and the existing
    text does not name what it replaces: same news, not a choice ("Renamed utils to common" /
    "Shared helpers live in the common package")."""
    stated = with_parts(phrasing.words(existing) | names[1])
    return any(
        change.new
        and restated(change.new - change.old, names[0], stated)
        and not (change.old and restated(change.old, names[0], stated))
        for change in frames.changes(new)
    )
