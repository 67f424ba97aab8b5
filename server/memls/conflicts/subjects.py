"""Subjects and scope, shared by the signals: are two clauses (or two texts) about the same
thing? A signal compares clause pairs that share a subject word where at most one side has
subject words the other lacks ("access tokens" vs "refresh tokens" are two subjects; "backups"
vs "database backups" are one), and a shared word with two different modifiers ("the lint job"
/ "the test job") makes two subjects.
"""

from __future__ import annotations

import functools
import re

from memls.conflicts import lexicon as lx
from memls.conflicts.stems import GENERIC_STEMS, stem
from memls.conflicts.text import Clause

#: Clauses with more subject words than this swap a slot only between named things
#: ("Arachne achieves ..." / "components ..." in two long ADR sentences is no choice).
SHORT_CLAUSE_KEYS = 8


#: Texts with more subject words than this (a paragraph) swap a slot only between named things.
SHORT_TEXT_KEYS = 12


def same_subject(left: set[str], right: set[str], ignore: frozenset[str] = frozenset()) -> bool:
    """Share a subject word, and at most one side has words the other lacks. Words in
    `ignore` (participles: "compiled for Java 21" / "target Java 17") never count as extra."""
    return bool(left & right) and not ((left - right - ignore) and (right - left - ignore))


def subject_of(clause: Clause, drop: frozenset[str] = frozenset()) -> set[str]:
    return set(clause.keys) - drop


@functools.lru_cache(maxsize=4096)
def with_parts(words: frozenset[str]) -> frozenset[str]:
    """Stems and the stemmed parts of compounds ("unit-test" -> unit, test; "acme/gateway-chart"
    -> acme, gateway-chart, gateway, chart)."""
    return words | frozenset(
        stem(p) for w in words for p in re.split(r"[-/]", w) + w.split("/") if p and p != w
    )


def is_compound(word: str) -> bool:
    """Words joined by hyphens ("self-managed"): a compound, not an identifier like "v1"."""
    return "-" in word and word.replace("-", "").isalpha()


def share_of(part: frozenset[str], whole: frozenset[str]) -> float:
    return len(part & whole) / len(part) if part else 0.0


def restated(part: frozenset[str], named: frozenset[str], whole: frozenset[str]) -> bool:
    """Does `whole` state `part`? Every named thing of it, or half its words without any."""
    key = part & named
    return key <= whole if key else share_of(part, whole) >= 0.5


def modified_apart(
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


def slot_of(keys: tuple[str, ...], part: list[str]) -> tuple[str | None, str | None] | None:
    """The frame words on either side of a contiguous run of `part` in `keys`."""
    positions = [keys.index(k) for k in part]
    first, last = min(positions), max(positions)
    if last - first + 1 != len(positions):
        return None
    left = keys[first - 1] if first > 0 else None
    right = keys[last + 1] if last + 1 < len(keys) else None
    return left, right


FOR_PHRASE = re.compile(r"\bfor\s+(?:(?:the|our|a|an|all|each|every)\s+)?(?P<first>[^\s,;.]+)")
