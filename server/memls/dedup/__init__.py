"""Near duplicates: does a new memory restate one the project holds? Pure rules over the
two texts and the scores the engine computed for them (no I/O, no models, no clock)."""

from memls.dedup.rule import NEAR_COSINE, NEAR_CROSS, differing_names, is_restatement

__all__ = ["NEAR_COSINE", "NEAR_CROSS", "differing_names", "is_restatement"]
