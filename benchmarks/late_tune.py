"""Offline tuning of the late-interaction pipeline on cached encodings, every parameter
chosen by leave-one-conversation-out over the dev conversations.

First the cache (`cache`: the LoCoMo dev turns and questions encoded once):

    python benchmarks/late_tune.py cache ../shared/data/locomo/locomo-dev.json --out CACHE --ce 30
    python benchmarks/late_tune.py cache ../shared/data/locomo/locomo-dev.json --out CACHE \
        --fill '{"c": 25, ...}' --extra CACHE-extra --top 12

Per conversation: turn texts (as `locomo.py` stores them), BM25 candidates from an FTS5 table
built like the store's (porter, stop words out of the MATCH), bge dense vectors, the
late-interaction token vectors of turns (float16, content tokens only) and questions (all
tokens and content tokens), and cross-encoder logits for a candidate pool per question; one
pickle per conversation into CACHE. --fill: cross-encoder logits for the pairs a pipeline
configuration puts in its top N that the cache lacks, written to the --extra folder (the
cache is left as it is; --extra merges them).

Then the tuning over it:

    python benchmarks/late_tune.py CACHE --ideas --cheap \
        > benchmarks/results/late-tune-ideas-cheap.txt
    python benchmarks/late_tune.py CACHE --extra CACHE-extra --stage1 JSON --first \
        > benchmarks/results/late-tune-first.txt
    python benchmarks/late_tune.py CACHE --extra CACHE-extra --stage1 JSON \
        --budget 0,2,3,4,5,6,8,10 > benchmarks/results/late-tune-budget-cheap.txt

CACHE comes from `cache` (CACHE-extra from its --fill). The report goes to stdout, its
first line the command. The figures docs/benchmarks.md cites: the leave-one-out estimate of the
shipped candidate stage (--ideas --cheap), hit@1 and MRR by cross-encoder head (--first), and
the head budget table (--budget).

--dense: bge, the colbert model's mean-pooled vector, or both as the dense candidate source.
--probe: single-source figures (BM25, bge dense, colbert mean-pooled dense, MaxSim over every
turn, float16 vs int8 token vectors, query tokens all vs content only).
--loo: the grid of the pipeline's parameters; for each held-out conversation the best
configuration on the other four (sum of R@5, R@10, R@25), scored on the held-out one; the
LOO estimate is the mean over held-out questions, beside the in-sample figure of the
configuration that is best on all five.
"""

from __future__ import annotations

import argparse
import itertools
import json
import pickle
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import turns
from memls.models import ModelRuntime
from memls.models.late import LateEncoder
from memls.store.search import _WORD, STOPWORDS, match_expression

KS = (5, 10, 25)
CATS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def load(folder: str, extra: str | None = None) -> list[dict]:
    """The cached conversations; `extra`: a folder of further cross-encoder logits
    (`cache --fill`), merged in."""
    convs = []
    for f in sorted(Path(folder).glob("*.pkl")):
        d = pickle.loads(f.read_bytes())
        more = Path(extra) / f"{d['project']}-ce.pkl" if extra else None
        if more is not None and more.exists():
            d.setdefault("ce", {}).update(pickle.loads(more.read_bytes()))
        d["index"] = {dia: i for i, dia in enumerate(d["dia"])}
        d["gold"] = [{d["index"][e] for e in ev if e in d["index"]} for ev in d["evidence"]]
        d["_ms"] = {}
        convs.append(d)
    return convs


def recall(order: list[int] | np.ndarray, gold: set[int]) -> tuple[float, ...]:
    if not gold:
        return (0.0,) * len(KS)
    return tuple(len(gold & set(int(i) for i in order[:k])) / len(gold) for k in KS)


def maxsim_ids(d: dict, qi: int, ids, *, query_content: bool = False) -> np.ndarray:
    q = d["q_tokens"][qi]
    if query_content:
        keep = d["q_keep"][qi]
        q = q[keep] if keep.any() else q
    out = np.empty(len(ids), np.float32)
    cache = d.setdefault("_ms", {}).setdefault((qi, query_content), {})
    for n, i in enumerate(ids):
        v = cache.get(i)
        if v is None:
            v = float((q @ d["doc_tokens"][i].astype(np.float32).T).max(axis=1).sum())
            cache[i] = v
        out[n] = v
    return out / len(q)


def base_scores(d: dict, qi: int) -> np.ndarray:
    """A broad fusion over every turn (the pool the cross-encoder logits are cached for)."""
    n = len(d["texts"])
    b = np.zeros(n)
    for i, s in d["bm25"][qi].items():
        b[i] = s
    b = b / b.max() if b.max() > 0 else b
    cos = d["dense"] @ d["q_dense"][qi]
    cos = (cos - cos.min()) / max(cos.max() - cos.min(), 1e-9)
    ms = maxsim_ids(d, qi, range(n))
    ms = (ms - ms.min()) / max(ms.max() - ms.min(), 1e-9)
    return 0.3 * b + 0.2 * cos + 0.5 * ms


# -- the pipeline, offline ----------------------------------------------------------------


