"""Ingest CPU a memory (every thread of the process: getrusage) and its rate, for one or more
code checkouts, runs interleaved (A B A B ...) on the same host: CPU time is a steadier
comparison than wall time on a shared or drifting host.

    python benchmarks/ingest_cpu.py ../shared/data/locomo/locomo-dev.json /path/to/checkout-a \
        /path/to/checkout-b [--n 1500] [--reps 2]

The first n latency-corpus memories (`corpus.project_items`) into a fresh store, acknowledged
and then fully indexed (flush), the models warm.
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def worker(path: str, root: str, n: int) -> str:
    sys.path.insert(0, str(Path(root) / "server"))
    from memls import protocol as p  # the checkout's, before a benchmark module adds its own
    from memls.engine import Engine

    sys.path.insert(0, str(HERE.parent))
    from corpus import project_items

    sample = json.loads(Path(path).read_text())[0]
    project = sample["sample_id"]
    items = project_items(sample, 10000)[:n]
    with (
        tempfile.TemporaryDirectory() as tmp,
        Engine.open(tmp, front="bench", cache=False) as engine,
    ):
        engine.query(p.QueryParams(query="warm", project=project))
        engine.store(p.StoreParams(text="warm up memory", project=project))
        engine.flush()
        before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        for item in items:
            engine.store(item.params(project))
        engine.flush(timeout=7200)
        after = resource.getrusage(resource.RUSAGE_SELF)
        wall = time.perf_counter() - started
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert Path(p.__file__).is_relative_to(root), p.__file__
    return f"{root}: wall {n / wall:.1f} /s, CPU {1000 * cpu / n:.2f} ms a memory"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--n", type=int, default=1500)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(worker(args.path, args.worker, args.n))
        return 0
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    for _ in range(args.reps):
        for root in args.roots:
            cmd = [sys.executable, __file__, args.path, root, "--n", str(args.n), "--worker", root]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            print(done.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
