"""ColBERT's query and document markers ([unused0] / [unused1] after [CLS]) and [MASK] query
augmentation (padded to 32 tokens, attended or not) with the packaged answerai-colbert-small
ONNX file (its 384-d token states; the trained projection is not in it): MaxSim alone over
every turn of each dev conversation, categories 1-4, against plain text.

    python benchmarks/late_markers.py ../shared/data/locomo/locomo-dev.json
    # results/late-markers.txt
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent))

from locomo import turns
from memls.models.late import _content_tokens
from memls.models.locate import packaged_dir
from memls.models.session import open_session, open_tokenizer, pad_id

KS = (5, 10, 25)


class Encoder:
    def __init__(self) -> None:
        folder = packaged_dir("late")
        self.tok = open_tokenizer(folder, 180)
        self.session = open_session(folder, 2)
        self.names = [i.name for i in self.session.get_inputs()]
        self.keep = _content_tokens(self.tok)
        vocab = self.tok.get_vocab(with_added_tokens=True)
        self.q, self.d, self.mask = vocab["[unused0]"], vocab["[unused1]"], vocab["[MASK]"]
        self.pad = pad_id(self.tok)

    def _run(self, ids_list: list[list[int]], att_list: list[list[int]]) -> np.ndarray:
        width = max(len(i) for i in ids_list)
        ids = np.full((len(ids_list), width), self.pad, np.int64)
        att = np.zeros_like(ids)
        for row, (i, a) in enumerate(zip(ids_list, att_list)):
            ids[row, : len(i)] = i
            att[row, : len(a)] = a
        feeds = {"input_ids": ids, "attention_mask": att, "token_type_ids": np.zeros_like(ids)}
        return self.session.run(None, {k: v for k, v in feeds.items() if k in self.names})[0]

    def encode(self, texts, marker=None, pad_to=0, attend_mask=True, batch=16):
        """Unit token vectors per text: content tokens (and [MASK]s when padded)."""
        out = []
        for start in range(0, len(texts), batch):
            ids_l, att_l, sel_l = [], [], []
            for enc in self.tok.encode_batch(texts[start : start + batch]):
                ids = list(enc.ids)
                if marker is not None:
                    ids = ids[:1] + [marker] + ids[1:]
                n = len(ids)
                att = [1] * n
                if pad_to and n < pad_to:
                    ids += [self.mask] * (pad_to - n)
                    att += [1 if attend_mask else 0] * (pad_to - n)
                sel = self.keep[np.array(ids)].copy()
                if marker is not None:
                    sel[1] = False
                sel[n:] = True  # the [MASK]s count in MaxSim, as in ColBERT
                ids_l.append(ids)
                att_l.append(att)
                sel_l.append(sel)
            hidden = self._run(ids_l, att_l)
            for row, sel in enumerate(sel_l):
                x = hidden[row, : len(sel)][sel]
                out.append((x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32))
        return out


def main() -> int:
    print(f"# python benchmarks/late_markers.py {' '.join(sys.argv[1:])}")
    samples = json.loads(Path(sys.argv[1]).read_text())
    enc = Encoder()
    variants = {
        "plain": ({}, {}),
        "markers": ({"marker": enc.d}, {"marker": enc.q}),
        "markers + [MASK] to 32": ({"marker": enc.d}, {"marker": enc.q, "pad_to": 32}),
        "markers + [MASK] to 32, not attended": (
            {"marker": enc.d},
            {"marker": enc.q, "pad_to": 32, "attend_mask": False},
        ),
        "plain + [MASK] to 32": ({}, {"pad_to": 32}),
    }
    docs_cache: dict = {}
    print("| variant | R@5 / R@10 / R@25 | R@5 multi-hop / temporal / open-domain / single-hop |")
    print("|---|---|---|")
    for name, (doc_kw, q_kw) in variants.items():
        res: dict[int, list[float]] = {k: [] for k in KS}
        cat: dict[tuple[int, int], list[float]] = {}
        t0 = time.perf_counter()
        for sample in samples:
            rows = list(turns(sample))
            ids = [r[0] for r in rows]
            key = (json.dumps(doc_kw), sample["sample_id"])
            if key not in docs_cache:
                docs_cache[key] = enc.encode([r[1] for r in rows], **doc_kw)
            docs = docs_cache[key]
            starts = np.concatenate(([0], np.cumsum([len(d) for d in docs])[:-1]))
            every = np.concatenate(docs)
            qas = [
                qa for qa in sample["qa"] if qa.get("category") in (1, 2, 3, 4) and qa["evidence"]
            ]
            for qa, q in zip(qas, enc.encode([qa["question"] for qa in qas], **q_kw)):
                order = np.argsort(-np.maximum.reduceat(q @ every.T, starts, axis=1).sum(0))
                gold = set(qa["evidence"])
                for k in KS:
                    r = len(gold & {ids[i] for i in order[:k]}) / len(gold)
                    res[k].append(r)
                    cat.setdefault((qa["category"], k), []).append(r)
        overall = " / ".join(f"{np.mean(res[k]):.3f}" for k in KS)
        cats = " / ".join(f"{np.mean(cat[(c, 5)]):.3f}" for c in (1, 2, 3, 4))
        print(f"| {name} | {overall} | {cats} |  ({time.perf_counter() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
