"""The antonym signal's reading: opposite words on the two sides of a clause pair, from the
lexicon's pairs ("enabled" / "disabled") or from the morphology of a negated form ("signed" /
"unsigned", "blocking" / "non-blocking").
"""

from __future__ import annotations

import functools

from memls.conflicts.stems import ANTONYMS
from memls.conflicts.text import Clause


def opposite_pairs(cn: Clause, ce: Clause) -> set[tuple[str, str]]:
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
