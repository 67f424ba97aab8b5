"""Encode once? The colbert model's mean-pooled content tokens as the dense source instead of
bge, in-sample and untuned (the shipped stage 1 of interactive, and depth none's stage), on
late_cache.py's cache.

    python benchmarks/late_dense_swap.py /tmp/li-cache     # results/late-dense-swap.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import late_tune as lt

INTERACTIVE = {"c": 25, "wb": 0.6, "nb": 4, "ns": 10, "nw": 1.0, "wm": 0.7, "mnorm": "minmax"}
NONE = {"c": 25, "wb": 0.6, "nb": 3, "ns": 10, "nw": 0.5, "wm": 0.0}


def main() -> int:
    folder = sys.argv[1] if len(sys.argv) > 1 else "/tmp/li-cache"
    print(f"# python benchmarks/late_dense_swap.py {folder}")
    convs = lt.load(folder)
    print("| stage | dense source | R@5 / R@10 / R@25 | " + " | ".join(lt.CATS.values()) + " |")
    print("|---|---|---|" + "---|" * len(lt.CATS))
    for name, base in (("interactive", INTERACTIVE), ("none", NONE)):
        for dense in ("bge", "colbert"):
            res = lt.evaluate(convs, {**base, "dense": dense, "h": 0}, ce=False)
            rows = [r for v in res.values() for r in v]
            cats = " | ".join(lt.fmt(lt.mean(rows, c)) for c in lt.CATS)
            print(f"| {name} | {dense} | {lt.fmt(lt.mean(rows))} | {cats} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
