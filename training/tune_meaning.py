"""Chooses the scorer's pair-model thresholds (memls.conflicts.meaning: MEANING_ALONE,
MEANING_APART; memls.conflicts.scorer: MEANING_VETOES) on the development pairs only:
benchmarks/data/conflict_pairs/dev.jsonl and tests/data/conflict_pairs.jsonl (both tuned on
before). Run in memls's own environment, with the model packaged:

    .venv/bin/python training/tune_meaning.py

Each pair is scored as the engine scores it (bge-small cosine gate; the model asked only past
the gate, both orders); the grid's best is the highest recall at precision >= 0.95 on the two
sets together, ties to the fewest firings of the model alone (higher MEANING_ALONE) and the
fewest vetoes (higher MEANING_APART). The held-out sets are not read here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from memls.conflicts import meaning as meaning_module  # noqa: E402
from memls.conflicts import scorer  # noqa: E402
from memls.conflicts.reader import PairReader  # noqa: E402
from memls.conflicts.scorer import gate, score_pair  # noqa: E402
from memls.models import ModelRuntime  # noqa: E402

SETS = [ROOT / "benchmarks/data/conflict_pairs/dev.jsonl", ROOT / "tests/data/conflict_pairs.jsonl"]
KINDS = {
    "change words + numbers": frozenset({"temporal_override", "value_change"}),
    "every word signal": frozenset(
        {"temporal_override", "value_change", "negation", "antonym", "choice_change"}
    ),
}


def main() -> int:
    rows = [json.loads(x) for f in SETS for x in f.read_text().splitlines() if x.strip()]
    runtime = ModelRuntime(rerank=False)
    texts = sorted({t for r in rows for t in (r["new"], r["existing"])})
    vec = dict(zip(texts, runtime.embedder.embed(texts)))
    reader = PairReader(runtime.pair)
    cases = []
    for r in rows:
        cos = float(vec[r["new"]] @ vec[r["existing"]])
        v = score_pair(r["new"], r["existing"], similarity=cos)
        m = None
        if gate(v.similarity, v.similarity_source) > 0:
            found = reader([(r["new"], r["existing"])])
            m = found[0] if found else None
        cases.append((r, cos, m))
    print(f"{len(rows)} pairs, {sum(m is not None for _, _, m in cases)} past the gate")
    results = []
    for alone in (0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1.01):
        for apart in (0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 1.01):
            for name, kinds in KINDS.items():
                meaning_module.MEANING_ALONE, meaning_module.MEANING_APART = alone, apart
                scorer.MEANING_VETOES = kinds
                tp = fp = fn = 0
                for r, cos, m in cases:
                    said = score_pair(
                        r["new"], r["existing"], similarity=cos, meaning=m
                    ).contradiction
                    tp += said and r["contradiction"]
                    fp += said and not r["contradiction"]
                    fn += (not said) and r["contradiction"]
                p = tp / (tp + fp) if tp + fp else 1.0
                rec = tp / (tp + fn)
                results.append((alone, apart, name, round(p, 3), round(rec, 3), fp, fn))
    for line in results:
        print(*line, sep="\t")
    ok = [x for x in results if x[3] >= 0.95]
    best = max(ok, key=lambda x: (x[4], x[0], x[1]))
    print("chosen:", best)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
