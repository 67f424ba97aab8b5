"""Where a query's time goes at N memories: BM25, the query embedding, the vector source
(Chroma + the SQL filters), the final fetch through the filters, the whole query at each
depth. The latency corpus of latency.py (the first dev conversation and generated project
memories, `corpus.project_items`).

    python benchmarks/query_parts.py ../shared/data/locomo/locomo-dev.json --size 10000 \
        [--store DIR]

With --store, an existing store of the same corpus is reused (else one is built in a temp dir).
Run it on an idle machine. The table goes to stdout (benchmarks/results/query-parts.txt).
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

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent))

from corpus import project_items, questions
from latency import DEPTHS, params_for
from memls import protocol as p
from memls.engine import Engine
from memls.retrieval.pipeline import Retriever


def _retriever(engine):
    """The engine's own retrieval collaborators, as a query gets them."""
    return Retriever(engine.storage.search, engine.index, engine.models, engine.retrieval)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--store")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    sample = json.loads(Path(args.path).read_text())[0]
    project = sample["sample_id"]
    asked = [qa["question"] for qa in questions(sample)][: args.queries]
    times: dict[str, list[float]] = {}

    def timed(label, fn):
        start = time.perf_counter()
        out = fn()
        times.setdefault(label, []).append((time.perf_counter() - start) * 1000)
        return out

    with (
        tempfile.TemporaryDirectory() as tmp,
        Engine.open(args.store or tmp, front="bench", cache=False) as engine,
    ):
        have = engine.db.read("SELECT count(*) FROM memories WHERE project = ?", (project,))[0][0]
        if have == 0:
            for item in project_items(sample, args.size):
                engine.store(item.params(project))
            assert engine.flush(timeout=7200)
            have = args.size
        for depth in DEPTHS:
            engine.query(params_for(p, depth, query="warm up", project=project))
        for q in asked:
            seen = engine.visibility(project, valid_at=None, as_of=None, include_user=False)
            lex = timed(
                "BM25 (FTS5, filters in SQL)", lambda: _retriever(engine).lexical(seen, q, 50)
            )
            qv = timed("query embedding", lambda: engine.models.embedder.embed([q])[0])
            vec = timed(
                "vector source (Chroma + SQL filters)",
                lambda: _retriever(engine).nearest(seen, qv, 50),
            )
            ids = list(set(lex) | set(vec))
            timed(
                "final gate (records through the filters)",
                lambda: engine.storage.search.visible(seen, ids, relations=False),
            )
            for depth in DEPTHS:
                timed(
                    f"query, depth {depth}",
                    lambda: engine.query(params_for(p, depth, query=q, project=project, k=25)),
                )
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    print(f"# {have} memories, {len(asked)} questions; ms; load average {os.getloadavg()}\n")
    print("| part | p50 | p95 |")
    print("|---|---|---|")
    for label, values in times.items():
        values.sort()
        print(
            f"| {label} | {statistics.median(values):.2f} | "
            f"{values[int(0.95 * (len(values) - 1))]:.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
