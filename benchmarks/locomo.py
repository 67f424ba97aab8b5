"""LoCoMo retrieval through the real engine: recall@5/10/25 of the evidence turns.

Each conversation is a project, each dialog turn a memory (prefixed with its session date, with
the image caption when there is one), each question a query in that project.

    python benchmarks/locomo.py ../shared/data/locomo/locomo-dev.json \
        --methods bm25,vector,none,interactive,default \
        --json benchmarks/results/locomo-dev-recall.json > benchmarks/results/locomo-dev-recall.txt
    python benchmarks/locomo.py PATH --sweep      # re-rank depth / cut / lift trade-off table

The report (stdout) gives R@5/10/25 and p50/p95 per method, per category below it; --json
writes the figures, and beside it `.full.json` with every category (5 included).

Methods: bm25, vector (one source alone); none, interactive, default (the depths: fused
BM25 + vectors; + late interaction; + the cross-encoder on the uncertain head); hybrid and
hybrid+rerank (the configuration's own rerank switch, as before depths).
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from memls import protocol as p
from memls.engine import Engine
from memls.retrieval.pipeline import (
    RetrievalConfig,
    Retriever,
)

KS = (5, 10, 25)
CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def _retriever(engine, config=None):
    """The engine's own retrieval collaborators, as a query gets them."""
    return Retriever(engine.storage.search, engine.index, engine.models, config or engine.retrieval)


def turns(sample: dict):
    conv = sample["conversation"]
    n = 1
    while f"session_{n}" in conv:
        when = conv.get(f"session_{n}_date_time", "")
        for turn in conv[f"session_{n}"]:
            text = f"[{when}] {turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            yield turn["dia_id"], text, _date(when)
        n += 1


def source(project: str, dia_id: str) -> tuple[str, str]:
    """A turn's place: its session is the source, its number the range ("D3:7" -> 7-7)."""
    session, _, number = dia_id.strip().partition(":")
    return f"locomo://{project}/{session}", f"{number}-{number}"


def dia_of(source_uri: str, source_range: str) -> str:
    return f"{source_uri.rsplit('/', 1)[1]}:{source_range.split('-')[0]}"


