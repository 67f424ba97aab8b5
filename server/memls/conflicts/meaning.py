"""What the pair model read in a pair, as the scorer takes it: an input like the similarity,
computed by the caller (`detector.py` asks the model, after the store is acknowledged, only for
pairs that pass the similarity gate). Pure: no model here, only the numbers and what they mean.

A `Meaning` holds the probabilities of contradiction, entailment and neutral, read in both
orders (the model reads a premise, then a hypothesis) and averaged: a contradiction is one
whichever side is read first. `restates` asks more: each side entails the other.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The model alone calls a pair a contradiction (a `meaning` signal) at or above this mean
#: contradiction probability. Off (above 1): chosen at 0.95 on the development pairs, on the
#: held-out sets its firings were false alarms, and it needs the model on every candidate
#: (ten times the indexing time); the callers ask the model only to check what the signals
#: call a contradiction. MEANING_APART below: the best F1 on the development pairs
#: (training/tune_meaning.py; docs/conflicts.md).
MEANING_ALONE = 1.01
#: The model says the two sides are about two things: at or above this mean neutral
#: probability, change words and changed numbers do not count. (Entailment is no such sign:
#: "Python 3.12 is used in CI" / "Python 3.11 ..." reads as one subject restated, and the
#: changed number on that one subject is the contradiction.)
MEANING_APART = 0.9
#: Each side entails the other at least this much: a restatement (the near-duplicate rule; with
#: MEANING_COSINE, chosen on its tuning part by benchmarks/near_duplicates.py).
RESTATES = 0.7
#: Each side entails the other at least this much: the scorer's word signals do not count
#: (the two say the same in other words). Off (above 1): on the development pairs no value
#: of it added to F1 (training/tune_meaning.py).
MEANING_AGREE = 1.01


@dataclass(frozen=True)
class Meaning:
    contradiction: float
    entailment: float
    neutral: float
    #: min over the two orders of the entailment probability
    mutual_entailment: float = 0.0

    @classmethod
    def of(
        cls, forward: tuple[float, float, float], backward: tuple[float, float, float]
    ) -> Meaning:
        """From the model's (contradiction, entailment, neutral) for (new, existing) and for
        (existing, new)."""
        c, e, n = ((f + b) / 2 for f, b in zip(forward, backward))
        return cls(
            contradiction=round(c, 4),
            entailment=round(e, 4),
            neutral=round(n, 4),
            mutual_entailment=round(min(forward[1], backward[1]), 4),
        )

    @classmethod
    def one_way(cls, forward: tuple[float, float, float]) -> Meaning:
        """From the (new, existing) reading alone, when `decided` says the other order cannot
        change what the scorer asks (`contradicts`, `apart`, `agrees`): that reading taken for
        both. Not for `restates`, which needs each side read against the other."""
        return cls.of(forward, forward)

    @property
    def contradicts(self) -> bool:
        return self.contradiction >= MEANING_ALONE

    @property
    def apart(self) -> bool:
        """The model reads two things, not one: two subjects that share their words ("Module
        3 ..." / "Module 4 ...", a scoped exception beside a rule)."""
        return self.neutral >= MEANING_APART

    @property
    def agrees(self) -> bool:
        """The model reads each side as entailing the other: one claim in other words."""
        return self.mutual_entailment >= MEANING_AGREE

    @property
    def restates(self) -> bool:
        return self.mutual_entailment >= RESTATES


def decided(forward: tuple[float, float, float]) -> bool:
    """Does the (new, existing) reading alone settle what the scorer asks of a `Meaning`?
    Each of `contradicts`, `apart` (a mean of the two orders) and `agrees` (a minimum) is
    false whatever the other order reads when the first is below 2t - 1 (for a mean against
    threshold t) or below t (for a minimum): the pair need not be read the other way round."""
    c, e, n = forward
    return (
        c < 2 * MEANING_ALONE - 1 - _ROUNDING
        and n < 2 * MEANING_APART - 1 - _ROUNDING
        and e < MEANING_AGREE - _ROUNDING
    )


#: `Meaning.of` rounds to four places: a margin past it
_ROUNDING = 1e-3
