"""Where a query's time goes at N memories: BM25, the query embedding, the vector source
(Chroma + the SQL filters), the final fetch through the filters, the whole query without and
with re-ranking. LoCoMo turns as memories, as in latency.py.

    python benchmarks/query_parts.py ../shared/data/locomo/locomo-dev.json --size 10000 \
        [--store DIR]

With --store, an existing store of the same corpus is reused (else one is built in a temp dir).
Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent))

from latency import PROJECT, corpus
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
    samples = json.loads(Path(args.path).read_text())
    questions = [qa["question"] for s in samples for qa in s["qa"]][: args.queries]
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
        have = engine.db.read("SELECT count(*) FROM memories WHERE project = ?", (PROJECT,))[0][0]
        if have == 0:
            for text, when in corpus(samples, args.size):
                engine.store(p.StoreParams(text=text, project=PROJECT, valid_from=when))
            assert engine.flush(timeout=7200)
            have = args.size
        engine.query(p.QueryParams(query="warm up", project=PROJECT))
        for q in questions:
            seen = engine.visibility(PROJECT, valid_at=None, as_of=None, include_user=False)
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
                "final fetch through the filters", lambda: engine.storage.search.visible(seen, ids)
            )
            timed(
                "query, no re-rank",
                lambda: engine.query(p.QueryParams(query=q, project=PROJECT, rerank=False)),
            )
            timed(
                "query, interactive",
                lambda: engine.query(p.QueryParams(query=q, project=PROJECT, mode="interactive")),
            )
            timed("query, default", lambda: engine.query(p.QueryParams(query=q, project=PROJECT)))
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    print(f"# {have} memories, {len(questions)} questions; ms\n")
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
