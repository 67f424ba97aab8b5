"""What the wider neighbours cost at query time, interleaved on one store (relative figures:
the machine's load is printed; `latency.py` is the speed reference).

    python benchmarks/neighbour_cost.py STORE ../shared/data/locomo/locomo-dev.json [--n 100]

STORE: a LoCoMo store kept by `locomo.py --store`. For the first conversation's first N
questions (categories 1-4), each asked at depth interactive with the neighbours before this
session (3 / 10 / 0.5), 4 / 10 / 1.0 and 4 / 20 / 0.85, and at depth default as shipped, in
turn.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from memls import protocol as p
from memls.engine import Engine
from memls.retrieval.pipeline import RetrievalConfig


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("path")
    ap.add_argument("--n", type=int, default=100)
    args = ap.parse_args()
    print("# python " + " ".join(shlex.quote(a) for a in sys.argv))
    print("# load average at the start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    sample = json.loads(Path(args.path).read_text())[0]
    new = RetrievalConfig()
    old = replace(new, neighbours=3, neighbour_seeds=10, neighbour_weight=0.5)
    ten = replace(new, neighbours=4, neighbour_seeds=10, neighbour_weight=1.0)
    wide = replace(new, neighbours=4, neighbour_seeds=20, neighbour_weight=0.85)
    runs = (
        ("interactive, neighbours 3 / 10 / 0.5", old, "interactive"),
        ("interactive, neighbours 4 / 10 / 1.0", ten, "interactive"),
        ("interactive, neighbours 4 / 20 / 0.85", wide, "interactive"),
        ("default (2 pairs), the shipped neighbours", new, "default"),
    )
    with Engine.open(args.store, front="bench", retrieval=new, cache=False) as engine:
        project = sample["sample_id"]
        questions = [qa["question"] for qa in sample["qa"] if qa["category"] != 5][: args.n]
        engine.query(p.QueryParams(query=questions[0], project=project, k=25))  # warm
        took: dict[str, list[float]] = {name: [] for name, _, _ in runs}
        for q in questions:
            for name, config, depth in runs:
                engine.retrieval = config
                t0 = time.perf_counter()
                engine.query(p.QueryParams(query=q, project=project, k=25, depth=depth))
                took[name].append((time.perf_counter() - t0) * 1000)
    print(f"# {len(questions)} questions of {project}, k 25, uncached")
    print("| configuration | p50 ms | p95 ms |")
    print("|---|---|---|")
    for name, values in took.items():
        values.sort()
        print(
            f"| {name} | {statistics.median(values):.1f} | "
            f"{values[int(0.95 * (len(values) - 1))]:.1f} |"
        )
    print("# load average at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
