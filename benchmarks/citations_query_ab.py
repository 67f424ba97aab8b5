"""A query's latency with and without citations: this checkout with 10,000 cited memories
against another checkout (main before citations) with the same 10,000 memories, lexical-only
(BM25: the stage a citation read is added to; the model stages do not see citations), no
cache, interleaved runs (A B A B) so a change of the host's speed hits both alike.

    git archive main server | tar -x -C /tmp/mainsrc
    python benchmarks/citations_query_ab.py ../shared/data/locomo/locomo-dev.json \
        --before /tmp/mainsrc/server [--reps 2]

Each memory of this checkout cites one of 100 files (a project folder of click-like text
files written for the run); the other checkout stores the same texts without citations.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()

CHILD = r"""
import json, sys, time, statistics
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from memls import protocol
from memls.engine import Engine
import corpus
data, store, folder = sys.argv[3], sys.argv[4], sys.argv[5]
cite, build = sys.argv[6] == "1", sys.argv[7] == "1"
sample = json.load(open(data))[0]
with Engine.open(store, front="bench", vectors=False, cache=False) as engine:
    if build:
        items = corpus.project_items(sample, 10000)
        params = []
        for k, item in enumerate(items):
            extra = {}
            if cite:
                spec = protocol.CitationSpec(
                    path=f"f{k % 100:03d}.txt", start_line=1 + k % 40, end_line=2 + k % 40
                )
                extra = {"citations": [spec], "infer_citations": False}
            params.append(protocol.StoreParams(text=item.text, valid_from=item.valid_from, **extra))
        for start in range(0, len(params), 2000):
            engine.ingest(protocol.IngestParams(project=folder, items=params[start:start + 2000]))
    qs = [q["question"] for q in corpus.questions(sample)]
    times = []
    for q in qs * 2:
        t = time.perf_counter()
        engine.query(protocol.QueryParams(query=q, project=folder, mode="lexical", k=10))
        times.append((time.perf_counter() - t) * 1000)
p90 = sorted(times)[int(len(times) * 0.9)]
print(json.dumps({"p50": statistics.median(times), "p90": p90, "n": len(times)}))
"""


def run(server: Path, data: str, store: Path, folder: Path, cite: bool, build: bool) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(server),
            str(HERE.parent),
            data,
            str(store),
            str(folder),
            "1" if cite else "0",
            "1" if build else "0",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    print("$ python benchmarks/citations_query_ab.py " + shlex.join(sys.argv[1:]))
    print(f"load average at the start {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "project"
        folder.mkdir()
        for k in range(100):
            (folder / f"f{k:03d}.txt").write_text("".join(f"line {k} {i}\n" for i in range(50)))
        sides = {
            "before (no citations)": (args.before, False),
            "citations": (HERE.parents[1] / "server", True),
        }
        seen: dict[str, list[dict]] = {name: [] for name in sides}
        for rep in range(args.reps):
            for name, (server, cite) in sides.items():
                store = Path(tmp) / name.split()[0]
                seen[name].append(run(server, args.data, store, folder, cite, build=rep == 0))
                print(f"rep {rep + 1} {name}: {seen[name][-1]}", flush=True)
        for name, runs in seen.items():
            each = ", ".join(format(r["p50"], ".2f") for r in runs)
            p50 = statistics.median(r["p50"] for r in runs)
            print(f"{name}: lexical p50 {p50:.2f} ms (runs {each})")
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
