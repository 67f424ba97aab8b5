"""The similarity gate: how related a pair is, from an absolute model score or, without one,
the lexical overlap of the two texts. Similarity is never normalised across candidates:
below the minimum of its kind nothing fires; from the minimum to the "full" value the gate
rises from GATE_FLOOR to 1.
"""

from __future__ import annotations

import math
from types import MappingProxyType

from memls.conflicts.subjects import with_parts
from memls.conflicts.text import Analysis

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


def lexical_similarity(a: Analysis, b: Analysis) -> float:
    """Jaccard of content words (stemmed; numbers folded to their kind; a compound counts by
    its parts too: "service-to-service" shares "service")."""
    x, y = with_parts(a.content), with_parts(b.content)
    union = x | y
    return len(x & y) / len(union) if union else 0.0


def gate(similarity: float, source: str) -> float:
    """0 below the minimum of the similarity kind, then GATE_FLOOR rising linearly to 1."""
    low, full = _GATES[source]
    if similarity < low:
        return 0.0
    rise = min(1.0, (similarity - low) / (full - low))
    return GATE_FLOOR + (1.0 - GATE_FLOOR) * rise


def checked_similarity(similarity: float, kind: str) -> float:
    if kind not in ("cosine", "probability"):
        raise ValueError(f"similarity_kind must be 'cosine' or 'probability', not {kind!r}")
    value = float(similarity)
    if math.isnan(value):
        raise ValueError("similarity is NaN")
    return min(1.0, max(-1.0 if kind == "cosine" else 0.0, value))
