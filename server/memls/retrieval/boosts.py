"""Type weight, per-type decay and feedback factor (pure, multiplicative, bounded)."""

from __future__ import annotations

import math
from typing import Any

TYPE_WEIGHT = {
    "decision": 1.10,
    "convention": 1.10,
    "constraint": 1.10,
    "preference": 1.05,
    "lesson": 1.05,
    "fact": 1.0,
    "note": 1.0,
}
# Half-life in days and the floor the factor never goes below; types not listed do not decay.
DECAY = {"note": (365.0, 0.85)}
FEEDBACK_STEP, FEEDBACK_MIN, FEEDBACK_MAX = 0.05, 0.85, 1.25
_DAY_US = 86_400 * 1_000_000


def type_weight(kind: str) -> float:
    return TYPE_WEIGHT.get(kind, 1.0)


def decay(kind: str, age_us: int) -> float:
    if kind not in DECAY or age_us <= 0:
        return 1.0
    half_life, floor = DECAY[kind]
    return max(floor, math.pow(0.5, (age_us / _DAY_US) / half_life))


def feedback(score: int) -> float:
    return min(FEEDBACK_MAX, max(FEEDBACK_MIN, 1.0 + FEEDBACK_STEP * score))


CITED_PATH_BOOST = 1.25
"""The factor for a memory that cites one of the query's `paths` (the files a developer has
open): enough to lift it over a slightly better match, not over a clearly better one. Set by
judgement, not measured: no data set pairs queries with open files."""


def fresh_first(ordered: list[Any]) -> list[Any]:
    """At equal relevance (the same final score), a memory whose cited code is as it was
    comes before one whose cited code changed: a stable sort within each run of ties."""
    out: list[Any] = []
    run: list[Any] = []
    for entry in ordered:
        if run and round(entry[0], 6) != round(run[0][0], 6):
            out.extend(sorted(run, key=lambda e: e[1][3].stale))
            run = []
        run.append(entry)
    out.extend(sorted(run, key=lambda e: e[1][3].stale))
    return out
