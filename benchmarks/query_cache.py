"""Repeated queries: the same LoCoMo questions asked twice on one store,
the first time computed, the second from the query cache; plus the bulk ingest that built the
store (memory/ingest: all stored in one transaction, then waited for until indexed).

    python benchmarks/query_cache.py ../shared/data/locomo/locomo-dev.json \
        > benchmarks/results/query-cache.txt

Every other benchmark measures uncached queries (`Engine.open(..., cache=False)`). Output:
ingest rate, then p50/p95 of the first and the repeated ask (default depth), and the cache's
hits/misses from `stats`. Run it on an idle machine; the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent))

from locomo import turns
from memls import protocol as p
from memls.engine import Engine

PROJECT = "bench"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    print(f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    samples = json.loads(Path(args.path).read_text())[: args.conversations]
    items = [
        p.StoreParams(text=text, **({"valid_from": when} if when else {}))
        for s in samples
        for _, text, when in turns(s)
    ]
    questions = [qa["question"] for s in samples for qa in s["qa"]][: args.queries]
    with tempfile.TemporaryDirectory(prefix="memls-cache-bench-") as tmp:
        with Engine.open(tmp, front="bench") as engine:
            engine.query(p.QueryParams(query="warm up the models", project=PROJECT))
            t0 = time.perf_counter()
            r = engine.ingest(p.IngestParams(project=PROJECT, items=items))
            took = time.perf_counter() - t0
            print(
                f"ingest: {r.stored} memories fully indexed in {took:.1f} s "
                f"({r.stored / took:.1f} memories/s; indexed={r.indexed})"
            )
            first, again = [], []
            for question in questions:
                params = p.QueryParams(query=question, project=PROJECT)
                a = engine.query(params)
                b = engine.query(params)
                assert not a.cached and b.cached
                first.append(a.took_ms or 0.0)
                again.append(b.took_ms or 0.0)
            stats = engine.stats(p.StatsParams(project=PROJECT)).query_cache
    print(f"{len(questions)} questions, each asked twice (default depth):")
    print("| ask | p50 ms | p95 ms |")
    print("|---|---|---|")
    print(f"| first (computed) | {pct(first, 50):.2f} | {pct(first, 95):.2f} |")
    print(f"| repeated (cache) | {pct(again, 50):.3f} | {pct(again, 95):.3f} |")
    print(f"cache: {stats}")
    print(f"# load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
