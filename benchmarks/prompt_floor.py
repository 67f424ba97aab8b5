"""The relevance floor of prompt-time memories (memory/context with a prompt, standing
false: Claude Code's UserPromptSubmit hook): which signal, which floor, and what it costs.

The labelled set `benchmarks/data/prompt-relevance.json` (a project's memory store and
coding-agent prompts, each judged against every memory; some prompts nothing answers) is
split into `tune` and `test` halves in the file itself, assigned before any score existed.
Every prompt is asked as the briefing asks it (the top k=8 hits of memory/query at depth
`interactive`) with `explain`, which carries each hit's absolute figures: its BM25 score and
its embedding cosine. The same hits' cross-encoder logits come from the same query with
`rerankDepth: 8` (every hit re-scored). BM25's IDF grows with the store, so it is also taken
over ln(the rows of the index) ("bm25n"), which the engine's floor uses. For each signal the
floor is the value that maximises F1 of "a memory given is relevant" on `tune`; the figures
reported are `test`'s.
The fused score (min-maxed over the batch) is there for comparison: relative, so no floor
on it can tell a prompt that nothing answers.

`--distractors N` adds N generated memories of other services (`corpus.py`, as in
`benchmarks/hooks.py`), each judged not relevant to every prompt: BM25's IDF grows with the
store, so this shows whether the floor chosen on the project's own store holds in a bigger one.

Costs: the engine's time of the prompt's query as the briefing runs it, with explain (the
cosine and BM25 are figures it already has) and with the cross-encoder over 3 and 8 hits.

    python benchmarks/prompt_floor.py [--distractors 0] [--out benchmarks/results/prompt-floor.txt]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import distractors
from memls import protocol
from memls.daemon import open_engine
from memls.engine.briefing import FLOOR_BM25, FLOOR_COSINE

LOCOMO = Path("/work/shared/data/locomo/locomo-dev.json")

DATA = ROOT / "benchmarks" / "data" / "prompt-relevance.json"
K = 8  # the hits the briefing looks at (ContextParams.k)
SIGNALS = ("cosine", "bm25", "bm25n", "logit", "fused")

Row = dict  # one prompt: id, split, relevant (set), hits: [(memory label, {signal: value})]


def ask(engine, project: str, label_of: dict[str, str], prompt: str) -> tuple[list, dict]:
    """The prompt's hits with their figures, and the engine's time of each way of asking."""
    took: dict[str, float] = {}
    figures: dict[str, dict[str, float | None]] = {}
    for name, extra in (
        ("interactive + explain", {}),
        ("+ cross-encoder, 3 hits", {"depth": "default", "rerank_depth": 3}),
        ("+ cross-encoder, 8 hits", {"depth": "default", "rerank_depth": K}),
    ):
        params = {"depth": "interactive", **extra}
        began = time.perf_counter()
        result = engine.query(
            protocol.QueryParams(query=prompt, project=project, k=K, explain=True, **params)
        )
        took[name] = (time.perf_counter() - began) * 1000
        for hit in result.results:
            e = hit.explain
            seen = figures.setdefault(hit.id, {"fused": e.fused, "cosine": e.vector})
            seen["bm25"] = e.bm25 or 0.0
            if name.endswith("8 hits"):
                seen["logit"] = e.rerank
        if name == "interactive + explain":
            order = [hit.id for hit in result.results]
    hits = [(label_of[i], figures[i]) for i in order]
    return hits, took


FLOORS: dict[str, float] = {}


def passes(f: dict, signal: str, floor) -> bool:
    if floor is None:
        return True
    if signal == "either":
        return (f.get("cosine") or 0.0) >= floor[0] or (f.get("bm25n") or 0.0) >= floor[1]
    return f.get(signal) is not None and f[signal] >= floor


def choose_either(rows: list[Row]) -> tuple[float, float]:
    """Both floors of "cosine or BM25 / ln(rows)" on a grid, by F1 on these rows (ties: less
    given)."""
    grid = [
        (round(a, 4), round(b, 4))
        for a in [0.6 + 0.01 * i for i in range(31)]
        for b in [0.5 + 0.05 * i for i in range(51)]
    ]
    return max(
        grid,
        key=lambda t: (
            round(measure(rows, "either", t)["f1"], 9),
            -measure(rows, "either", t)["given"],
        ),
    )


def measure(rows: list[Row], signal: str, floor) -> dict[str, float]:
    """Keep a hit when its signal reaches the floor (None: every hit, as before)."""
    given = relevant_given = relevant = 0
    empty_ok = empty_total = answered_ok = answered_total = 0
    for row in rows:
        kept = [m for m, f in row["hits"] if passes(f, signal, floor)]
        given += len(kept)
        relevant_given += sum(m in row["relevant"] for m in kept)
        relevant += len(row["relevant"])
        if row["relevant"]:
            answered_total += 1
            answered_ok += any(m in row["relevant"] for m in kept)
        else:
            empty_total += 1
            empty_ok += not kept
    p = relevant_given / given if given else 1.0
    r = relevant_given / relevant if relevant else 1.0
    return {
        "given": given,
        "precision": p,
        "recall": r,
        "f1": 2 * p * r / (p + r) if p + r else 0.0,
        "empty": empty_ok / empty_total if empty_total else 1.0,
        "answered": answered_ok / answered_total if answered_total else 1.0,
    }


def choose(rows: list[Row], signal: str) -> float:
    """The floor with the best F1 on these rows (midpoints between observed values; ties:
    the higher floor, which gives less)."""
    values = sorted(
        {f[signal] for row in rows for _, f in row["hits"] if f.get(signal) is not None}
    )
    cuts = [values[0] - 1e-6] + [(a + b) / 2 for a, b in zip(values, values[1:])]
    cuts.append(values[-1] + 1e-6)
    best = max(cuts, key=lambda t: (round(measure(rows, signal, t)["f1"], 9), t))
    return round(best, 4)


def line(name: str, m: dict[str, float]) -> str:
    return (
        f"{name:<26} given {m['given']:>3}  precision {m['precision']:.3f}  recall "
        f"{m['recall']:.3f}  F1 {m['f1']:.3f}  nothing-answers prompts given nothing "
        f"{m['empty']:.3f}  answerable prompts given >=1 relevant {m['answered']:.3f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--distractors", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/prompt-floor.txt")
    args = ap.parse_args()
    out = ["$ " + shlex.join(["python", "benchmarks/prompt_floor.py", *sys.argv[1:]])]

    def say(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    data = json.loads(DATA.read_text())
    say(f"host: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    rows: list[Row] = []
    took: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        project = str(Path(tmp) / "shop")
        Path(project).mkdir()
        with open_engine(Path(tmp) / "data", front="benchmark") as engine:
            items = [
                protocol.StoreParams(text=m["text"], type=m["type"], project=project)
                for m in data["memories"]
            ]
            if args.distractors:
                sample = json.loads(LOCOMO.read_text())[0]
                items += [
                    protocol.StoreParams(text=i.text, type="note", project=project)
                    for i in distractors(sample, args.distractors)
                ]
            stored = engine.ingest(protocol.IngestParams(items=items, project=project))
            engine.flush()
            listed = engine.list(protocol.ListParams(project=project, limit=10000)).memories
            by_text = {m["text"]: m["id"] for m in data["memories"]}
            label_of = {m.id: by_text.get(m.content, "other") for m in listed}
            say(
                f"store: {len(label_of)} memories ({stored.stored} stored); prompts: "
                f"{len(data['prompts'])}, judged against every memory "
                f"({len(label_of) * len(data['prompts'])} judgements, "
                f"{sum(len(p['relevant']) for p in data['prompts'])} relevant)"
            )
            engine.query(protocol.QueryParams(query="warm up", project=project, k=K))
            for p in data["prompts"]:
                hits, times = ask(engine, project, label_of, p["prompt"])
                for name, ms in times.items():
                    took.setdefault(name, []).append(ms)
                for _, f in hits:  # BM25's IDF grows as ln(the rows of the index)
                    f["bm25n"] = f["bm25"] / math.log(len(label_of))
                rows.append({**p, "relevant": set(p["relevant"]), "hits": hits})
    tune = [r for r in rows if r["split"] == "tune"]
    test = [r for r in rows if r["split"] == "test"]
    for half, name in ((tune, "tune"), (test, "test")):
        say(
            f"{name}: {len(half)} prompts, {sum(not r['relevant'] for r in half)} that nothing "
            f"answers, {sum(len(r['relevant']) for r in half)} relevant judgements"
        )
    say()
    say(f"no floor (every one of the top {K} hits, as before):")
    say(line("  tune", measure(tune, "cosine", None)))
    say(line("  test", measure(test, "cosine", None)))
    for signal in SIGNALS:
        floor = choose(tune, signal)
        FLOORS[signal] = floor
        say()
        say(f"{signal} >= {floor} (chosen on tune):")
        say(line("  tune", measure(tune, signal, floor)))
        say(line("  test (held out)", measure(test, signal, floor)))
    say()
    say(
        f"the shipped floor, cosine >= {FLOOR_COSINE} or bm25 / ln(rows) >= {FLOOR_BM25} "
        "(engine/briefing.py):"
    )
    say(line("  tune", measure(tune, "either", (FLOOR_COSINE, FLOOR_BM25))))
    say(line("  test (held out)", measure(test, "either", (FLOOR_COSINE, FLOOR_BM25))))
    a, b = choose_either(tune)
    say()
    say(f"cosine >= {a} or bm25 / ln(rows) >= {b} (both chosen on tune):")
    say(line("  tune", measure(tune, "either", (a, b))))
    say(line("  test (held out)", measure(test, "either", (a, b))))
    say()
    say("engine time of the prompt's query (ms; the briefing's own work comes on top):")
    for name, times in took.items():
        q = statistics.quantiles(times, n=20)
        say(f"  {name:<26} p50 {statistics.median(times):6.1f}   p95 {q[18]:6.1f}")
    say()
    say("per prompt (test half): the hits as label:cosine/logit, * = judged relevant")
    for r in test:
        shown = " ".join(
            f"{'*' if m in r['relevant'] else ''}{m}:"
            f"{f['cosine'] or 0:.3f}/{f.get('logit') or 0:.1f}"
            for m, f in r["hits"]
        )
        say(f"  {r['id']} {r['prompt'][:60]!r}: {shown}")
    args.out.write_text("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
