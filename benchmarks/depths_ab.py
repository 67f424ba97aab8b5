"""Each depth's query p50 for two or more code checkouts on one kept 10k latency-corpus store,
runs alternating (A B A B ...) so that the host's drift hits each alike; the 150 questions of
the first dev conversation, uncached.

    python benchmarks/depths_ab.py ../shared/data/locomo/locomo-dev.json /path/to/store \
        /path/to/checkout-a /path/to/checkout-b [--reps 2]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
DEPTHS = ("lexical", "none", "interactive", "default")


def worker(path: str, store: str, root: str) -> dict:
    sys.path.insert(0, str(Path(root) / "server"))
    sys.path.insert(0, str(HERE.parent))
    from corpus import questions
    from latency import params_for
    from memls import protocol as p
    from memls.engine import Engine

    sample = json.loads(Path(path).read_text())[0]
    project = sample["sample_id"]
    out = {}
    with Engine.open(store, front="bench", cache=False) as engine:
        for depth in DEPTHS:
            for _ in range(2):
                engine.query(params_for(p, depth, query="warm up", project=project))
            lat = []
            for qa in questions(sample):
                params = params_for(p, depth, query=qa["question"], project=project, k=25)
                started = time.perf_counter()
                engine.query(params)
                lat.append((time.perf_counter() - started) * 1000)
            out[depth] = round(statistics.median(lat), 2)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("store")
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.path, args.store, args.worker)))
        return 0
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    for _ in range(args.reps):
        for root in args.roots:
            cmd = [sys.executable, __file__, args.path, args.store, root, "--worker", root]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            print(f"{root}: {done.stdout.strip().splitlines()[-1]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
