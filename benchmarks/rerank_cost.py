"""What the default depth's cross-encoder head costs on a real store: the ten results of one
LoCoMo question, re-scored 1 / 5 / 10 at a time, and 10 at several batch sizes (median of 8).

    python benchmarks/rerank_cost.py STORE_DIR [--project conv-26]

STORE_DIR: a store made by `benchmarks/latency.py` (the 10k conv-26 project of `corpus.py`).
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from memls import protocol as p
from memls.engine import Engine

QUESTION = "When did Caroline go to the LGBTQ support group?"


def median_ms(fn, rounds: int = 8) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--project", default="conv-26")
    args = parser.parse_args()
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    with Engine.open(args.store, front="bench", cache=False) as engine:
        found = engine.query(p.QueryParams(query=QUESTION, project=args.project, k=10))
        texts = [hit.content for hit in found.results]
        assert engine.models is not None
        reranker = engine.models.reranker
        print(f"passages: {len(texts)}, characters: {[len(t) for t in texts]}")
        print("\n| pairs | batch | ms (median of 8) | ms a pair |\n|---|---|---|---|")
        for n in (1, 5, 10):
            ms = median_ms(lambda n=n: reranker.rerank(QUESTION, texts[:n]))
            print(f"| {n} | {reranker.batch_size} | {ms} | {ms / n:.1f} |")
        default = reranker.batch_size
        for size in (1, 2, 4, default):
            reranker.batch_size = size
            ms = median_ms(lambda: reranker.rerank(QUESTION, texts))
            print(f"| {len(texts)} | {size} | {ms} | {ms / len(texts):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
