"""Intra-op threads of the ONNX sessions: query latency per depth and ingest for 2 threads a
session, 1, and 1 for the encoders with 2 for the cross-encoder ("1+2"); runs interleaved
(A B C A B C ...) so that a change of the host's speed hits each alike. The model pool has two
workers either way.

    python benchmarks/model_threads.py ../shared/data/locomo/locomo-dev.json --store DIR \
        [--reps 2] [--ingest 1500]

DIR: a 10k latency-corpus store (as latency.py builds it, e.g. from `query_parts.py --store`).
Each run is its own process (a fresh model runtime). Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
VARIANTS = ("2", "1", "1+2")  # threads a session: encoders[+cross-encoder]


def run(path: str, store: str, variant: str, ingest: int) -> dict:
    sys.path.insert(0, str(HERE.parents[1] / "server"))
    sys.path.insert(0, str(HERE.parent))
    from corpus import project_items
    from latency import depth_p50s
    from memls import protocol as p
    from memls.config import model_cache_dir
    from memls.engine import Engine
    from memls.models import ModelRuntime

    sample = json.loads(Path(path).read_text())[0]
    project = sample["sample_id"]
    out: dict = {"threads": variant}
    encoders, _, rerank = variant.partition("+")
    models = ModelRuntime(
        intra_op_threads=int(encoders),
        rerank_threads=int(rerank or encoders),
        cache_dir=model_cache_dir(),
    )
    with Engine.open(store, front="bench", cache=False, models=models) as engine:
        out.update(depth_p50s(engine, p, sample, ("none", "interactive", "default")))
    if ingest:
        items = project_items(sample, 10000)[:ingest]
        with (
            tempfile.TemporaryDirectory() as tmp,
            Engine.open(tmp, front="bench", cache=False, models=models) as engine,
        ):
            started = time.perf_counter()
            for item in items:
                engine.store(item.params(project))
            assert engine.flush(timeout=7200)
            out["ingest_per_s"] = round(len(items) / (time.perf_counter() - started), 1)
    models.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--store", required=True)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--ingest", type=int, default=1500)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        print(json.dumps(run(args.path, args.store, args.worker, args.ingest)))
        return 0
    rows = []
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    print(f"# load average at the start {os.getloadavg()}")
    for _ in range(args.reps):
        for threads in VARIANTS:
            cmd = [sys.executable, __file__, args.path, "--store", args.store]
            cmd += ["--ingest", str(args.ingest), "--worker", threads]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"# {rows[-1]}", flush=True)
    print(f"# load average at the end {os.getloadavg()}\n")
    print("| threads a session | none p50 ms | interactive p50 ms | default p50 ms | ingest /s |")
    print("|---|---|---|---|---|")
    for threads in VARIANTS:
        mine = [r for r in rows if r["threads"] == threads]
        cells = [
            " / ".join(f"{r[k]}" for r in mine)
            for k in ("none", "interactive", "default", "ingest_per_s")
            if k in mine[0]
        ]
        print(f"| {threads} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
