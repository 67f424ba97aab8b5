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
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
DEPTHS = ("lexical", "none", "interactive", "default")


def worker(path: str, store: str, root: str) -> dict:
    sys.path.insert(0, str(Path(root) / "server"))
    from memls import protocol as p  # the checkout's, before a benchmark module adds its own
    from memls.engine import Engine

    sys.path.insert(0, str(HERE.parent))
    from latency import depth_p50s

    assert Path(p.__file__).is_relative_to(root), p.__file__

    sample = json.loads(Path(path).read_text())[0]
    with Engine.open(store, front="bench", cache=False) as engine:
        return depth_p50s(engine, p, sample, DEPTHS, warm=2)


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