def _colbert_dense(d):
    if "_mean" not in d:
        m = np.stack([t.astype(np.float32).mean(0) for t in d["doc_tokens"]])
        d["_mean"] = m / np.linalg.norm(m, axis=1, keepdims=True)
        qs = []
        for q, keep in zip(d["q_tokens"], d["q_keep"]):
            v = (q[keep] if keep.any() else q).mean(0)
            qs.append(v / np.linalg.norm(v))
        d["_qmean"] = np.stack(qs)
    return d["_mean"], d["_qmean"]


def _cosines(d, qi, dense):
    if dense == "colbert":
        m, q = _colbert_dense(d)
        return [m @ q[qi]]
    if dense == "both":
        m, q = _colbert_dense(d)
        return [d["dense"] @ d["q_dense"][qi], m @ q[qi]]
    return [d["dense"] @ d["q_dense"][qi]]


STAGE1 = ("c", "wb", "nb", "wm", "mnorm", "dense", "qc", "ns", "nw", "prf", "rm3")
FIRST = ("prf", "rm3")  # the pseudo-relevance feedback keys (a first pass without them)


def stage1(d, qi, cfg):
    """Candidates -> fusion -> neighbours -> MaxSim: (order, score), cached per configuration."""
    key = (qi, tuple(cfg.get(k) for k in STAGE1))
    cache = d.setdefault("_s1", {})
    if key not in cache:
        cache[key] = _stage1(d, qi, cfg)
    return cache[key]


