"""Fusion of candidate lists (pure)."""

from __future__ import annotations


def score_fusion(
    lexical: dict[str, float], vector: dict[str, float], *, lexical_weight: float = 0.5
) -> dict[str, float]:
    """w * bm25 / max(bm25) + (1 - w) * minmax(cosine); a missing source contributes 0.

    Measured on LoCoMo (shared/design/RETRIEVAL.md) above reciprocal rank fusion.
    """
    top = max(lexical.values(), default=0.0)
    lo, hi = min(vector.values(), default=0.0), max(vector.values(), default=0.0)
    span = hi - lo
    fused: dict[str, float] = {}
    for key in lexical.keys() | vector.keys():
        lex = lexical.get(key, 0.0) / top if top > 0 else 0.0
        if key in vector:
            vec = (vector[key] - lo) / span if span > 1e-9 else 1.0
        else:
            vec = 0.0
        fused[key] = lexical_weight * lex + (1.0 - lexical_weight) * vec
    return fused


def rrf(*rankings: list[str], k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion of ranked id lists."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank + 1)
    return fused
