"""Agreement between the first and the second, independent labelling of the real pairs.

    python training/pair_agreement.py [--disagreements FILE]

Reads `training/pairs/labels/*.jsonl` (the first labels; `settled.jsonl` there holds the label
each disagreement was settled on, read by the trainer, not here) and
`training/pairs/labels-second/*.jsonl`, and prints the overlap, the raw agreement, Cohen's
kappa over the four labels and over contradiction / not, and the confusion table.
`--disagreements` writes the pairs the two labellings disagree on (ids and both labels), to be
settled against `training/pairs/GUIDE.md`.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent / "pairs"
LABELS = ("contradiction", "restatement", "compatible", "unrelated")


def read(folder: Path) -> dict[str, dict]:
    """Every labelling in the folder but the settlements (`settled.jsonl`)."""
    out: dict[str, dict] = {}
    for f in sorted(folder.glob("*.jsonl")):
        if f.name.startswith("settled"):
            continue
        for line in f.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                out[d["id"]] = d
    return out


def kappa(pairs: list[tuple[str, str]]) -> float:
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    expected = sum(first[k] * second[k] for k in set(first) | set(second)) / (n * n)
    return (observed - expected) / (1 - expected)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--disagreements", type=Path)
    args = ap.parse_args()
    first = read(HERE / "labels")
    second = read(HERE / "labels-second")
    both = sorted(set(first) & set(second))
    pairs = [(first[i]["label"], second[i]["label"]) for i in both]
    binary = [(a == "contradiction", b == "contradiction") for a, b in pairs]
    print(f"first labels {len(first)}, second {len(second)}, both {len(pairs)}")
    print(f"raw agreement {sum(a == b for a, b in pairs) / len(pairs):.3f}")
    print(f"Cohen's kappa, four labels: {kappa(pairs):.3f}")
    print(f"Cohen's kappa, contradiction or not: {kappa(binary):.3f}")
    print("first \\ second " + " ".join(f"{x[:6]:>7}" for x in LABELS))
    table = Counter(pairs)
    for a in LABELS:
        print(f"{a:<15}" + " ".join(f"{table[(a, b)]:>7}" for b in LABELS))
    if args.disagreements:
        with args.disagreements.open("w") as f:
            for i in both:
                if first[i]["label"] != second[i]["label"]:
                    f.write(
                        json.dumps(
                            {
                                "id": i,
                                "first": first[i]["label"],
                                "second": second[i]["label"],
                                "first_note": first[i].get("note", ""),
                                "second_note": second[i].get("note", ""),
                            }
                        )
                        + "\n"
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
