"""What reading citations adds to a query, measured in one process: the same store of cited
memories queried with the citations read (as shipped) and with the read replaced by nothing,
alternating (A B, B A, ...) so the host's load hits both alike. Lexical-only (BM25, k=10, no
cache): the cheapest query, where an added read weighs most.

    python benchmarks/citations_query_cost.py ../shared/data/locomo/locomo-dev.json \
        [--size 10000] [--rounds 6]

Each memory cites two lines of one of 100 small files of a project folder made for the run.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
import memls.store.memories as records
from memls import protocol
from memls.engine import Engine


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    print("$ python benchmarks/citations_query_cost.py " + shlex.join(sys.argv[1:]))
    print(f"load average at the start {os.getloadavg()}")
    sample = json.load(open(args.data))[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "project"
        folder.mkdir()
        for k in range(100):
            (folder / f"f{k:03d}.txt").write_text("".join(f"line {k} {i}\n" for i in range(50)))
        items = corpus.project_items(sample, args.size)
        with Engine.open(Path(tmp) / "data", front="bench", vectors=False, cache=False) as engine:
            params = [
                protocol.StoreParams(
                    text=item.text,
                    valid_from=item.valid_from,
                    citations=[
                        protocol.CitationSpec(
                            path=f"f{k % 100:03d}.txt", start_line=1 + k % 40, end_line=2 + k % 40
                        )
                    ],
                    infer_citations=False,
                )
                for k, item in enumerate(items)
            ]
            for start in range(0, len(params), 2000):
                engine.ingest(
                    protocol.IngestParams(project=str(folder), items=params[start : start + 2000])
                )
            questions = [q["question"] for q in corpus.questions(sample)]
            shipped = records.citations_of
            seen: dict[str, list[float]] = {"citations read": [], "citations not read": []}
            for round_ in range(args.rounds):
                order = list(seen) if round_ % 2 else list(reversed(seen))
                for name in order:
                    records.citations_of = (
                        shipped if name == "citations read" else (lambda conn, ids: {})
                    )
                    for question in questions:
                        started = time.perf_counter()
                        engine.query(
                            protocol.QueryParams(
                                query=question, project=str(folder), mode="lexical", k=10
                            )
                        )
                        seen[name].append((time.perf_counter() - started) * 1000)
            records.citations_of = shipped
    print(
        f"{args.size:,} memories, {args.size:,} citations, {len(questions)} questions x "
        f"{args.rounds} rounds a side"
    )
    for name, times in seen.items():
        print(
            f"{name}: p50 {statistics.median(times):.2f} ms, "
            f"p90 {sorted(times)[int(len(times) * 0.9)]:.2f} ms"
        )
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
