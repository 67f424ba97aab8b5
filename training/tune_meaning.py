"""Chooses the scorer's pair-model thresholds (memls.conflicts.meaning: MEANING_ALONE,
MEANING_APART, MEANING_AGREE; memls.conflicts.scorer: MEANING_VETOES) on the development
pairs only: benchmarks/data/conflict_pairs/dev.jsonl and tests/data/conflict_pairs.jsonl (both
tuned on before) and the near-duplicate groups' tuning part (groups.txt: a restated or related
memory is no contradiction, a contradicting one is). Run in memls's own environment, with the
model packaged:

    .venv/bin/python training/tune_meaning.py [--pair-dev DATA/dev.jsonl]

`--pair-dev`: also the generated pairs of the pair model's own dev split (`pair_data.py`;
contradiction against the rest), which hold what the two sets lack: numbers that name a
subject, scoped exceptions beside a rule.

Each pair is scored as the engine scores it (bge-small cosine gate; the model asked only past
the gate, both orders); the grid's best is the highest F1 over the sets together, ties to the
fewest firings of the model alone (higher MEANING_ALONE) and the fewest vetoes (higher
MEANING_APART). The held-out sets are not read here.
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
GROUPS = ROOT / "benchmarks/data/near_duplicates/groups.txt"  # the rule's tuning part
KINDS = {
    "change words + numbers": frozenset({"temporal_override", "value_change"}),
    "every word signal": frozenset(
        {"temporal_override", "value_change", "negation", "antonym", "choice_change"}
    ),
}


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--pair-dev", type=Path)
    args = ap.parse_args()
    rows = [json.loads(x) for f in SETS for x in f.read_text().splitlines() if x.strip()]
    old = ""
    for line in GROUPS.read_text().splitlines():  # restated / related: no contradiction
        if not line.strip() or line.startswith("#"):
            continue
        if line[0] in "=~!":
            rows.append({"new": line[1:].strip(), "existing": old, "contradiction": line[0] == "!"})
        else:
            old = line.partition(":")[2].strip()
    if args.pair_dev:
        for x in args.pair_dev.read_text().splitlines():
            d = json.loads(x)
            if d["source"] == "generated":
                rows.append(
                    {
                        "new": d["h"],
                        "existing": d["p"],
                        "contradiction": d["label"] == "contradiction",
                    }
                )
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
    grid = [
        (alone, apart, agree, name)
        for alone in (0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1.01)
        for apart in (0.6, 0.7, 0.8, 0.9, 0.95, 1.01)
        for agree in (0.8, 0.9, 0.95, 0.98, 1.01)
        for name in KINDS
    ]
    for alone, apart, agree, name in grid:
        meaning_module.MEANING_ALONE, meaning_module.MEANING_APART = alone, apart
        meaning_module.MEANING_AGREE = agree
        scorer.MEANING_VETOES = KINDS[name]
        tp = fp = fn = 0
        for r, cos, m in cases:
            said = score_pair(r["new"], r["existing"], similarity=cos, meaning=m).contradiction
            tp += said and r["contradiction"]
            fp += said and not r["contradiction"]
            fn += (not said) and r["contradiction"]
        p = tp / (tp + fp) if tp + fp else 1.0
        rec = tp / (tp + fn)
        results.append((alone, apart, agree, name, round(p, 3), round(rec, 3), fp, fn))
    for line in results:
        print(*line, sep="\t")

    def f1(x: tuple) -> float:
        return 2 * x[4] * x[5] / (x[4] + x[5]) if x[4] + x[5] else 0.0

    best = max(results, key=lambda x: (round(f1(x), 4), x[0], x[1], x[2]))
    print("chosen:", best)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
