"""Pure text analysis for the contradiction scorer: a text's clauses, each with its subject
words, values (`quantities.py`), negators, antonym words, update and past markers.

Nothing here keeps state between calls; every function maps its input to a fresh value.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from memls.conflicts import lexicon as lx
from memls.conflicts.quantities import Value, read_values
from memls.conflicts.stems import (
    ANTONYM_STEMS,
    BE,
    GENERIC_STEMS,
    QUALIFIER_STEMS,
    TEXTS,
    UPDATE,
    is_participle,
    normalize,
    phrases,
    stem,
)

_CLAUSE_BREAK = re.compile(
    r"[.;!?]+(?=\s|$)"  # sentence ends (not the dot in 3.12 or a.yaml)
    r"|[()]"  # parentheticals
    r"|\s(?:and|but|while|whereas|although|so)\s"
    r"|,\s*(?=(?:not|but|so|while|which|who|though)\b)"  # ", not npm" / ", who took over"
)


_TOKEN = re.compile(r"[:@]?[^\W_][\w@./:+#%'-]*")


_POSSESSIVE = re.compile(r"'s$")


_TIME_PHRASES = tuple(
    (when, what) for when in lx.TIME_DEICTICS for what in lx.TIME_PERIODS
) + tuple((w,) for w in lx.TIME_ADVERBS)


_PAST = phrases(lx.PAST_MARKERS)


_ADDITIVE = phrases(lx.ADDITIVE_MARKERS)


_SCOPE_PREPOSITIONS = frozenset({"in", "for", "on", "under", "within"})


class Clause(NamedTuple):
    keys: tuple[str, ...]  # subject stems in order, deduplicated: no generic words, values,
    #                        markers, negators or stopwords
    surface: dict[str, str]  # stem -> a surface word, for trigger reporting
    content: frozenset[str]  # all content stems, values as <kind> placeholders (similarity)
    values: tuple[Value, ...]
    negators: tuple[str, ...]  # surface negators, empty when the clause is affirmative
    switches: frozenset[str]  # antonym stems present ("on"/"off" only as predicates)
    scoped: frozenset[str]  # antonym stems inside a scope phrase ("in the light theme")
    predicates: frozenset[str]  # participles ("compiled", "built"): predicate, not subject
    markers: tuple[str, ...]  # update markers
    past: bool
    additive: bool
    text: str


class Analysis(NamedTuple):
    clauses: tuple[Clause, ...]
    markers: tuple[str, ...]
    values: tuple[Value, ...]
    content: frozenset[str]
    keys: frozenset[str]
    qualifiers: tuple[frozenset[str], ...]
    joined: frozenset[str] = frozenset()  # verb + particle written as one word ("time out"


@functools.lru_cache(maxsize=TEXTS)
def analyze(text: str) -> Analysis:
    """Pure; memoised, since a new memory is compared with up to ten candidates (an entry
    holds ~10 KB of tuples: 4,096 of them were 40 MB of the daemon's RSS)."""
    clauses = tuple(
        c for c in (_clause(part) for part in _CLAUSE_BREAK.split(normalize(text))) if c.content
    )
    all_keys = frozenset(k for c in clauses for k in c.keys)
    return Analysis(
        clauses=clauses,
        markers=tuple(m for c in clauses for m in c.markers),
        values=tuple(v for c in clauses for v in c.values),
        content=frozenset(w for c in clauses for w in c.content),
        keys=all_keys,
        qualifiers=tuple(all_keys & cls for cls in QUALIFIER_STEMS),
        joined=_joined(normalize(text)),
    )


_PARTICLES = frozenset("out up off down".split())  # "on", "in": prepositions ("runs on")


def _joined(text: str) -> frozenset[str]:
    """A verb and its particle as one word: "times out" / "timeout", "backed up" / "backup"."""
    words = [w.strip(".,:;'\"()") for w in text.split()]
    return frozenset(
        stem(joined)
        for w, nxt in zip(words, words[1:])
        if nxt in _PARTICLES and w.isalpha() and w not in lx.STOPWORDS
        for joined in (w + nxt, stem(w) + nxt, stem(w) + "e" + nxt)
    )


@functools.lru_cache(maxsize=64)
def _by_first_word(
    phrases: tuple[tuple[str, ...], ...],
) -> dict[str, tuple[tuple[str, ...], ...]]:
    index: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        index.setdefault(phrase[0], []).append(phrase)
    return {k: tuple(v) for k, v in index.items()}


def _find_phrases(
    words: list[str], phrases: tuple[tuple[str, ...], ...]
) -> tuple[list[str], set[int]]:
    found: list[str] = []
    used: set[int] = set()
    starting = _by_first_word(phrases)
    for i in range(len(words)):
        for phrase in starting.get(words[i], ()):
            n = len(phrase)
            if tuple(words[i : i + n]) != phrase or used.intersection(range(i, i + n)):
                continue
            if phrase == ("used", "to") and i > 0 and words[i - 1] in BE:
                continue  # "is used to cache" states a purpose, not a past habit
            found.append(" ".join(phrase))
            used.update(range(i, i + n))
    return found, used


def _clause(part: str) -> Clause:
    words = [_POSSESSIVE.sub("", w).rstrip(".:'-,") for w in _TOKEN.findall(part)]
    words = [w for w in words if w]
    markers, marker_at = _find_phrases(words, UPDATE)
    _, time_at = _find_phrases(words, _TIME_PHRASES)
    past, _ = _find_phrases(words, _PAST)
    additive, _ = _find_phrases(words, _ADDITIVE)
    stems = [stem(w) for w in words]
    values, value_at = read_values(words, stems)

    negators = [w for w in words if w in lx.NEGATORS or w.endswith("n't")]
    if negators and lx.WEAK_NEGATOR in words:
        negators = [] if len(negators) % 2 else negators + [lx.WEAK_NEGATOR]
    negated = len(negators) % 2 == 1

    switches: set[str] = set()
    scoped: set[str] = set()
    predicates: set[str] = set()
    keys: list[str] = []
    content: set[str] = set()
    surface: dict[str, str] = {}
    for i, (w, s) in enumerate(zip(words, stems)):
        if w in ("on", "off"):
            if _is_switch(words, i):
                switches.add(w)
                surface.setdefault(w, w)
            continue
        if (
            i in marker_at
            or i in value_at
            or i in time_at
            or w in lx.STOPWORDS
            or w in lx.NEGATORS
            or w.endswith("n't")
            or w == lx.WEAK_NEGATOR
        ):
            continue
        surface.setdefault(s, w)
        content.add(s)
        if s in ANTONYM_STEMS:
            switches.add(s)
            if _SCOPE_PREPOSITIONS.intersection(words[max(0, i - 2) : i]):
                scoped.add(s)
        if s not in GENERIC_STEMS and s not in keys:
            keys.append(s)
            if is_participle(w):
                predicates.add(s)
    content.update(f"<{v.kind}>" for v in values if v.kind != "year")
    return Clause(
        keys=tuple(keys),
        surface=surface,
        content=frozenset(content),
        values=tuple(values),
        negators=tuple(negators) if negated else (),
        switches=frozenset(switches),
        scoped=frozenset(scoped),
        predicates=frozenset(predicates),
        markers=tuple(markers),
        past=bool(past),
        additive=bool(additive),
        text=part.strip(),
    )


def _is_switch(words: list[str], i: int) -> bool:
    """'is on', 'turned off', 'turn off the rule': a state, not a preposition ('runs on X')."""
    if i == 0 or words[i - 1] not in lx.SWITCH_VERBS:
        return False
    if words[i] == "off":
        return True
    nxt = words[i + 1] if i + 1 < len(words) else ""
    return nxt == "" or (nxt in lx.STOPWORDS and nxt not in lx.ARTICLES)