def _date(when: str) -> str | None:
    try:
        return datetime.strptime(when, "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        return None


def ingest(engine: Engine, samples: list[dict]) -> tuple[dict[str, dict[str, set[str]]], float]:
    """Store every turn; returns project -> memory id -> dia ids, and ingest seconds."""
    started = time.perf_counter()
    owners: dict[str, dict[str, set[str]]] = {}
    for sample in samples:
        project = sample["sample_id"]
        owners[project] = defaultdict(set)
        for dia_id, text, when in turns(sample):
            uri, lines = source(project, dia_id)
            r = engine.store(
                p.StoreParams(
                    text=text, project=project, valid_from=when, source_uri=uri, source_range=lines
                )
            )
            owners[project][r.id].add(dia_id.strip())
    engine.flush(timeout=3600)
    return owners, time.perf_counter() - started


def reuse(engine: Engine, samples: list[dict]):
    """The owners map of a store ingested by an earlier run (None when it is empty)."""
    owners: dict[str, dict[str, set[str]]] = {}
    for sample in samples:
        project = sample["sample_id"]
        rows = engine.db.read(
            "SELECT id, source_uri, source_range FROM memories WHERE project = ?", (project,)
        )
        if not rows:
            return None, 0.0
        owners[project] = defaultdict(set)
        for row in rows:
            owners[project][row["id"]].add(dia_of(row["source_uri"], row["source_range"]))
    return owners, 0.0


def params_for(depth: str, **kw):
    """QueryParams at a depth (none | interactive | default): the wire field when the protocol
    has it, else the same field on a subclass (the pipeline reads it with getattr)."""
    if "depth" in p.QueryParams.__struct_fields__:
        return p.QueryParams(depth=depth, **kw)

    class DepthParams(p.QueryParams, kw_only=True):
        depth: str | None = None

    return DepthParams(depth=depth, **kw)


def method_ids(
    engine: Engine, method: str, project: str, question: str, k: int, config: RetrievalConfig
) -> list[str]:
    if method in ("bm25", "vector"):
        seen = engine.visibility(project, valid_at=None, as_of=None, include_user=False)
        found = (
            _retriever(engine).lexical(seen, question, k)
            if method == "bm25"
            else _retriever(engine, config).vector(seen, question, k)
        )
        return sorted(found, key=found.get, reverse=True)[:k]
    if method in ("none", "interactive", "default"):
        params = params_for(method, query=question, project=project, k=k)
    else:
        params = p.QueryParams(query=question, project=project, k=k, rerank=(method != "hybrid"))
    saved = engine.retrieval
    engine.retrieval = config
    try:
        return [h.id for h in engine.query(params).results]
    finally:
        engine.retrieval = saved


def evaluate(engine, samples, owners, method, config, kmax=25, cats=(1, 2, 3, 4, 5)):
    per_cat: dict[int, list[dict[int, float]]] = defaultdict(list)
    latencies = []
    for sample in samples:
        project = sample["sample_id"]
        for qa in sample["qa"]:
            evidence = {e.strip() for e in qa.get("evidence", []) if e.strip()}
            if not evidence or qa["category"] not in cats:
                continue
            t0 = time.perf_counter()
            ids = method_ids(engine, method, project, qa["question"], kmax, config)
            latencies.append((time.perf_counter() - t0) * 1000)
            recall = {}
            for k in KS:
                got = (
                    set().union(*(owners[project].get(i, set()) for i in ids[:k])) if ids else set()
                )
                recall[k] = len(evidence & got) / len(evidence)
            per_cat[qa["category"]].append(recall)
    return per_cat, latencies


def summarise(per_cat, cats):
    rows = [r for c in cats for r in per_cat.get(c, [])]
    return {
        f"recall@{k}": round(statistics.fmean(r[k] for r in rows), 4) if rows else None for k in KS
    } | {"questions": len(rows)}


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--json", dest="out")
    parser.add_argument("--methods", default="bm25,vector,none,interactive,default")
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="re-rank depth and mode trade-off instead of the method table",
    )
    parser.add_argument("--conversations", type=int, default=0, help="only the first N")
    parser.add_argument(
        "--store",
        help="keep the ingested store in this directory and reuse it on the next run (sweeps)",
    )
    parser.add_argument(
        "--rerank-max-length",
        type=int,
        default=None,
        help="cross-encoder pair length in tokens (default: the runtime's)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a RetrievalConfig field, e.g. --set rerank_depth=40",
    )
    args = parser.parse_args()
    samples = json.loads(Path(args.path).read_text())
    if args.conversations:
        samples = samples[: args.conversations]
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    base = RetrievalConfig()
    for item in args.set:
        field, _, value = item.partition("=")
        kind = type(getattr(base, field))
        base = replace(
            base, **{field: (value.lower() in ("1", "true")) if kind is bool else kind(value)}
        )
    models = None
    if args.rerank_max_length:
        from memls.models import ModelRuntime

        models = ModelRuntime(rerank_max_length=args.rerank_max_length)
    with (
        tempfile.TemporaryDirectory() as tmp,
        Engine.open(
            args.store or tmp, front="bench", retrieval=base, models=models, cache=False
        ) as engine,
    ):
        owners, seconds = reuse(engine, samples) if args.store else (None, 0.0)
        if not owners:
            owners, seconds = ingest(engine, samples)
        n_turns = sum(len(v) for v in owners.values())
        print(f"# {command}")
        print(
            f"# {len(samples)} conversations, {n_turns} memories"
            + (
                f" indexed in {seconds:.1f} s ({n_turns / seconds:.0f}/s)"
                if seconds
                else " (reused store)"
            )
        )
        if base != RetrievalConfig():
            print(f"# config: {base}")
        engine.query(p.QueryParams(query="warm up", project=samples[0]["sample_id"]))
        if args.sweep:
            return sweep(engine, samples, owners, base)
        report = {}
        print("\n| method | R@5 | R@10 | R@25 | p50 ms | p95 ms |  (categories 1-4)")
        print("|---|---|---|---|---|---|")
        for method in args.methods.split(","):
            per_cat, lat = evaluate(engine, samples, owners, method, base)
            main_ = summarise(per_cat, (1, 2, 3, 4))
            report[method] = {k: v for k, v in main_.items() if k.startswith("recall")}
            report[method]["by_category"] = {
                CATEGORY[c]: summarise(per_cat, (c,)) for c in sorted(per_cat)
            }
            report[method]["all_categories"] = summarise(per_cat, (1, 2, 3, 4, 5))
            report[method]["latency_ms"] = {
                "p50": round(pct(lat, 50), 2),
                "p95": round(pct(lat, 95), 2),
            }
            print(
                f"| {method} | {main_['recall@5']:.3f} | {main_['recall@10']:.3f} | "
                f"{main_['recall@25']:.3f} | {pct(lat, 50):.1f} | {pct(lat, 95):.1f} |"
            )
        print("\nPer category (R@5 / R@10 / R@25):")
        for method, data in report.items():
            cells = [
                f"{name}: " + " / ".join(f"{v[f'recall@{k}']:.3f}" for k in KS)
                for name, v in data["by_category"].items()
            ]
            all_ = data["all_categories"]
            cells.append("all: " + " / ".join(f"{all_[f'recall@{k}']:.3f}" for k in KS))
            print(f"- {method}: " + "; ".join(cells))
        if args.out:
            Path(args.out).write_text(
                json.dumps(
                    {
                        m: {k: v for k, v in d.items() if k.startswith("recall")}
                        for m, d in report.items()
                    },
                    indent=2,
                )
                + "\n"
            )
            Path(args.out).with_suffix(".full.json").write_text(
                json.dumps(
                    {
                        "command": command,
                        "memories": n_turns,
                        "ingest_s": round(seconds, 1),
                        "methods": report,
                    },
                    indent=2,
                )
                + "\n"
            )
    return 0


SWEEP = (  # (max depth, relative cut, lift seeds): the re-rank trade-off table
    (0, 0.0, 0),
    (6, 0.3, 5),
    (10, 0.3, 5),
    (20, 0.3, 5),
    (30, 0.3, 5),
    (50, 0.0, 0),
    (50, 0.3, 0),
)


def sweep(engine, samples, owners, base: RetrievalConfig) -> int:
    print("\n| max depth | relative cut | lift | R@5 | R@10 | R@25 | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for depth, relative, lift in SWEEP:
        config = replace(
            base, rerank_depth=depth, rerank_relative=relative, lift_seeds=lift, rerank=depth > 0
        )
        per_cat, lat = evaluate(engine, samples, owners, "hybrid+rerank", config, cats=(1, 2, 3, 4))
        s = summarise(per_cat, (1, 2, 3, 4))
        print(
            f"| {depth} | {relative} | {lift} | {s['recall@5']:.3f} | {s['recall@10']:.3f} | "
            f"{s['recall@25']:.3f} | {pct(lat, 50):.1f} | {pct(lat, 95):.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
