"""One hash of the scorer's verdicts over every labelled pair (both orders, four similarity
settings) and 8,000 latency-corpus pairs, and the time it took: a change meant to make the
scorer faster must leave both hashes as they were. Set PYTHONHASHSEED=0: triggers found as sets
come out in hash order.

    PYTHONHASHSEED=0 python benchmarks/scorer_verdicts.py [/path/to/checkout] \
        >> benchmarks/results/scorer-verdicts.txt

Prints (stdout) the command, then per set the number of verdicts, their hash and the seconds it
took. Run it on the code before and after a change, alternating, and compare the hashes.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1]
sys.path.insert(0, str(ROOT / "server"))
from memls.conflicts.scorer import score_pair  # the checkout's, before corpus adds our own

sys.path.insert(0, str(HERE.parent))
from corpus import project_items

assert Path(sys.modules["memls"].__file__).is_relative_to(ROOT.resolve())


def digest(verdicts: list[str]) -> str:
    return hashlib.sha256("\n".join(verdicts).encode()).hexdigest()[:16]


def main() -> int:
    print(f"# PYTHONHASHSEED=0 python benchmarks/scorer_verdicts.py {' '.join(sys.argv[1:])}")
    files = sorted((HERE.parent / "data" / "conflict_pairs").glob("*.jsonl"))
    files.append(HERE.parents[1] / "tests" / "data" / "conflict_pairs.jsonl")
    out, started = [], time.perf_counter()
    for f in files:
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            d = json.loads(line)
            a, b = d.get("new") or d.get("a"), d.get("existing") or d.get("b")
            for sim in (None, 0.55, 0.7, 0.9):
                out.append(repr(score_pair(a, b, similarity=sim)))
                out.append(repr(score_pair(b, a, similarity=sim)))
    print(f"labelled: {len(out)} verdicts, {digest(out)}, {time.perf_counter() - started:.2f} s")
    sample = json.loads((HERE.parents[2] / "shared/data/locomo/locomo-dev.json").read_text())[0]
    items = [it.text for it in project_items(sample, 10000)]
    rng = random.Random(7)
    out, started = [], time.perf_counter()
    for _ in range(4000):
        a, b = items[rng.randrange(len(items))], items[rng.randrange(len(items))]
        out.append(repr(score_pair(a, b, similarity=0.8)))
    for i in range(4000):
        out.append(repr(score_pair(items[i], items[i + 1], similarity=0.75)))
    print(f"corpus: {len(out)} verdicts, {digest(out)}, {time.perf_counter() - started:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
