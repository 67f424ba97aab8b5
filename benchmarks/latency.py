"""Speed and memory of the real engine at 1k / 10k / 100k memories (LoCoMo turns as memories).

Prints: acknowledged store p50/p95, bulk ingest (memories/s fully indexed), query p50/p95 for
the default configuration, the interactive setting, and without re-ranking, first query after
start (model load included) and peak RSS. Each size runs in a fresh process.

    python benchmarks/latency.py ../shared/data/locomo/locomo-dev.json --sizes 1000,10000
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent))

from locomo import turns

PROJECT = "bench"
QUERIES = 200


def corpus(samples: list[dict], size: int) -> list[tuple[str, str | None]]:
    base = [(text, when) for s in samples for _, text, when in turns(s)]
    out = []
    round_ = 0
    while len(out) < size:
        for text, when in base:
            out.append((text if round_ == 0 else f"{text} (retold {round_})", when))
            if len(out) == size:
                break
        round_ += 1
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def worker(path: str, size: int, data_dir: str) -> dict:
    from memls import protocol as p
    from memls.engine import Engine

    samples = json.loads(Path(path).read_text())
    questions = [qa["question"] for s in samples for qa in s["qa"]][:QUERIES]
    items = corpus(samples, size)
    result: dict = {"size": size}
    with Engine.open(data_dir, front="bench") as engine:
        started = time.perf_counter()
        acks = []
        for text, when in items:
            t0 = time.perf_counter()
            engine.store(p.StoreParams(text=text, project=PROJECT, valid_from=when))
            acks.append((time.perf_counter() - t0) * 1000)
        acked = time.perf_counter() - started
        assert engine.flush(timeout=7200)
        indexed = time.perf_counter() - started
        result["ingest_per_s"] = round(size / indexed, 1)
        result["ack_per_s"] = round(size / acked, 1)
        # acknowledged store latency on the loaded store (index worker idle)
        lat = []
        for i in range(200):
            t0 = time.perf_counter()
            engine.store(
                p.StoreParams(text=f"latency probe {i}: deploys run on tuesdays", project=PROJECT)
            )
            lat.append((time.perf_counter() - t0) * 1000)
            engine.flush()
        result["store_p50_ms"], result["store_p95_ms"] = pct(lat, 50), pct(lat, 95)
        for name, extra in (
            ("default", {}),
            ("interactive", {"mode": "interactive"}),
            ("no_rerank", {"rerank": False}),
        ):
            engine.query(p.QueryParams(query="warm up", project=PROJECT, **extra))
            lat = []
            for q in questions:
                t0 = time.perf_counter()
                engine.query(p.QueryParams(query=q, project=PROJECT, **extra))
                lat.append((time.perf_counter() - t0) * 1000)
            result[f"query_{name}_p50_ms"] = pct(lat, 50)
            result[f"query_{name}_p95_ms"] = pct(lat, 95)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


def first_query(data_dir: str) -> float:
    """A fresh process opens the store as the daemon does (owner, serving its socket, loading
    Chroma and both models in the background) and answers one query at once."""
    code = (
        "import time; t=time.perf_counter();"
        "from memls.daemon import open_engine; from memls import protocol as p;"
        f"e=open_engine({data_dir!r}, front='bench', serve=True);"
        f"e.query(p.QueryParams(query='when did she go to the support group',"
        f" project={PROJECT!r}));"
        "print((time.perf_counter()-t)*1000); e.close()"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(HERE.parents[1] / "server"), "PATH": "/usr/bin:/bin"},
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--json", dest="out")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.path, args.worker, args.data_dir)))
        return 0
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                [sys.executable, str(HERE), args.path, "--worker", str(size), "--data-dir", tmp],
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            row["first_query_ms"] = round(statistics.median(first_query(tmp) for _ in range(3)), 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
    cols = [
        ("size", "memories"),
        ("store_p50_ms", "store p50"),
        ("store_p95_ms", "store p95"),
        ("ingest_per_s", "ingest/s"),
        ("query_default_p50_ms", "query p50"),
        ("query_default_p95_ms", "query p95"),
        ("query_interactive_p50_ms", "interactive p50"),
        ("query_interactive_p95_ms", "interactive p95"),
        ("query_no_rerank_p50_ms", "no-rerank p50"),
        ("query_no_rerank_p95_ms", "no-rerank p95"),
        ("first_query_ms", "first query"),
        ("peak_rss_mb", "peak RSS MB"),
    ]
    print("\n| " + " | ".join(c[1] for c in cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        print(
            "| "
            + " | ".join(
                f"{row[c[0]]:.1f}" if isinstance(row[c[0]], float) else str(row[c[0]]) for c in cols
            )
            + " |"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
