"""Contradiction precision and recall of pair models on one source of a data split, read as the
product reads a pair: both orders, their probabilities averaged.

    python training/pair_dev_check.py DATA/dev.jsonl real MODEL_DIR [MODEL_DIR ...]

DATA is training/pair_data.py's output; the source is one of its `source` values (real,
counterparts, snli, generated). Prints, for each model folder (model.onnx, tokenizer.json,
labels.json), the three-way accuracy and P / R of "contradiction" at four thresholds.
"""

import json
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def load(d):
    tok = Tokenizer.from_file(d + "/tokenizer.json")
    tok.enable_truncation(128)
    tok.enable_padding()
    s = ort.InferenceSession(d + "/model.onnx", providers=["CPUExecutionProvider"])
    lab = json.load(open(d + "/labels.json"))["labels"]
    return tok, s, lab


def probs(m, pairs):
    tok, s, lab = m
    out = []
    for i in range(0, len(pairs), 64):
        enc = tok.encode_batch(pairs[i : i + 64])
        f = {
            "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
        }
        logits = s.run(["logits"], f)[0]
        e = np.exp(logits - logits.max(1, keepdims=True))
        p = e / e.sum(1, keepdims=True)
        out.append(
            p[:, [lab.index("contradiction"), lab.index("entailment"), lab.index("neutral")]]
        )
    return np.concatenate(out)


rows = [r for r in map(json.loads, open(sys.argv[1])) if r["source"] == sys.argv[2]]
for d in sys.argv[3:]:
    m = load(d)
    f = probs(m, [(r["p"], r["h"]) for r in rows])
    b = probs(m, [(r["h"], r["p"]) for r in rows])
    p = (f + b) / 2
    y = np.array([r["label"] == "contradiction" for r in rows])
    acc = np.mean(
        [
            ["contradiction", "entailment", "neutral"][i] == r["label"]
            for i, r in zip(p.argmax(1), rows)
        ]
    )
    line = f"{d}: n={len(rows)} pos={y.sum()} acc={acc:.3f}"
    for t in (0.3, 0.5, 0.7, 0.9):
        pr = p[:, 0] >= t
        tp = (pr & y).sum()
        line += f" | t{t}: P={tp / max(pr.sum(), 1):.2f} R={tp / max(y.sum(), 1):.2f}"
    print(line)