def _fts(d):
    """The conversation's FTS5 table (as the store builds it), for expanded BM25 queries."""
    if "_fts" not in d:
        import sqlite3

        conn = sqlite3.connect(":memory:")
        conn.execute(
            "CREATE VIRTUAL TABLE f USING fts5(content, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        conn.executemany("INSERT INTO f (rowid, content) VALUES (?, ?)", enumerate(d["texts"]))
        d["_fts"] = conn
        words = [set(w.lower() for w in _WORD.findall(t)) for t in d["texts"]]
        df: dict[str, int] = {}
        for ws in words:
            for w in ws:
                df[w] = df.get(w, 0) + 1
        d["_idf"] = {w: float(np.log(len(words) / n)) for w, n in df.items()}
    return d["_fts"]


def _expansion(d, qi, seeds, weights, t):
    """RM3-like: the t words of the seed turns with the most tf x idf x seed weight that are not
    query words or stop words (the speaker names and dates of every turn have low idf)."""
    _fts(d)
    qwords = {w.lower() for w in _WORD.findall(d["questions"][qi])}
    mass: dict[str, float] = {}
    for i, wt in zip(seeds, weights):
        ws = [w.lower() for w in _WORD.findall(d["texts"][i])]
        for w in ws:
            if w in qwords or w in STOPWORDS or len(w) < 3 or w.isdigit():
                continue
            mass[w] = mass.get(w, 0.0) + wt * d["_idf"].get(w, 0.0) / len(ws)
    return sorted(mass, key=lambda w: -mass[w])[:t]


def _bm25_words(d, words, n):
    if not words:
        return {}
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = (
        _fts(d)
        .execute(
            "SELECT rowid, bm25(f) FROM f WHERE f MATCH ? ORDER BY bm25(f), rowid LIMIT ?",
            (match, n),
        )
        .fetchall()
    )
    return {int(r): -float(x) for r, x in rows}


def _stage1(d, qi, cfg):
    first = None
    if any(cfg.get(k) for k in FIRST):
        order0, score0 = stage1(
            d, qi, {**{k: None for k in FIRST}, **{k: v for k, v in cfg.items() if k not in FIRST}}
        )
        first = (order0, score0)
    bm = dict(d["bm25"][qi])
    if cfg.get("rm3") and first is not None and first[0]:
        m, t, lam = cfg["rm3"]
        seeds = first[0][:m]
        words = _expansion(d, qi, seeds, [first[1][i] for i in seeds], t)
        exp = _bm25_words(d, words, cfg["c"])
        top0 = max(bm.values(), default=0.0)
        top1 = max(exp.values(), default=0.0)
        mixed = {}
        for i in set(sorted(bm, key=lambda i: -bm[i])[: cfg["c"]]) | set(exp):
            a = bm.get(i, 0.0) / top0 if top0 > 0 else 0.0
            b = exp.get(i, 0.0) / top1 if top1 > 0 else 0.0
            mixed[i] = (1 - lam) * a + lam * b
        bm = mixed
    lex = sorted(bm, key=lambda i: -bm[i])[: cfg["c"]]
    top_b = max((bm[i] for i in lex), default=0.0)
    lexset = set(lex)
    sources = []
    cosines = _cosines(d, qi, cfg.get("dense", "bge"))
    if cfg.get("prf") and first is not None and first[0]:
        m, a, mode = cfg["prf"]
        seeds = first[0][:m]
        qv = d["q_dense"][qi] + a * d["dense"][seeds].mean(0)
        qv = qv / np.linalg.norm(qv)
        cos2 = d["dense"] @ qv
        cosines = [cos2] if mode == "replace" else [*cosines, cos2]
    for cos in cosines:
        vec = [int(i) for i in np.argsort(-cos, kind="stable")[: cfg["c"]]]
        vc = cos[vec]
        lo, hi = float(vc.min()), float(vc.max())
        sources.append({i: (float(cos[i]) - lo) / max(hi - lo, 1e-9) for i in vec})
    pool = list(dict.fromkeys([*lex, *(i for src in sources for i in src)]))
    if not pool:
        return [], {}
    fused = {}
    for i in pool:
        b = bm.get(i, 0.0) / top_b if (i in lexset and top_b > 0) else 0.0
        v = sum(src.get(i, 0.0) for src in sources) / len(sources)
        fused[i] = cfg["wb"] * b + (1 - cfg["wb"]) * v
    # neighbours of the top fused hits join (a share of the seed's score)
    if cfg["nb"]:
        seeds = sorted(fused, key=lambda i: -fused[i])[: cfg.get("ns") or 10]
        n = len(d["texts"])
        share = cfg.get("nw") or 0.5
        for s in seeds:
            for j in range(s - cfg["nb"], s + cfg["nb"] + 1):
                same = d["dia"][j].split(":")[0] == d["dia"][s].split(":")[0] if 0 <= j < n else 0
                if same and j != s:
                    fused[j] = max(fused.get(j, 0.0), share * fused[s])
    ids = list(fused)
    f = np.array([fused[i] for i in ids])
    if cfg["wm"] > 0:
        m = maxsim_ids(d, qi, ids, query_content=cfg.get("qc", False))
        if cfg.get("mnorm") == "minmax":
            m = (m - m.min()) / max(m.max() - m.min(), 1e-9)
        f = (1 - cfg["wm"]) * f + cfg["wm"] * m
    order = [ids[k] for k in np.argsort(-f, kind="stable")]
    return order, dict(zip(ids, f.tolist()))


def head_window(order, score, cfg):
    """Where the cross-encoder looks: (first rank, the head's ids). The head is at most
    cfg["h"] candidates, contiguous in the fused order, starting at rank cfg["start"] (0: the
    top), or with start "auto" the h whose scores are nearest the rank-`anchor` boundary (the
    candidates whose place in or out of the top `anchor` is least certain); of those only the
    ones scoring >= rel x the best and, with a margin m < 9, within m x the best of that
    boundary."""
    h = cfg.get("h", 0)
    if h <= 0 or not order:
        return 0, []
    top = score[order[0]]
    anchor = cfg.get("anchor", 5)
    n = len(order)
    if anchor < n:
        bound = 0.5 * (score[order[anchor - 1]] + score[order[anchor]])
    else:
        bound = score[order[-1]]
    start = cfg.get("start", 0)
    if start == "auto":
        # grow a window around the boundary, nearest score first
        lo = hi = min(anchor, n)  # window [lo, hi)
        while hi - lo < h and (lo > 0 or hi < n):
            left = abs(score[order[lo - 1]] - bound) if lo > 0 else np.inf
            right = abs(score[order[hi]] - bound) if hi < n else np.inf
            if left <= right:
                lo -= 1
            else:
                hi += 1
        start = lo
    window = order[start : start + h]
    keep = [
        i
        for i in window
        if score[i] >= cfg.get("rel", 0.0) * top
        and abs(score[i] - bound) <= cfg.get("margin", 9.0) * top
    ]
    if not keep:
        return start, []
    first = window.index(keep[0])  # contiguous: scores are sorted
    return start + first, keep


def pipeline(d, qi, cfg, *, ce=True, sizes=None):
    order, score = stage1(d, qi, cfg)
    if not order:
        return []
    if not ce or cfg.get("h", 0) <= 0 or "ce" not in d:
        return order
    # the cross-encoder on the head whose order is uncertain
    at, head = head_window(order, score, cfg)
    if len(head) < 2:
        head = []
    if sizes is not None:
        sizes.append(len(head))
    if not head:
        return order
    logits = np.array([d["ce"].get((qi, i), -11.0) for i in head])
    if logits.max() < cfg.get("floor", -4.0):
        return order
    key = logits.copy()
    if cfg.get("lift", 0):
        pos = {i: k for k, i in enumerate(head)}
        for k in np.argsort(-logits)[: cfg["lift"]]:
            s = head[k]
            for j in (s - 2, s - 1, s + 1, s + 2):
                if j in pos and d["dia"][j].split(":")[0] == d["dia"][s].split(":")[0]:
                    key[pos[j]] = max(key[pos[j]], logits[k] - 5.0)
    if cfg.get("blend", 0):
        hs = np.array([score[i] for i in head])
        z = (hs - hs.mean()) / max(hs.std(), 1e-6)
        zk = (key - key.mean()) / max(key.std(), 1e-6)
        key = (1 - cfg["blend"]) * zk + cfg["blend"] * z
    reordered = [head[k] for k in np.argsort(-key, kind="stable")]
    return order[:at] + reordered + order[at + len(head) :]


def head_of(d, qi, cfg):
    """How many candidates the cross-encoder scores for a question under `cfg`."""
    sizes: list[int] = []
    pipeline(d, qi, cfg, ce=True, sizes=sizes)
    return sizes[0] if sizes else 0


def evaluate(convs, cfg, *, ce=True, which=None):
    """{conv: [(cat, r5, r10, r25)]}"""
    out = {}
    for d in convs:
        if which is not None and d["project"] not in which:
            continue
        rows = []
        for qi in range(len(d["questions"])):
            rows.append((d["category"][qi], *recall(pipeline(d, qi, cfg, ce=ce), d["gold"][qi])))
        out[d["project"]] = rows
    return out


def mean(rows, cat=None):
    rows = [r for r in rows if cat is None or r[0] == cat]
    return tuple(float(np.mean([r[1 + j] for r in rows])) for j in range(len(KS)))


def fmt(t):
    return " / ".join(f"{x:.3f}" for x in t)


def grid(space):
    keys = list(space)
    for values in itertools.product(*(space[k] for k in keys)):
        yield dict(zip(keys, values))


def loo(convs, space, *, ce=True, label="", configs=None, allowed=None, in_sample=None):
    """Per held-out conversation: the best config on the others; returns the LOO rows, the
    in-sample best config and its rows, and the choices. `allowed(held, config)`: which
    configurations a fold may choose from (nested: its own earlier choices)."""
    configs = configs if configs is not None else list(grid(space))
    results = [evaluate(convs, c, ce=ce) for c in configs]
    names = [d["project"] for d in convs]

    def objective(res, keep):
        rows = [r for n in keep for r in res[n]]
        return sum(mean(rows))

    held_rows, choices = [], {}
    for held in names:
        train = [n for n in names if n != held]
        ks = [k for k in range(len(configs)) if allowed is None or allowed(held, configs[k])]
        best = max(ks, key=lambda k: objective(results[k], train))
        choices[held] = configs[best]
        held_rows += results[best][held]
    ks = [k for k in range(len(configs)) if in_sample is None or in_sample(configs[k])]
    best_all = max(ks, key=lambda k: objective(results[k], names))
    in_rows = [r for n in names for r in results[best_all][n]]
    print(f"\n## {label} ({len(configs)} configurations)")
    print(f"LOO       R@5/10/25 {fmt(mean(held_rows))}")
    print(f"in-sample R@5/10/25 {fmt(mean(in_rows))}  config {configs[best_all]}")
    for c, name in CATS.items():
        print(f"  {name:11s} LOO {fmt(mean(held_rows, c))}  in-sample {fmt(mean(in_rows, c))}")
    for held, c in choices.items():
        print(f"  held out {held}: chose {c}")
    loo.choices = choices  # type: ignore[attr-defined]
    return held_rows, configs[best_all], in_rows


def probe(convs):
    def rank_all(score_fn):
        rows = []
        for d in convs:
            for qi in range(len(d["questions"])):
                s = score_fn(d, qi)
                rows.append(
                    (d["category"][qi], *recall(np.argsort(-s, kind="stable"), d["gold"][qi]))
                )
        return mean(rows)

    def bm25(d, qi):
        s = np.zeros(len(d["texts"]))
        for i, v in d["bm25"][qi].items():
            s[i] = v
        return s

    print("| source, every turn of a conversation | R@5 / R@10 / R@25 |")
    print("|---|---|")
    print(f"| BM25 (FTS5 porter) | {fmt(rank_all(bm25))} |")
    print(f"| bge-small dense | {fmt(rank_all(lambda d, qi: d['dense'] @ d['q_dense'][qi]))} |")
    for d in convs:
        d["_mean"] = np.stack([t.astype(np.float32).mean(0) for t in d["doc_tokens"]])
        d["_mean"] /= np.linalg.norm(d["_mean"], axis=1, keepdims=True)

    def colbert_mean(d, qi):
        q = d["q_tokens"][qi][d["q_keep"][qi]].mean(0)
        return d["_mean"] @ (q / np.linalg.norm(q))

    def colbert_cls(d, qi):
        return d["_mean"] @ d["q_tokens"][qi][0]

    print(f"| colbert mean-pooled dense (content tokens) | {fmt(rank_all(colbert_mean))} |")
    n = lambda d: range(len(d["texts"]))  # noqa: E731
    print(f"| MaxSim, query all tokens | {fmt(rank_all(lambda d, qi: maxsim_ids(d, qi, n(d))))} |")
    print(
        "| MaxSim, query content tokens | "
        f"{fmt(rank_all(lambda d, qi: maxsim_ids(d, qi, n(d), query_content=True)))} |"
    )

    def int8(d, qi):
        q = d["q_tokens"][qi]
        out = np.empty(len(d["texts"]))
        for i, t in enumerate(d["doc_tokens"]):
            t = t.astype(np.float32)
            scale = np.abs(t).max(axis=1, keepdims=True) / 127.0
            t8 = np.round(t / scale).astype(np.int8).astype(np.float32) * scale
            out[i] = (q @ t8.T).max(axis=1).sum()
        return out

    print(f"| MaxSim, int8 token vectors (per-token scale) | {fmt(rank_all(int8))} |")
    tokens = [len(t) for d in convs for t in d["doc_tokens"]]
    print(
        f"\ncontent tokens per turn: mean {np.mean(tokens):.1f}, median {np.median(tokens):.0f}, "
        f"max {max(tokens)}; float16 {np.mean(tokens) * 384 * 2 / 1024:.1f} KiB a turn"
    )


def ideas(convs, base, wider=False):
    """Candidate-side ideas for the interactive stage (no cross-encoder), each with its own
    small grid that includes "off", chosen by LOO; beside the shipped stage 1 (`base`)."""
    base = {k: v for k, v in base.items()}
    spaces = {
        "MaxSim over a wider pool (c per source, MaxSim weight)": {
            "c": [25, 40, 60, 100],
            "wm": [0.7, 0.8, 0.9],
        },
        "both dense sources (bge + colbert mean-pooled content tokens)": {
            "dense": ["bge", "both"],
            "wb": [0.5, 0.6, 0.7],
        },
        "Rocchio PRF on the bge side (top m, weight a, beside or instead of q)": {
            "prf": [
                None,
                (3, 0.5, "add"),
                (5, 0.5, "add"),
                (3, 1.0, "add"),
                (5, 1.0, "add"),
                (3, 0.5, "replace"),
                (5, 1.0, "replace"),
            ],
        },
        "neighbours (radius, seeds, share of the seed's score)": {
            "nb": [2, 3, 4],
            "ns": [10, 20],
            "nw": [0.5, 0.7],
        },
        "RM3-like BM25 expansion (top m, t words, weight)": {
            "rm3": [None, (3, 5, 0.3), (5, 10, 0.3), (3, 5, 0.5), (5, 10, 0.5)],
        },
    }
    if wider:
        # the neighbours' grid chose its edge (radius 4, share 0.7): wider, then the other
        # ideas that helped alone on top of the neighbours LOO chose
        spaces = {
            "neighbours, wider grid": {"nb": [3, 4, 5, 6], "ns": [10, 20], "nw": [0.5, 0.7, 0.85]},
        }
    if wider == "joint":
        # the neighbours' edges again (seeds 20, share 0.85), with the MaxSim weight, and the
        # two ideas that helped a little alone (RM3, Rocchio) on top
        spaces = {
            "joint: neighbours x MaxSim weight x (RM3 | Rocchio | neither)": {
                "nb": [4, 5],
                "ns": [20, 30],
                "nw": [0.85, 1.0],
                "wm": [0.6, 0.7, 0.8],
                "extra": [None, ("rm3", (3, 5, 0.5)), ("prf", (3, 1.0, "add"))],
            },
        }
    if wider == "cheap":
        # the neighbours at the old number of seeds (10): about the old candidate count
        spaces = {
            "neighbours with 10 seeds (the candidate count of before)": {
                "nb": [3, 4],
                "ns": [10],
                "nw": [0.7, 0.85, 1.0],
            },
        }
    if wider == "final":
        # the whole stage 1 again around the new neighbours, both dense sources included
        spaces = {
            "stage 1 again with neighbours 4 / 20 / 0.85 (c, wb, wm, dense)": {
                "nb": [4],
                "ns": [20],
                "nw": [0.85],
                "c": [25, 30],
                "wb": [0.5, 0.6, 0.7],
                "wm": [0.6, 0.7, 0.8],
                "dense": ["bge", "both"],
            },
        }
    for label, space in spaces.items():
        configs = [{**base, **c} for c in grid(space)]
        for c in configs:
            extra = c.pop("extra", None)
            if extra:
                c[extra[0]] = extra[1]
        _, best, _ = loo(convs, None, ce=False, label=label, configs=configs)
        for c in [best, *loo.choices.values()][:1]:  # type: ignore[attr-defined]
            n = [len(stage1(d, qi, c)[0]) for d in convs for qi in range(len(d["questions"]))]
            print(f"  candidates a question (in-sample choice): mean {np.mean(n):.1f}")
        base0 = {**base, "nb": 3, "ns": 10, "nw": 0.5}
        n = [len(stage1(d, qi, base0)[0]) for d in convs for qi in range(len(d["questions"]))]
        print(f"  candidates a question with neighbours 3 / 10 / 0.5: mean {np.mean(n):.1f}")


def first_ranks(convs, base):
    """What R@5/10/25 cannot see: the first result. hit@1 (a gold turn first) and MRR@25 for
    cross-encoder heads of h pairs at the top (no cut, lift or blend: nothing tuned)."""
    print("| head | hit@1 | MRR@25 | R@5 / R@10 / R@25 |")
    print("|---|---|---|---|")
    for h, start, lift in (
        (0, 0, 0),
        (2, 0, 0),
        (3, 0, 0),
        (4, 0, 0),
        (5, 0, 0),
        (6, 0, 0),
        (10, 0, 0),
        (10, 0, 5),
        (2, 4, 0),
    ):
        cfg = {**base, "h": h, "start": start, "rel": 0.0, "lift": lift}
        hit, rr, rows = [], [], []
        for d in convs:
            for qi in range(len(d["questions"])):
                order, gold = pipeline(d, qi, cfg), d["gold"][qi]
                hit.append(1.0 if order and order[0] in gold else 0.0)
                first = next((k for k, i in enumerate(order[:25]) if i in gold), None)
                rr.append(0.0 if first is None else 1.0 / (first + 1))
                rows.append((d["category"][qi], *recall(order, gold)))
        what = "none" if h == 0 else f"{h} from rank {start + 1}" + (", lift" if lift else "")
        print(f"| {what} | {np.mean(hit):.3f} | {np.mean(rr):.3f} | {fmt(mean(rows))} |")


def budget(convs, heads, firsts, choices1, best1, part1):
    """For each cap on the cross-encoder's head: the rest (where the head sits, the relative
    cut, a margin around the rank-5 boundary, lift, blend) by LOO nested in each fold's
    stage-1 choice; LOO and in-sample recall and cross-encoder pairs a query."""
    table = []
    for h in heads:
        if h == 0:
            space2 = {"h": [0]}
        else:
            space2 = {
                "h": [h],
                "start": [0, 2, 3, 4, 5, "auto"],
                "rel": [0.0, 0.5],
                "margin": [9.0, 0.1, 0.2],
                "lift": [0, 5],
                "blend": [0.0, 0.3],
            }
        configs = [{**c1, **c2} for c1 in firsts.values() for c2 in grid(space2)]
        # prune: a window that starts at the top ignores the margin (top-anchored, as before)
        configs = [
            c
            for c in configs
            if not (c.get("start") == 0 and c.get("margin", 9.0) < 9.0)
            and not (h >= 8 and c.get("start") in (4, 5))
        ]
        rows, best, in_rows = loo(
            convs,
            None,
            ce=True,
            label=f"cross-encoder head <= {h}",
            configs=configs,
            allowed=lambda held, c: part1(c) == part1(choices1[held]),
            in_sample=lambda c: part1(c) == part1(best1),
        )
        chosen = loo.choices  # type: ignore[attr-defined]
        loo_pairs = [
            head_of(d, qi, chosen[d["project"]]) for d in convs for qi in range(len(d["questions"]))
        ]
        in_pairs = [head_of(d, qi, best) for d in convs for qi in range(len(d["questions"]))]
        table.append((h, mean(rows), mean(in_rows), loo_pairs, in_pairs, best))
    print("\n## Budget table: cross-encoder head cap -> LOO and in-sample recall, pairs a query")
    print(
        "| head cap | LOO R@5 / R@10 / R@25 | in-sample R@5 / R@10 / R@25 | pairs mean / p95 (LOO) "
        "| pairs mean / p95 (in-sample) | in-sample choice |"
    )
    print("|---|---|---|---|---|---|")
    for h, lr, ir, lp, ip, best in table:
        what = {k: best[k] for k in ("start", "rel", "margin", "lift", "blend") if k in best}
        print(
            f"| {h} | {fmt(lr)} | {fmt(ir)} | {np.mean(lp):.1f} / {np.percentile(lp, 95):.0f} "
            f"| {np.mean(ip):.1f} / {np.percentile(ip, 95):.0f} | {what} |"
        )


def main() -> int:
    if sys.argv[1:2] == ["cache"]:
        return cache_main(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("cache")
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--stage1", default="", help="with --budget: this stage 1 (JSON)")
    ap.add_argument("--first", action="store_true", help="with --stage1: hit@1 and MRR by head")
    ap.add_argument("--extra", default=None, help="more cross-encoder logits (cache --fill)")
    ap.add_argument("--stage", default="all")
    ap.add_argument("--pairs", action="store_true", help="cross-encoder pairs per question")
    ap.add_argument("--dense", action="store_true", help="compare dense sources (bge, colbert)")
    ap.add_argument("--ideas", action="store_true", help="candidate-side ideas, each by LOO")
    ap.add_argument("--wider", action="store_true", help="with --ideas: wider neighbours")
    ap.add_argument(
        "--joint", action="store_true", help="with --ideas: neighbours with RM3 / Rocchio"
    )
    ap.add_argument("--final", action="store_true", help="with --ideas: stage 1 around it")
    ap.add_argument("--cheap", action="store_true", help="with --ideas: neighbours, 10 seeds")
    ap.add_argument(
        "--budget",
        default="",
        help="a table over cross-encoder head caps (e.g. 0,2,3,4,5,6,8,10): the rest by LOO",
    )
    ap.add_argument(
        "--heads",
        default="10,15,20,25",
        help="the cross-encoder's maximum head sizes to choose among (a speed bound)",
    )
    args = ap.parse_args()
    print("# python " + " ".join(sys.argv))
    convs = load(args.cache, extra=args.extra)
    print(f"# {len(convs)} conversations, {sum(len(d['questions']) for d in convs)} questions")
    if args.probe:
        probe(convs)
        return 0
    if args.pairs:
        # cross-encoder pairs per question of the shipped head (<= 10) and of a head of 20
        base = {"c": 25, "wb": 0.6, "nb": 3, "wm": 0.7, "mnorm": "minmax", "dense": "bge"}
        base |= {"margin": 9.0, "rel": 0.5, "lift": 5}
        for h, blend in ((20, 0.3), (10, 0.0)):
            cfg = {**base, "h": h, "blend": blend}
            pairs = [head_of(d, qi, cfg) for d in convs for qi in range(len(d["questions"]))]
            print(
                f"head <= {h}, cut 0.5: cross-encoder pairs per question median "
                f"{int(np.median(pairs))}, mean {np.mean(pairs):.1f}, "
                f"p95 {int(np.percentile(pairs, 95))}"
            )
        return 0
    if args.first and args.stage1:
        first_ranks(convs, json.loads(args.stage1))
        return 0
    if args.budget and args.stage1:
        # the budget table over a given stage 1 (chosen by the --ideas grids' LOO)
        first = json.loads(args.stage1)
        for k in FIRST:
            if first.get(k):
                first[k] = tuple(first[k])
        names = [d["project"] for d in convs]
        budget(
            convs,
            [int(h) for h in args.budget.split(",")],
            {0: first},
            dict.fromkeys(names, first),
            first,
            lambda c: tuple(c.get(k) for k in STAGE1),
        )
        return 0
    if args.ideas:
        # beside the stage 1 chosen by the LOO grid below
        ideas(
            convs,
            {"c": 25, "wb": 0.6, "nb": 3, "wm": 0.7, "mnorm": "minmax", "h": 0},
            wider="cheap"
            if args.cheap
            else "final"
            if args.final
            else "joint"
            if args.joint
            else args.wider,
        )
        return 0
    base = {"c": [50], "wb": [0.5], "nb": [2], "wm": [0.0], "h": [0], "margin": [9.0]}
    loo(convs, base, ce=False, label="hybrid as today (no late interaction, no cross-encoder)")
    if args.dense:
        # the colbert model's mean-pooled content tokens as the dense source, instead of bge
        # or beside it (encode once?), each with its own small grid, LOO
        for dense in ("bge", "colbert", "both"):
            space = {
                "c": [10, 15, 20],
                "wb": [0.5, 0.6, 0.7],
                "nb": [2],
                "wm": [0.5, 0.6],
                "mnorm": ["minmax"],
                "dense": [dense],
                "h": [0],
                "margin": [9.0],
            }
            loo(convs, space, ce=False, label=f"interactive, dense source {dense}")
        return 0
    # A first grid (270 configurations: c 30/50/100, wb 0.3/0.5/0.7, nb 0/1/2, wm 0.5-0.9,
    # raw/minmax MaxSim) chose nb 2 and minmax in every fold.
    # The engine asks each source for max(candidates, k) and the benchmark's k is 25, so c
    # starts at 25 here.
    space1 = {
        "c": [25, 30, 40],
        "wb": [0.5, 0.6, 0.7],
        "nb": [2, 3],
        "wm": [0.5, 0.6, 0.7],
        "mnorm": ["minmax"],
        "dense": ["bge"],
        "h": [0],
        "margin": [9.0],
    }
    rows1, best1, _ = loo(
        convs, space1, ce=False, label="+ MaxSim over the candidates (interactive)"
    )
    if args.stage == "1":
        return 0
    choices1 = dict(loo.choices)  # type: ignore[attr-defined]
    stage1_keys = list(space1)

    def part1(c):
        return tuple(c[k] for k in stage1_keys if k not in ("h", "margin"))

    firsts = {part1(c): c for c in [*choices1.values(), best1]}
    if args.budget:
        budget(convs, [int(h) for h in args.budget.split(",")], firsts, choices1, best1, part1)
        return 0
    space2 = {
        "h": [int(h) for h in args.heads.split(",")],
        "rel": [0.5, 0.6, 0.7, 0.8],
        "lift": [0, 5],
        "blend": [0.0, 0.3],
    }
    configs = [{**c1, **c2} for c1 in firsts.values() for c2 in grid(space2)]
    rows2, best2, _ = loo(
        convs,
        None,
        ce=True,
        label="+ cross-encoder on the uncertain head (default), nested in the stage-1 choices",
        configs=configs,
        allowed=lambda held, c: part1(c) == part1(choices1[held]),
        in_sample=lambda c: part1(c) == part1(best1),
    )
    pairs = [head_of(d, qi, best2) for d in convs for qi in range(len(d["questions"]))]
    print(
        f"cross-encoder pairs per query, in-sample configuration: median "
        f"{int(np.median(pairs))}, mean {np.mean(pairs):.1f}, p95 {int(np.percentile(pairs, 95))}"
    )
    # re-ranking never lowers recall: default (LOO) against interactive (LOO), per k, per category
    for c, name in [(None, "categories 1-4"), *CATS.items()]:
        a, b = mean(rows1, c), mean(rows2, c)
        print(
            f"  {name:14s} interactive {fmt(a)}  default {fmt(b)}  "
            f"{'ok' if all(y >= x - 1e-9 for x, y in zip(a, b)) else 'LOWER somewhere'}"
        )
    return 0


# ---------------------------------------------------------------- the cache


def bm25_all(texts: list[str], questions: list[str], n: int = 100) -> list[dict[int, float]]:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(content, "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.executemany("INSERT INTO f (rowid, content) VALUES (?, ?)", enumerate(texts))
    out = []
    for q in questions:
        match = match_expression(q)
        if match is None:
            out.append({})
            continue
        rows = conn.execute(
            "SELECT rowid, bm25(f) FROM f WHERE f MATCH ? ORDER BY bm25(f), rowid LIMIT ?",
            (match, n),
        ).fetchall()
        out.append({int(r): -float(s) for r, s in rows})
    return out


def cache_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="late_tune.py cache")
    ap.add_argument("path")
    ap.add_argument("--out", required=True, help="the cache folder")
    ap.add_argument("--ce", type=int, default=0, help="cross-encoder logits for a pool of N")
    ap.add_argument("--fill", action="append", default=[], help="a configuration (JSON)")
    ap.add_argument("--extra", help="with --fill: the folder for the extra logits")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args(argv)
    if args.fill and not args.extra:
        ap.error("--fill needs --extra")
    if args.fill:
        return fill(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    samples = json.loads(Path(args.path).read_text())
    runtime = ModelRuntime()
    late = LateEncoder(runtime.pool)
    for sample in samples:
        project = sample["sample_id"]
        target = out / f"{project}.pkl"
        if target.exists() and not args.ce:
            continue
        if target.exists():
            data = pickle.loads(target.read_bytes())
        else:
            rows = list(turns(sample))
            texts = [t for _, t, _ in rows]
            dia = [d.strip() for d, _, _ in rows]
            qas = [
                qa
                for qa in sample["qa"]
                if [e for e in qa.get("evidence", []) if e.strip()] and qa["category"] != 5
            ]
            questions = [qa["question"] for qa in qas]
            t0 = time.perf_counter()
            doc_tokens = late.encode(texts)
            t_late = time.perf_counter() - t0
            t0 = time.perf_counter()
            dense = runtime.embedder.embed(texts)
            t_dense = time.perf_counter() - t0
            model = late._lazy.get()
            q_all, q_keep = [], []
            for q in questions:
                enc = model.tokenizer.encode(q)
                ids = np.asarray(enc.ids)
                feeds = {
                    "input_ids": ids[None].astype(np.int64),
                    "attention_mask": np.ones((1, len(ids)), np.int64),
                    "token_type_ids": np.zeros((1, len(ids)), np.int64),
                }
                feeds = {k: v for k, v in feeds.items() if k in model.input_names}
                h = model.session.run([model.output_name], feeds)[0][0]
                h = h / np.linalg.norm(h, axis=1, keepdims=True)
                q_all.append(h.astype(np.float32))
                q_keep.append(model.keep[ids])
            data = {
                "project": project,
                "texts": texts,
                "dia": dia,
                "questions": questions,
                "category": [qa["category"] for qa in qas],
                "evidence": [[e.strip() for e in qa["evidence"] if e.strip()] for qa in qas],
                "doc_tokens": doc_tokens,
                "dense": dense,
                "q_dense": runtime.embedder.embed(questions),
                "q_tokens": q_all,
                "q_keep": q_keep,
                "bm25": bm25_all(texts, questions),
                "seconds": {"late": t_late, "dense": t_dense},
            }
            print(
                f"{project}: {len(texts)} turns, late {len(texts) / t_late:.0f}/s, "
                f"dense {len(texts) / t_dense:.0f}/s, {len(questions)} questions",
                flush=True,
            )
        if args.ce:
            data["ce"] = ce_pool(runtime, data, args.ce, data.get("ce", {}))
        target.write_bytes(pickle.dumps(data))
    runtime.close()
    return 0


def fill(args) -> int:
    configs = [json.loads(c) for c in args.fill]
    for c in configs:
        for k in ("prf", "rm3"):
            if c.get(k):
                c[k] = tuple(c[k])
    extra = Path(args.extra)
    extra.mkdir(parents=True, exist_ok=True)
    runtime = ModelRuntime()
    for d in load(args.out, extra=args.extra):
        target = extra / f"{d['project']}-ce.pkl"
        have = pickle.loads(target.read_bytes()) if target.exists() else {}
        todo: dict[int, set[int]] = {}
        for qi in range(len(d["questions"])):
            for cfg in configs:
                order, _ = stage1(d, qi, cfg)
                todo.setdefault(qi, set()).update(
                    i for i in order[: args.top] if (qi, i) not in d["ce"]
                )
        t0 = time.perf_counter()
        pairs = 0
        for qi, ids in todo.items():
            ids = sorted(ids)
            if ids:
                logits = runtime.reranker.rerank(d["questions"][qi], [d["texts"][i] for i in ids])
                have.update({(qi, i): float(x) for i, x in zip(ids, logits)})
                pairs += len(ids)
        target.write_bytes(pickle.dumps(have))
        print(f"{d['project']}: {pairs} pairs in {time.perf_counter() - t0:.0f} s", flush=True)
    runtime.close()
    return 0


def ce_pool(runtime, data, n, have):
    """Cross-encoder logits for the top n of a broad fusion and of a late-interaction pipeline
    (+ the ±2 neighbours of the broad top 10)."""
    texts = data["texts"]
    t0 = time.perf_counter()
    pairs = 0
    for qi, q in enumerate(data["questions"]):
        scores = base_scores(data, qi)
        top = list(np.argsort(-scores, kind="stable")[:n])
        cfg = {"c": 50, "wb": 0.5, "nb": 2, "wm": 0.7, "h": 0, "margin": 9.0}
        want = set(top) | set(pipeline(data, qi, cfg, ce=False)[:n])
        for i in top[:10]:
            want.update(j for j in range(i - 2, i + 3) if 0 <= j < len(texts))
        todo = sorted(i for i in want if (qi, i) not in have)
        if todo:
            logits = runtime.reranker.rerank(q, [texts[i] for i in todo])
            have.update({(qi, i): float(x) for i, x in zip(todo, logits)})
            pairs += len(todo)
    took = time.perf_counter() - t0
    print(f"{data['project']}: {pairs} pairs in {took:.0f} s", flush=True)
    return have


if __name__ == "__main__":
    raise SystemExit(main())
