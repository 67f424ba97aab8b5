"""How fast are the packaged models here? Load time, embed throughput, cross-encoder latency;
with `--only pair`, the pair model's: load, the peak RSS it adds, ms a pair read in both orders
(as the detector asks it), file size.

    python benchmarks/models_speed.py [--threads 2] [--texts 500] [--repeat 7] [--rerank-batch 8] \
        > benchmarks/results/models-speed.txt
    python benchmarks/models_speed.py --only pair > benchmarks/results/models-speed-pair.txt

Texts are LoCoMo dialog turns ("speaker: text") from shared/data when present, else made up.
Cross-encoder pairs are a LoCoMo question with turns (or two joined turns) chosen so each pair
is 55-65 tokens. Wall-clock numbers on a shared machine: run it idle, read the best column.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

LOCOMO = Path("/work/shared/data/locomo/locomo-dev.json")


def locomo_turns(path: Path, limit: int) -> tuple[list[str], list[str]]:
    """(turns, questions) from the LoCoMo dev file, or synthetic ones when it is absent."""
    if not path.exists():
        places = ["park", "museum", "lake", "concert", "library"] * (limit // 5 + 1)
        turns = [
            f"Speaker {i % 2}: I went to the {w} on day {i} and told my friend about the {w} trip."
            for i, w in enumerate(places)
        ]
        return turns[:limit], [f"When did the speaker go to the {w}?" for w in places[:5]]
    turns: list[str] = []
    questions: list[str] = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        for key, value in sample["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                turns.extend(f"{t['speaker']}: {t['text']}" for t in value)
        questions.extend(q["question"] for q in sample["qa"] if q.get("category") != 5)
    return turns[:limit], questions


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock ms of each run."""
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def busy_ticks() -> tuple[int, int] | None:
    """(busy, total) CPU ticks of the whole machine from /proc/stat (Linux), else None."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split()[1:9]]
    except (OSError, ValueError):
        return None
    return sum(fields) - fields[3] - fields[4], sum(fields)


def others_share(start: tuple[int, int] | None, own_cpu_s: float) -> str:
    """How much of the machine other processes used during the run (noise warning)."""
    end = busy_ticks()
    if start is None or end is None:
        return "unknown"
    tick = os.sysconf("SC_CLK_TCK")
    busy, total = end[0] - start[0], end[1] - start[1]
    others = max(0.0, busy - own_cpu_s * tick) / max(total, 1)
    return f"{others:.0%} of all cores"


def model_rows(rt, args, turns: list[str], query: str, rss_start: float) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for s in (rt.embedder.warm(), rt.reranker.warm()):  # one after the other: own times
        rows.append((f"{s.name} load", f"{s.load_ms or 0:.0f} ms ({s.state})"))
    rows.append(("peak RSS after loading both", f"{rss_mb():.0f} MB (+{rss_mb() - rss_start:.0f})"))

    runs = timed(lambda: rt.embedder.embed(turns), args.repeat)
    rows.append(
        (
            f"embed {len(turns)} turns (batch {rt.embedder.batch_size})",
            (
                f"{len(turns) / min(runs) * 1000:.0f} texts/s "
                f"(best {min(runs):.0f} ms, median {statistics.median(runs):.0f} ms)"
            ),
        )
    )
    if args.locomo.exists():  # what ingest embeds: the session date and speaker in front
        from locomo import turns as memory_texts

        samples = json.loads(args.locomo.read_text())
        stored = [t for s in samples for _, t, _ in memory_texts(s)][: args.texts]
        runs = timed(lambda: rt.embedder.embed(stored), args.repeat)
        rows.append(
            (
                f"embed {len(stored)} memories as ingested ([date] speaker: text)",
                f"{len(stored) / min(runs) * 1000:.0f} texts/s (best {min(runs):.0f} ms): "
                "the ceiling of fully indexed ingest",
            )
        )
        # the int8 model quantizes activations per batch: a vector depends on its batch-mates
        alone = type(rt)(intra_op_threads=args.threads, embed_batch_size=1)
        with alone:
            single = alone.embedder.embed(stored[:64])
        together = (rt.embedder.embed(stored[:64]) * single).sum(axis=1)
        rows.append(
            (
                f"64 memories in batches of {rt.embedder.batch_size} against one at a time",
                f"cosine min {together.min():.4f}, mean {together.mean():.4f}",
            )
        )
    runs = timed(lambda: rt.embedder.embed_query(query), args.repeat * 10)
    rows.append(("embed one query", f"{statistics.median(runs):.1f} ms median"))

    tokenizer = rt.reranker._lazy.get().pairs
    candidates = turns + [f"{a} {b}" for a, b in itertools.pairwise(turns)]
    lengths = [len(e.ids) for e in tokenizer.encode_batch([(query, c) for c in candidates])]
    chosen = [c for c, n in zip(candidates, lengths, strict=True) if 55 <= n <= 65][:50]
    mean_tokens = statistics.mean(n for n in lengths if 55 <= n <= 65)
    for n in (6, 20, 50):
        pairs = chosen[:n]
        runs = timed(lambda pairs=pairs: rt.reranker.rerank(query, pairs), args.repeat)
        rows.append(
            (
                f"cross-encoder {len(pairs)} pairs (~{mean_tokens:.0f} tokens)",
                (
                    f"{statistics.median(runs):.0f} ms median, {min(runs):.0f} best, "
                    f"{min(runs) / len(pairs):.1f} ms a pair (best)"
                ),
            )
        )
    rows.append(("peak RSS at the end", f"{rss_mb():.0f} MB"))
    return rows


PAIRS = Path(__file__).resolve().parents[1] / "tests" / "data" / "conflict_pairs.jsonl"


def pair_rows(rt, repeat: int, rss_start: float) -> list[tuple[str, str]]:
    """The pair model: each labelled pair read in both orders, one call a pair (as the
    detector does for one candidate) and in one batch of ten candidates."""
    rows: list[tuple[str, str]] = []
    status = rt.pair.warm()
    rows.append(("pair model load", f"{status.load_ms or 0:.0f} ms ({status.state})"))
    rows.append(("peak RSS after loading it", f"{rss_mb():.0f} MB (+{rss_mb() - rss_start:.0f})"))
    size = Path(status.path or "") / "model.onnx"
    rows.append(("pair model file", f"{size.stat().st_size / 1e6:.1f} MB (int8 ONNX)"))
    pairs = [
        (d["new"], d["existing"])
        for d in map(json.loads, PAIRS.read_text(encoding="utf-8").splitlines()[:100])
    ]
    each = sorted(
        t for a, b in pairs for t in timed(lambda a=a, b=b: rt.pair.classify([(a, b), (b, a)]), 1)
    )
    rows.append(
        (
            f"one pair, both orders ({len(pairs)} pairs)",
            f"{statistics.median(each):.1f} ms median, p90 {each[int(0.9 * len(each))]:.1f} ms",
        )
    )
    ten = pairs[:10]
    both = [*ten, *((b, a) for a, b in ten)]
    runs = timed(lambda: rt.pair.classify(both), repeat)
    rows.append(
        (
            "ten candidates, both orders, one call",
            f"{statistics.median(runs):.0f} ms median "
            f"({statistics.median(runs) / 10:.1f} ms a pair)",
        )
    )
    rows.append(("peak RSS at the end", f"{rss_mb():.0f} MB"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    parser.add_argument("--texts", type=int, default=500, help="texts to embed")
    parser.add_argument("--repeat", type=int, default=7, help="runs per measurement")
    parser.add_argument("--rerank-batch", type=int, default=8, help="cross-encoder batch size")
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    parser.add_argument("--only", choices=("all", "pair"), default="all")
    args = parser.parse_args()

    from memls.models import ModelRuntime

    turns, questions = locomo_turns(args.locomo, args.texts)
    query = questions[0]
    rows: list[tuple[str, str]] = []
    rss_start = rss_mb()
    ticks_start, cpu_start = busy_ticks(), time.process_time()

    with ModelRuntime(intra_op_threads=args.threads, rerank_batch_size=args.rerank_batch) as rt:
        if args.only == "pair":
            rows += pair_rows(rt, args.repeat, rss_start)
        else:
            rows += model_rows(rt, args, turns, query, rss_start)
    others = others_share(ticks_start, time.process_time() - cpu_start)
    rows.append(("CPU used by other processes meanwhile", others))

    print(f"$ {shlex.join([Path(sys.executable).name, *sys.argv])}")
    print(
        f"cores {os.cpu_count()}, intra-op threads {args.threads}, "
        f"cross-encoder batch {args.rerank_batch}, "
        f"texts from {args.locomo if args.locomo.exists() else 'synthetic'}"
    )
    width = max(len(k) for k, _ in rows)
    print(f"| {'measure':<{width}} | result |")
    print(f"|{'-' * (width + 2)}|--------|")
    for key, value in rows:
        print(f"| {key:<{width}} | {value} |")


if __name__ == "__main__":
    main()
