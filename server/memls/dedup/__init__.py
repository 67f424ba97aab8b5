"""Near duplicates: does a new memory restate one the project holds? `rule` is pure (the two
texts and their scores); `lookup` gathers the candidates and their scores from the store, the
vector index and the models."""

from memls.dedup.rule import (
    LEXICAL_FLOOR,
    MEANING_COSINE,
    NEAR_COSINE,
    NEAR_CROSS,
    differing_names,
    is_restatement,
    lexically_close,
    substituted,
)

__all__ = [
    "LEXICAL_FLOOR",
    "MEANING_COSINE",
    "NEAR_COSINE",
    "NEAR_CROSS",
    "differing_names",
    "is_restatement",
    "lexically_close",
    "substituted",
]
