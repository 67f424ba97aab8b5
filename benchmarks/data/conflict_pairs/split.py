"""Build dev.jsonl / test.jsonl from pairs.tsv: a stratified, seeded half split.

    python benchmarks/data/conflict_pairs/split.py

pairs.tsv columns: label (true|false), category, new, existing. Each (label, category) stratum
is shuffled with SEED and split in half (an odd one goes to dev), so both halves hold every
kind of pair in the same proportion.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

SEED = 20261130
HERE = Path(__file__).resolve().parent


def main() -> None:
    strata: dict[tuple[bool, str], list[dict[str, object]]] = defaultdict(list)
    for n, line in enumerate((HERE / "pairs.tsv").read_text(encoding="utf-8").splitlines(), 1):
        label, category, new, existing = line.split("\t")
        if label not in ("true", "false"):
            raise SystemExit(f"pairs.tsv:{n}: label must be true or false, not {label!r}")
        contradiction = label == "true"
        strata[(contradiction, category)].append(
            {
                "id": f"p{n:03d}",
                "new": new,
                "existing": existing,
                "contradiction": contradiction,
                "category": f"{'contra' if contradiction else 'compat'}/{category}",
            }
        )
    rng = random.Random(SEED)
    dev: list[dict[str, object]] = []
    test: list[dict[str, object]] = []
    for key in sorted(strata):
        rows = strata[key]
        rng.shuffle(rows)
        half = (len(rows) + 1) // 2
        dev += rows[:half]
        test += rows[half:]
    for name, rows in (("dev", dev), ("test", test)):
        rows.sort(key=lambda r: str(r["id"]))
        with open(HERE / f"{name}.jsonl", "w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        pos = sum(1 for r in rows if r["contradiction"])
        print(f"{name}: {len(rows)} pairs, {pos} contradicting, {len(rows) - pos} compatible")


if __name__ == "__main__":
    main()
