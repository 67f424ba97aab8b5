"""The pair model as the detector and the near-duplicate rule ask it: each pair read in both
orders, in one batch, into `Meaning`s for the pure scorer. A caller that asks only what the
scorer asks (the detector) may pass `meaning.decided`: a pair whose first reading settles it
is not read the other way round (a third of the model's work on a store of many
contradictions: benchmarks/omega_import.py). No model (None), or a model that is
unavailable: None, and the callers decide by the signals alone (the model's status, in health
and doctor, says why)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memls.conflicts.meaning import Meaning
from memls.models import ModelUnavailable, PairModel


@dataclass(frozen=True)
class PairReader:
    model: PairModel | None

    #: given the (new, existing) reading, does it alone settle the pair? (None: read both)
    decided: Callable[[tuple[float, float, float]], bool] | None = None

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> list[Meaning] | None:
        """A `Meaning` for each (new, existing), or None when the model cannot run."""
        if self.model is None:
            return None
        if not pairs:
            return []
        try:
            if self.decided is None:
                probs = self.model.classify([*pairs, *((b, a) for a, b in pairs)])
                forward = [_triple(f) for f in probs[: len(pairs)]]
                backward: list[tuple[float, float, float] | None] = [
                    _triple(b) for b in probs[len(pairs) :]
                ]
            else:
                forward = [_triple(f) for f in self.model.classify(pairs)]
                backward = [None] * len(pairs)
                open_ = [k for k, f in enumerate(forward) if not self.decided(f)]
                if open_:
                    read = self.model.classify([(pairs[k][1], pairs[k][0]) for k in open_])
                    for k, b in zip(open_, read):
                        backward[k] = _triple(b)
        except ModelUnavailable:
            return None
        return [
            Meaning.one_way(f) if b is None else Meaning.of(f, b) for f, b in zip(forward, backward)
        ]


def _triple(row: Sequence[float]) -> tuple[float, float, float]:
    return (float(row[0]), float(row[1]), float(row[2]))
