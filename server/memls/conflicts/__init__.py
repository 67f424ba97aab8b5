"""Contradictions between memories: a pure scorer (`scorer.py`); the resolver acts on verdicts."""

from memls.conflicts.scorer import Signal, Verdict, score_pair

__all__ = ["Signal", "Verdict", "score_pair"]
