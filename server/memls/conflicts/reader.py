"""The pair model as the detector and the near-duplicate rule ask it: each pair read in both
orders, in one batch, into `Meaning`s for the pure scorer. No model (None), or a model that is
unavailable: None, and the callers decide by the signals alone (the model's status, in health
and doctor, says why)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memls.conflicts.meaning import Meaning
from memls.models import ModelUnavailable, PairModel


@dataclass(frozen=True)
class PairReader:
    model: PairModel | None

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> list[Meaning] | None:
        """A `Meaning` for each (new, existing), or None when the model cannot run."""
        if self.model is None:
            return None
        if not pairs:
            return []
        both = [*pairs, *((b, a) for a, b in pairs)]
        try:
            probs = self.model.classify(both)
        except ModelUnavailable:
            return None
        n = len(pairs)
        return [
            Meaning.of(
                (float(f[0]), float(f[1]), float(f[2])), (float(b[0]), float(b[1]), float(b[2]))
            )
            for f, b in zip(probs[:n], probs[n:])
        ]
