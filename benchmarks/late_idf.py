"""MaxSim with the query's tokens weighted by their IDF in the conversation (idf ** alpha; 0 is
plain MaxSim), over the shipped stage 1 (late_tune's S10 with the query's content tokens, as
the engine does), alpha chosen by leave-one-conversation-out. Uses late_cache.py's cache.

    python benchmarks/late_idf.py /tmp/li-cache     # results/late-idf.txt
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1] / "server"))

import late_tune as lt
from memls.models.late import _content_tokens
from memls.models.locate import packaged_dir
from memls.models.session import open_tokenizer

S10 = {
    "c": 25,
    "wb": 0.6,
    "nb": 4,
    "ns": 10,
    "nw": 1.0,
    "wm": 0.7,
    "mnorm": "minmax",
    "dense": "bge",
    "h": 0,
    "qc": True,
}
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
ALPHA = [0.0]  # the weighting in force (maxsim_ids below reads it)


def add_idf(convs: list[dict]) -> None:
    """Per question, the BM25-style IDF of each of its token ids among the conversation's
    turns (their content token ids, as stored)."""
    tok = open_tokenizer(packaged_dir("late"), 180)
    keep = _content_tokens(tok)
    for d in convs:
        docs = []
        for text in d["texts"]:
            ids = np.asarray(tok.encode(text).ids)
            docs.append(ids[keep[ids]])
        assert all(len(a) == len(b) for a, b in zip(docs, d["doc_tokens"])), "tokens differ"
        n = len(docs)
        df: dict[int, int] = {}
        for ids in docs:
            for i in set(ids.tolist()):
                df[i] = df.get(i, 0) + 1
        d["_qidf"] = []
        for q, k in zip(d["questions"], d["q_keep"]):
            ids = np.asarray(tok.encode(q).ids)
            assert len(ids) == len(k)
            d["_qidf"].append(
                np.array(
                    [math.log(1 + (n - df.get(i, 0) + 0.5) / (df.get(i, 0) + 0.5)) for i in ids]
                )
            )


def maxsim_ids(d, qi, ids, *, query_content=False):
    q, w = d["q_tokens"][qi], d["_qidf"][qi] ** ALPHA[0]
    if query_content and d["q_keep"][qi].any():
        q, w = q[d["q_keep"][qi]], w[d["q_keep"][qi]]
    cache = d.setdefault("_msw", {}).setdefault((qi, query_content, ALPHA[0]), {})
    out = np.empty(len(ids), np.float32)
    for n, i in enumerate(ids):
        if i not in cache:
            sims = (q @ d["doc_tokens"][i].astype(np.float32).T).max(axis=1)
            cache[i] = float(w @ sims / w.sum())
        out[n] = cache[i]
    return out


def main() -> int:
    folder = sys.argv[1] if len(sys.argv) > 1 else "/tmp/li-cache"
    print(f"# python benchmarks/late_idf.py {folder}")
    convs = lt.load(folder)
    add_idf(convs)
    lt.maxsim_ids = maxsim_ids
    per = {}
    for a in ALPHAS:
        ALPHA[0] = a
        for d in convs:
            d.pop("_s1", None)
        per[a] = lt.evaluate(convs, S10, ce=False)
        rows = [r for v in per[a].values() for r in v]
        cats = " ".join(f"{lt.CATS[c]} {lt.fmt(lt.mean(rows, c))};" for c in (1, 2, 3, 4))
        print(f"alpha {a}: R@5/10/25 {lt.fmt(lt.mean(rows))} | {cats}", flush=True)
    held = []
    for d in convs:
        project = d["project"]

        def others(a, project=project):
            return sum(lt.mean([r for c, v in per[a].items() if c != project for r in v]))

        best = max(ALPHAS, key=others)
        held += per[best][project]
        print(f"held out {project}: chose alpha {best}")
    print(f"LOO R@5/10/25 {lt.fmt(lt.mean(held))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
