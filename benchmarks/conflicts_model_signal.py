"""Does a model signal from the packaged models pay for the contradiction scorer? (issue #12 pt 5)

    python benchmarks/conflicts_model_signal.py [--validate test3]

The scorer stays pure; a model signal would be computed by the detector and passed in as plain
numbers. This harness measures the candidates on the open pair sets (dev, test, test2) and
reports only aggregate counts on the validation set:

1. Pair features from the packaged models: the bge-small cosine of the two texts, the cosine
   of their DIFFERING words (each side's content words the other lacks: "is the difference a
   paraphrase?"), and the colbert token alignment (mean best cosine of each side's tokens in
   the other, share of tokens below 0.8: "what is new on each side").
2. A logistic combiner of those features on the pairs the rules do NOT flag, trained
   leave-one-set-out on the open sets: how many true contradictions it adds, and how many
   false alarms, at each threshold. (The rules miss these pairs; a model signal would have to
   find them at precision >= 0.95 to help.)
3. Word-level cosines for synonyms and for alternatives / opposites: can the embedder tell a
   paraphrase of a slot filler ("straight" / "directly") from another filler ("yarn" / "pnpm",
   "enabled" / "disabled")? A synonym signal for the rules needs the first above the second.
4. The cost: ms per text for each model on this machine (with the load average).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from memls.conflicts import lexicon as lx
from memls.conflicts.scorer import score_pair
from memls.conflicts.text import normalize, stem

DATA = ROOT / "benchmarks" / "data" / "conflict_pairs"
OPEN = ("dev", "test", "test2")
_WORD = re.compile(r"[\w][\w.+#/-]*")
FEATURES = ("cos", "diff_cos", "align_new", "align_old", "new_share", "old_share")

#: (a, b, relation): synonyms should score above alternatives and opposites.
WORD_PAIRS = (
    ("startup", "boots", "synonym"),
    ("straight", "directly", "synonym"),
    ("cli", "command-line tool", "synonym"),
    ("self-hosting", "running it ourselves", "synonym"),
    ("sent", "send", "synonym"),
    ("monorepo", "one repository", "synonym"),
    ("weekly", "daily", "alternative"),
    ("yarn", "pnpm", "alternative"),
    ("kafka", "rabbitmq", "alternative"),
    ("staging", "production", "alternative"),
    ("squash merges", "merge commits", "alternative"),
    ("enabled", "disabled", "opposite"),
    ("allow", "deny", "opposite"),
)


def content(text: str) -> list[str]:
    return [w for w in _WORD.findall(normalize(text)) if w not in lx.STOPWORDS]


def differing(x: str, y: str) -> str:
    """x's content words whose stem y lacks, in order ("." when none)."""
    theirs = {stem(w) for w in content(y)}
    return " ".join(w for w in content(x) if stem(w) not in theirs) or "."


def load(name: str) -> list[dict]:
    with (DATA / f"{name}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def features(rows: list[dict], runtime) -> tuple[list[dict], dict]:
    texts = sorted({t for r in rows for t in (r["new"], r["existing"])})
    spans = sorted(
        {differing(r["new"], r["existing"]) for r in rows}
        | {differing(r["existing"], r["new"]) for r in rows}
    )
    started = time.perf_counter()
    vectors = dict(zip(texts, runtime.embedder.embed(texts)))
    embedded = time.perf_counter()
    vectors.update(zip(spans, runtime.embedder.embed(spans)))
    spans_done = time.perf_counter()
    tokens = dict(zip(texts, runtime.late.encode(texts)))
    done = time.perf_counter()
    cost = {
        "embed_ms_per_text": (embedded - started) * 1e3 / len(texts),
        "embed_ms_per_span": (spans_done - embedded) * 1e3 / len(spans),
        "late_ms_per_text": (done - spans_done) * 1e3 / len(texts),
    }
    out = []
    for r in rows:
        new, old = r["new"], r["existing"]
        sims = tokens[new].astype(np.float32) @ tokens[old].astype(np.float32).T
        best_new, best_old = sims.max(1), sims.max(0)
        out.append(
            {
                "label": bool(r["contradiction"]),
                "rule": score_pair(new, old).contradiction,
                "cos": float(vectors[new] @ vectors[old]),
                "diff_cos": float(vectors[differing(new, old)] @ vectors[differing(old, new)]),
                "align_new": float(best_new.mean()),
                "align_old": float(best_old.mean()),
                "new_share": float((best_new < 0.8).mean()),
                "old_share": float((best_old < 0.8).mean()),
            }
        )
    return out, cost


def matrix(rows: list[dict]) -> np.ndarray:
    return np.array([[r[k] for k in FEATURES] for r in rows], dtype=np.float64)


def fit(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y = matrix(rows), np.array([r["label"] for r in rows], dtype=np.float64)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    x = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    w = np.zeros(x.shape[1])
    for _ in range(3000):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        w -= 0.1 * (x.T @ (p - y) / len(y) + 0.01 * w)
    return w, mu, sd


def predict(model: tuple[np.ndarray, np.ndarray, np.ndarray], rows: list[dict]) -> np.ndarray:
    w, mu, sd = model
    x = np.hstack([(matrix(rows) - mu) / sd, np.ones((len(rows), 1))])
    return 1.0 / (1.0 + np.exp(-x @ w))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--validate", default="test3", help="aggregate counts only")
    args = parser.parse_args()
    print("$ " + shlex.join(["python", "benchmarks/conflicts_model_signal.py", *sys.argv[1:]]))
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} (2 shared cores)")
    from memls.models import ModelRuntime

    runtime = ModelRuntime(rerank=False)
    runtime.embedder.embed(["warm"])
    runtime.late.encode(["warm"])
    sets = {}
    for name in (*OPEN, args.validate):
        rows, cost = features(load(name), runtime)
        sets[name] = rows
        print(
            f"{name}: {len(rows)} pairs; bge-small {cost['embed_ms_per_text']:.1f} ms a text, "
            f"{cost['embed_ms_per_span']:.1f} ms a differing span; colbert "
            f"{cost['late_ms_per_text']:.1f} ms a text (batched)"
        )

    print("\n1. feature medians on the pairs the rules miss (open sets):")
    missed = [r for name in OPEN for r in sets[name] if not r["rule"]]
    for key in FEATURES:
        yes = [r[key] for r in missed if r["label"]]
        no = [r[key] for r in missed if not r["label"]]
        print(
            f"   {key:<10} contradicting {np.median(yes):.3f} (n={len(yes)})   "
            f"compatible {np.median(no):.3f} (n={len(no)})"
        )

    print("\n2. logistic combiner on rule-negative pairs, leave one open set out:")
    print("   held-out  threshold  adds TP  adds FP")
    for held in (*OPEN, args.validate):
        train = [r for name in OPEN if name != held for r in sets[name] if not r["rule"]]
        test = [r for r in sets[held] if not r["rule"]]
        p = predict(fit(train), test)
        for threshold in (0.3, 0.4, 0.5, 0.6, 0.7):
            tp = sum(1 for r, q in zip(test, p) if q >= threshold and r["label"])
            fp = sum(1 for r, q in zip(test, p) if q >= threshold and not r["label"])
            print(f"   {held:<9} {threshold:<10} {tp:<8} {fp}")

    print("\n3. bge-small cosine of single words / short phrases:")
    for a, b, relation in WORD_PAIRS:
        va, vb = runtime.embedder.embed([a, b])
        print(f"   {relation:<12} {a!r} / {b!r}: {float(va @ vb):.3f}")
    runtime.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
