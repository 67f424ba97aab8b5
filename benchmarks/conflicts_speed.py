"""Cost of one `score_pair` without models, before and after issue #12, side by side.

    git archive 9670013 server | tar -x -C /tmp/oldsrc   # the scorer before issue #12
    git archive main server | tar -x -C /tmp/oldsrc      # or before a round of changes
    python benchmarks/conflicts_speed.py --before /tmp/oldsrc/server [--rounds 5]

Each round clears every memoised analysis (text.analyze, frames.*) and scores the dev and the
old 309 pairs once with each scorer, alternating, so both see the same machine load. Prints the
median microseconds per pair of each and their ratio.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = [ROOT / "benchmarks/data/conflict_pairs/dev.jsonl", ROOT / "tests/data/conflict_pairs.jsonl"]


def load_scorer(server: Path):
    for name in [m for m in sys.modules if m == "memls" or m.startswith("memls.")]:
        del sys.modules[name]
    sys.path.insert(0, str(server))
    try:
        scorer = importlib.import_module("memls.conflicts.scorer")
        text = importlib.import_module("memls.conflicts.text")
        try:
            frames = importlib.import_module("memls.conflicts.frames")
        except ImportError:
            frames = None
    finally:
        sys.path.remove(str(server))
    return scorer.score_pair, text, frames


def clear(text, frames) -> None:
    text.analyze.cache_clear()
    if hasattr(text.stem, "cache_clear"):
        text.stem.cache_clear()
    if frames is not None:
        frames.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("$ python benchmarks/conflicts_speed.py " + shlex.join(sys.argv[1:]))
    rows = [json.loads(line) for path in DATA for line in path.read_text().splitlines() if line]
    before = load_scorer(args.before)
    after = load_scorer(ROOT / "server")
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.rounds):
        for name, (score, text, frames) in (("before", before), ("after", after)):
            clear(text, frames)
            started = time.perf_counter()
            for row in rows:
                score(row["new"], row["existing"])
            times[name].append((time.perf_counter() - started) / len(rows) * 1e6)
    b, a = statistics.median(times["before"]), statistics.median(times["after"])
    print(f"{len(rows)} pairs x {args.rounds} rounds, every cache cleared before each pass")
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} (2 shared cores)")
    print(f"before (--before tree): {b:.0f} µs per pair (median of rounds)")
    print(f"after (this tree):      {a:.0f} µs per pair (median of rounds); ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
