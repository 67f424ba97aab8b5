"""Memory of a bulk ingest: RSS while N LoCoMo turns are stored and fully indexed.

Prints RSS when every store is acknowledged, when the index has caught up (the indexer hands
free heap back when it goes idle), the peak, and the ingest rate; with --trace, the Python
allocations that grew most (tracemalloc, slower).

    python benchmarks/ingest_rss.py ../shared/data/locomo/locomo-dev.json --size 10000
    python benchmarks/ingest_rss.py ../shared/data/locomo/locomo-dev.json --size 10000 \
        --embed-batch 16
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent))

from latency import PROJECT, corpus


def rss_mb() -> int:
    with open("/proc/self/status") as status:
        return int(status.read().split("VmRSS:")[1].split()[0]) // 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--embed-batch", type=int, default=None, help="default: the runtime's")
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()

    from memls import protocol as p
    from memls.engine import Engine
    from memls.models import ModelRuntime

    items = corpus(json.loads(Path(args.path).read_text()), args.size)
    kw = {} if args.embed_batch is None else {"embed_batch_size": args.embed_batch}
    samples: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(1.0):
            samples.append(rss_mb())

    threading.Thread(target=sample, daemon=True).start()
    with (
        tempfile.TemporaryDirectory() as tmp,
        ModelRuntime(**kw) as models,
        Engine.open(tmp, front="bench", models=models) as engine,
    ):
        models.embedder.warm()
        loaded = rss_mb()
        if args.trace:
            tracemalloc.start(1)
            before = tracemalloc.take_snapshot()
        started = time.perf_counter()
        for text, when in items:
            engine.store(p.StoreParams(text=text, project=PROJECT, valid_from=when))
        acked = rss_mb()
        assert engine.flush(timeout=7200)
        rate = args.size / (time.perf_counter() - started)
        time.sleep(0.5)  # the worker trims the heap as it goes idle
        indexed = rss_mb()
        if args.trace:
            grown = tracemalloc.take_snapshot().compare_to(before, "lineno")[:8]
        batch = models.embedder.batch_size
    done.set()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    print(
        "| memories | embedder batch | RSS, embedder loaded | all acknowledged | indexed, idle "
        "| peak | ingest |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {args.size} | {batch} | {loaded} MB | {acked} MB | {indexed} MB | {peak} MB "
        f"| {rate:.0f} /s |"
    )
    print(f"RSS every second: {samples}")
    if args.trace:
        print("\nPython allocations that grew most during the ingest:")
        for stat in grown:
            print(f"  {stat}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
