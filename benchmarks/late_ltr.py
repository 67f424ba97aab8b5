"""Learned fusion (learning to rank) over the shipped candidate stage, on the cached encodings
of `late_cache.py`, every choice by leave-one-conversation-out (issue #15, point 2).

    python benchmarks/late_ltr.py /tmp/li-cache [--third 0,10,25] [--shrink +ctx,all]
        [--sets ...] [--lams ...] [--negs ...] [--mlp +ctx,all] [--second 5/2,10/4]
    python benchmarks/late_ltr.py /tmp/li-cache --hand-loo

The candidate pool is the shipped stage 1 (late_tune.py `_stage1` with S10: BM25 top 25 + bge
top 25, score fusion wb 0.6, neighbours radius 4 around the 10 best fused at the seed's own
score); the hand-formed order is 0.3 x fused + 0.7 x minmax(MaxSim). Here a linear score over
per-candidate features (all available in the engine at query time without a model run per
candidate) is trained with a pairwise logistic loss (RankNet; gold turn above each other
candidate of its question, every question weighted alike) and L2 regularisation, in numpy.

Every choice (feature set, regularisation, which negatives) is made by nested LOO: for each
held-out conversation, an inner LOO over the other four picks the choice (sum of R@5, R@10,
R@25 over the inner held-out questions), the model is trained on all four with it and scores
the fifth. The LOO figure is the mean over the held-out questions; the in-sample figure is the
choice best by (plain) LOO on all five, trained on all five and scored on all five.

--third K: a third candidate source, MaxSim over every turn of the conversation, its top K
joining the pool (0: none): what a full-MaxSim index (centroid / PLAID-like) would buy.
--shrink SET: the hand-formed score as a free feature, SET's features penalised (a large
lambda gives back today's order). --mlp SET: a small non-linear RankNet (probe only).
--second S/R: second-round neighbours (radius R around the S best by the hand-formed score).
--hand-loo: the hand-formed family's own LOO on this pool (BM25 weight x MaxSim weight).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from late_tune import CATS, KS, fmt, load, mean

# The shipped stage 1 (RetrievalConfig): candidates, BM25 weight, neighbours, MaxSim weight.
C, WB, NB, NS, NW, WM = 25, 0.6, 4, 10, 1.0, 0.7
SECOND = (0, 0)  # second-round neighbours (seeds by the hand-formed score, radius); off

FEATURES = (
    "hand",  # 0.3 x fused + 0.7 x minmax(MaxSim): today's final score
    "fused",  # the fused score after neighbours (0.6 bm/top + 0.4 minmax cos; seed's for a nb)
    "ms_mm",  # MaxSim min-max over the pool
    "ms_raw",  # MaxSim per query token (content tokens), raw
    "ms_gap",  # MaxSim raw minus the pool's best
    "ms_z",  # MaxSim z-score over the pool
    "ms_rank",  # log(1 + rank of MaxSim in the pool)
    "bm",  # BM25 / the query's top (0 outside the BM25 top 25)
    "bm_rank",  # log(1 + BM25 rank), log(26) outside
    "in_bm",  # in the BM25 top 25
    "cos_raw",  # bge cosine (the dense top 25's lowest outside it)
    "cos_mm",  # min-max over the dense top 25 (0 outside)
    "cos_rank",  # log(1 + dense rank), log(26) outside
    "in_cos",  # in the dense top 25
    "n_src",  # how many of BM25 / dense found it
    "min_rank",  # log(1 + the better of its two ranks)
    "nb",  # a neighbour only (found by neither source)
    "nb_dist",  # distance to its seed (0 when not a neighbour)
    "seed_ms",  # MaxSim min-max of its seed (own for a non-neighbour)
    "ms_ctx",  # the best MaxSim min-max within 1 place in its session (in the pool)
    "len",  # log(number of content tokens of the turn)
    "cmean",  # colbert mean-pooled cosine (from the token vectors MaxSim loads anyway)
    "ctx2",  # the best MaxSim min-max within 2 places in its session (in the pool)
    "sess_max",  # the best MaxSim min-max of another candidate of its session
    "sess_n",  # log(1 + other candidates of its session)
    "cov8",  # share of query tokens with a best cosine >= 0.8 in the turn
    "cov9",  # ... >= 0.9
    "soft8",  # mean over query tokens of max(0, best cosine - 0.8)
    "tmin",  # the worst-matched query token's best cosine
    "in_all",  # in the third source (MaxSim top K over every turn)
    "all_rank",  # log(1 + rank of MaxSim over every turn)
)
F = {f: i for i, f in enumerate(FEATURES)}

SETS = {
    "hand": ["hand"],
    "fused+ms": ["fused", "ms_mm"],
    "base": ["fused", "ms_mm", "ms_raw", "ms_rank"],
    "+src": ["fused", "ms_mm", "ms_raw", "ms_rank", "bm", "in_bm", "cos_mm", "in_cos", "n_src"],
    "+src+nb": [
        "fused", "ms_mm", "ms_raw", "ms_rank", "bm", "in_bm", "cos_mm", "in_cos", "n_src",
        "nb", "nb_dist", "seed_ms",
    ],
    "+src+nb+len": [
        "fused", "ms_mm", "ms_raw", "ms_rank", "bm", "in_bm", "cos_mm", "in_cos", "n_src",
        "nb", "nb_dist", "seed_ms", "len", "cmean",
    ],
    "+ctx": [
        "fused", "ms_mm", "ms_raw", "ms_rank", "bm", "in_bm", "cos_mm", "in_cos", "n_src",
        "nb", "nb_dist", "seed_ms", "ms_ctx", "ctx2", "sess_max", "sess_n",
    ],
    "+tok": [
        "fused", "ms_mm", "ms_raw", "ms_rank", "bm", "in_bm", "cos_mm", "in_cos", "n_src",
        "nb", "nb_dist", "seed_ms", "cov8", "cov9", "soft8", "tmin",
    ],
    "tok": ["fused", "ms_mm", "ms_raw", "cov8", "cov9", "soft8", "tmin"],
    "all": [f for f in FEATURES if f not in ("in_all", "all_rank")],
}  # fmt: skip


def _prepare(d: dict) -> None:
    """Every turn's tokens in one matrix (MaxSim over every turn in one product)."""
    if "_T" in d:
        return
    toks = [t.astype(np.float32) for t in d["doc_tokens"]]
    d["_T"] = np.concatenate(toks)
    d["_starts"] = np.cumsum([0] + [len(t) for t in toks[:-1]])
    d["_len"] = np.array([len(t) for t in toks], np.float64)
    m = np.stack([t.mean(0) for t in toks])
    d["_cmean"] = m / np.linalg.norm(m, axis=1, keepdims=True)
    d["_session"] = [x.split(":")[0] for x in d["dia"]]


def token_max(d: dict, qi: int) -> np.ndarray:
    """Each content token of the question (as the engine encodes a query): its best cosine in
    every turn, [query tokens, turns]; MaxSim per query token is its mean over axis 0."""
    q = d["q_tokens"][qi]
    keep = d["q_keep"][qi]
    q = q[keep] if keep.any() else q
    s = q @ d["_T"].T
    return np.maximum.reduceat(s, d["_starts"], axis=1)


def _minmax(x: np.ndarray) -> np.ndarray:
    return (x - x.min()) / max(float(x.max() - x.min()), 1e-9)


def question(d: dict, qi: int, third: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(candidate ids, features [n, len(FEATURES)], gold flags) of one question."""
    n = len(d["texts"])
    tm = token_max(d, qi)
    ms_all = tm.mean(0)
    bm = d["bm25"][qi]
    lex = sorted(bm, key=lambda i: -bm[i])[:C]
    top_b = max((bm[i] for i in lex), default=0.0)
    cos = d["dense"] @ d["q_dense"][qi]
    vec = [int(i) for i in np.argsort(-cos, kind="stable")[:C]]
    lo, hi = float(cos[vec].min()), float(cos[vec].max())
    cos_mm = {i: (float(cos[i]) - lo) / max(hi - lo, 1e-9) for i in vec}
    bm_rank = {i: r for r, i in enumerate(lex)}
    cos_rank = {i: r for r, i in enumerate(vec)}
    pool = list(dict.fromkeys([*lex, *vec]))
    fused = {}
    for i in pool:
        b = bm[i] / top_b if (i in bm_rank and top_b > 0) else 0.0
        fused[i] = WB * b + (1 - WB) * cos_mm.get(i, 0.0)
    seed_of: dict[int, tuple[int, int]] = {}  # neighbour -> (seed, distance)
    seeds = sorted(fused, key=lambda i: -fused[i])[:NS]
    sess = d["_session"]
    for s in seeds:
        for j in range(s - NB, s + NB + 1):
            if 0 <= j < n and j != s and sess[j] == sess[s]:
                share = NW * fused[s]
                if share > fused.get(j, 0.0):
                    fused[j] = share
                    seed_of[j] = (s, abs(j - s))
    if third:
        for i in np.argsort(-ms_all, kind="stable")[:third]:
            fused.setdefault(int(i), 0.0)
    if SECOND[0]:
        # second-round neighbours: around the best by the hand-formed score (MaxSim known),
        # the turns within SECOND[1] places join at their seed's fused score
        ids0 = list(fused)
        ms0 = ms_all[ids0]
        hand0 = (1 - WM) * np.array([fused[i] for i in ids0]) + WM * _minmax(ms0)
        for k in np.argsort(-hand0, kind="stable")[: SECOND[0]]:
            s = ids0[k]
            for j in range(s - SECOND[1], s + SECOND[1] + 1):
                if 0 <= j < n and j not in fused and sess[j] == sess[s]:
                    fused[j] = NW * fused[s]
                    seed_of[j] = (s, abs(j - s))
    ids = np.array(list(fused))
    all_rank = np.empty(n)
    all_rank[np.argsort(-ms_all, kind="stable")] = np.arange(n)
    ms = ms_all[ids]
    ms_mm = _minmax(ms)
    ms_rank = np.empty(len(ids))
    ms_rank[np.argsort(-ms, kind="stable")] = np.arange(len(ids))
    pos = {int(i): k for k, i in enumerate(ids)}
    x = np.zeros((len(ids), len(FEATURES)))
    qv = d["q_tokens"][qi][d["q_keep"][qi]] if d["q_keep"][qi].any() else d["q_tokens"][qi]
    qm = qv.mean(0)
    qm = qm / np.linalg.norm(qm)
    third_set = set(int(i) for i in np.argsort(-ms_all, kind="stable")[:third]) if third else set()
    by_sess: dict[str, list[int]] = {}
    for i in ids:
        by_sess.setdefault(sess[int(i)], []).append(int(i))
    for k, i in enumerate(ids):
        i = int(i)
        f = fused[i]
        x[k, F["fused"]] = f
        x[k, F["bm"]] = bm[i] / top_b if (i in bm_rank and top_b > 0) else 0.0
        x[k, F["bm_rank"]] = np.log1p(bm_rank.get(i, C))
        x[k, F["in_bm"]] = i in bm_rank
        x[k, F["cos_raw"]] = cos[i] if i in cos_rank else lo
        x[k, F["cos_mm"]] = cos_mm.get(i, 0.0)
        x[k, F["cos_rank"]] = np.log1p(cos_rank.get(i, C))
        x[k, F["in_cos"]] = i in cos_rank
        x[k, F["n_src"]] = (i in bm_rank) + (i in cos_rank)
        x[k, F["min_rank"]] = np.log1p(min(bm_rank.get(i, C), cos_rank.get(i, C)))
        nb_only = i not in bm_rank and i not in cos_rank and i in seed_of
        x[k, F["nb"]] = nb_only
        if i in seed_of:
            s, dist = seed_of[i]
            x[k, F["nb_dist"]] = dist
            x[k, F["seed_ms"]] = ms_mm[pos[s]]
        else:
            x[k, F["seed_ms"]] = ms_mm[k]
        ctx = [ms_mm[pos[j]] for j in (i - 1, i + 1) if j in pos and sess[j] == sess[i]]
        x[k, F["ms_ctx"]] = max(ctx, default=0.0)
        ctx = [
            ms_mm[pos[j]] for j in range(i - 2, i + 3) if j != i and j in pos and sess[j] == sess[i]
        ]
        x[k, F["ctx2"]] = max(ctx, default=0.0)
        same = [ms_mm[pos[j]] for j in by_sess[sess[i]] if j != i]
        x[k, F["sess_max"]] = max(same, default=0.0)
        x[k, F["sess_n"]] = np.log1p(len(same))
        x[k, F["len"]] = np.log(d["_len"][i])
        x[k, F["cmean"]] = float(d["_cmean"][i] @ qm)
        x[k, F["in_all"]] = i in third_set
        x[k, F["all_rank"]] = np.log1p(all_rank[i])
    x[:, F["ms_raw"]] = ms
    t = tm[:, ids]
    x[:, F["cov8"]] = (t >= 0.8).mean(0)
    x[:, F["cov9"]] = (t >= 0.9).mean(0)
    x[:, F["soft8"]] = np.maximum(t - 0.8, 0).mean(0)
    x[:, F["tmin"]] = t.min(0)
    x[:, F["ms_mm"]] = ms_mm
    x[:, F["ms_gap"]] = ms - ms.max()
    x[:, F["ms_z"]] = (ms - ms.mean()) / max(float(ms.std()), 1e-9)
    x[:, F["ms_rank"]] = np.log1p(ms_rank)
    x[:, F["hand"]] = (1 - WM) * x[:, F["fused"]] + WM * ms_mm
    gold = np.array([int(i) in d["gold"][qi] for i in ids])
    return ids, x, gold


# -- the model: a linear score, pairwise logistic loss, L2, Newton's method ----------------


def _pairs(qs, cols, neg_top):
    """Feature differences gold - other, each question's pairs weighted to sum to 1."""
    diffs, weights = [], []
    for _, x, gold, _ in qs:
        if not gold.any() or gold.all():
            continue
        xs = x[:, cols]
        neg = np.flatnonzero(~gold)
        pos = np.flatnonzero(gold)
        if neg_top == -1:  # LambdaRank-like: |delta DCG| of swapping, in the hand order
            rank = np.empty(len(gold))
            rank[np.argsort(-x[:, F["hand"]], kind="stable")] = np.arange(len(gold))
            g = 1.0 / np.log2(2.0 + rank)
            dd = (xs[pos][:, None, :] - xs[neg][None, :, :]).reshape(-1, len(cols))
            ww = np.abs(g[pos][:, None] - g[neg][None, :]).reshape(-1)
            diffs.append(dd)
            weights.append(ww / ww.sum())
            continue
        if neg_top:
            by_hand = np.argsort(-x[neg, F["hand"]], kind="stable")[:neg_top]
            neg = neg[by_hand]
        dd = (xs[pos][:, None, :] - xs[neg][None, :, :]).reshape(-1, len(cols))
        diffs.append(dd)
        weights.append(np.full(len(dd), 1.0 / len(dd)))
    return np.concatenate(diffs), np.concatenate(weights)


def train(qs, cols, lam, neg_top=0, free=()):
    """Weights (on standardised features) and the standardisation (mean, scale). Columns in
    `free` (positions in cols) are not penalised: with a large lambda the model shrinks to
    them (e.g. to today's hand-formed score)."""
    allx = np.concatenate([x[:, cols] for _, x, _, _ in qs])
    mu, sd = allx.mean(0), allx.std(0)
    sd[sd < 1e-9] = 1.0
    dd, w = _pairs(qs, cols, neg_top)
    dd = dd / sd
    nq = w.sum()
    theta = np.zeros(len(cols))
    pen = np.full(len(cols), lam)
    pen[list(free)] = 1e-6
    for _ in range(30):
        z = dd @ theta
        p = 1.0 / (1.0 + np.exp(z))  # sigma(-z)
        grad = -(dd * (w * p)[:, None]).sum(0) / nq + pen * theta
        h = (dd * (w * p * (1 - p))[:, None]).T @ dd / nq + np.diag(pen)
        step = np.linalg.solve(h, grad)
        theta -= step
        if np.abs(step).max() < 1e-7:
            break
    return theta / sd, mu


def train_mlp(qs, cols, lam, hidden=8, steps=400, seed=0):
    """A small non-linear RankNet (linear + one tanh layer of `hidden` units), Adam, weight
    decay `lam`: only to see whether the features hold more than a linear score can take.
    Returns a scorer of raw feature rows."""
    xs = [x[:, cols] for _, x, _, _ in qs]
    big = np.concatenate(xs)
    mu, sd = big.mean(0), big.std(0)
    sd[sd < 1e-9] = 1.0
    big = (big - mu) / sd
    pi, ni, w = [], [], []
    at = 0
    for (_, _, gold, _), x in zip(qs, xs):
        if gold.any() and not gold.all():
            pos, neg = np.flatnonzero(gold) + at, np.flatnonzero(~gold) + at
            pp, nn = np.meshgrid(pos, neg, indexing="ij")
            pi.append(pp.ravel())
            ni.append(nn.ravel())
            w.append(np.full(pp.size, 1.0 / pp.size))
        at += len(x)
    pi, ni, w = np.concatenate(pi), np.concatenate(ni), np.concatenate(w)
    w = w / w.sum()
    rng = np.random.default_rng(seed)
    d = len(cols)
    params = {
        "a": np.zeros(d),
        "w1": rng.normal(0, 0.3, (d, hidden)),
        "b1": np.zeros(hidden),
        "w2": rng.normal(0, 0.3, hidden),
    }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    for t in range(1, steps + 1):
        h = np.tanh(big @ params["w1"] + params["b1"])
        sc = big @ params["a"] + h @ params["w2"]
        z = sc[pi] - sc[ni]
        g = -w / (1.0 + np.exp(z))  # dloss/dz
        gs = np.zeros(len(sc))
        np.add.at(gs, pi, g)
        np.add.at(gs, ni, -g)
        gh = np.outer(gs, params["w2"]) * (1 - h * h)
        grads = {
            "a": big.T @ gs + lam * params["a"],
            "w1": big.T @ gh + lam * params["w1"],
            "b1": gh.sum(0),
            "w2": h.T @ gs + lam * params["w2"],
        }
        for k in params:
            m[k] = 0.9 * m[k] + 0.1 * grads[k]
            v2[k] = 0.999 * v2[k] + 0.001 * grads[k] ** 2
            params[k] -= 0.02 * (m[k] / (1 - 0.9**t)) / (np.sqrt(v2[k] / (1 - 0.999**t)) + 1e-8)

    def scorer(x):
        z = (x - mu) / sd
        return z @ params["a"] + np.tanh(z @ params["w1"] + params["b1"]) @ params["w2"]

    return scorer


def _recall(s, gold, n_gold):
    """Recall at KS of the pool ordered by s (gold outside the pool counts as missed)."""
    order = np.argsort(-s, kind="stable")
    hits = gold[order]
    if not n_gold:
        return (0.0,) * len(KS)
    return tuple(float(hits[:k].sum()) / n_gold for k in KS)


def evaluate(data, names, cols, theta):
    """Rows (category, R@5, R@10, R@25); theta: linear weights or a scorer of feature rows."""
    rows = []
    for n in names:
        for cat, x, gold, n_gold in data[n]:
            s = theta(x[:, cols]) if callable(theta) else x[:, cols] @ theta
            rows.append((cat, *_recall(s, gold, n_gold)))
    return rows


def objective(rows):
    return sum(mean(rows))


def choices_grid(sets, lams, negs):
    return [(s, lam, neg) for s in sets for lam in lams for neg in negs]


_FITS: dict = {}


def fit(data, names, choice):
    key = (id(data), frozenset(names), choice)
    if key not in _FITS:
        _FITS[key] = _fit(data, names, choice)
    return _FITS[key]


def _fit(data, names, choice):
    s, lam, neg = choice
    if s.startswith("mlp:"):
        cols = [F[f] for f in SETS[s[4:]]]
        qs = [q for n in names for q in data[n]]
        return cols, train_mlp(qs, cols, lam)
    shrink = s.startswith("h+")  # the hand-formed score free, the rest penalised
    feats = ["hand", *SETS[s[2:]]] if shrink else SETS[s]
    cols = [F[f] for f in feats]
    qs = [q for n in names for q in data[n]]
    theta, _ = train(
        [(None, x, g, None) for _, x, g, _ in qs], cols, lam, neg, (0,) if shrink else ()
    )
    return cols, theta


def loo_rows(data, names, choice):
    """Plain LOO of one fixed choice: {held: rows}."""
    out = {}
    for held in names:
        cols, theta = fit(data, [n for n in names if n != held], choice)
        out[held] = evaluate(data, [held], cols, theta)
    return out


def nested(data, names, grid, label):
    """Nested LOO over `grid`; prints LOO and in-sample figures. Returns (held rows, in rows)."""
    t0 = time.perf_counter()
    # each outer fold: an inner LOO over its four conversations (train on 3, score the 4th)
    # picks the choice; nothing of the held-out conversation is seen before it is scored
    held_rows, chosen = [], {}
    for held in names:
        inner = [n for n in names if n != held]
        best, best_obj = None, -1.0
        for choice in grid:
            rows = [r for rr in loo_rows(data, inner, choice).values() for r in rr]
            obj = objective(rows)
            if obj > best_obj + 1e-12:
                best, best_obj = choice, obj
        chosen[held] = best
        cols, theta = fit(data, inner, best)
        held_rows += evaluate(data, [held], cols, theta)
    # in-sample: the choice best by plain LOO on all five, trained and scored on all five
    scored = [
        (objective([r for rr in loo_rows(data, names, c).values() for r in rr]), c) for c in grid
    ]
    best_all = max(scored, key=lambda t: t[0])[1]
    cols, theta = fit(data, names, best_all)
    in_rows = evaluate(data, names, cols, theta)
    print(f"\n## {label} ({len(grid)} choices, {time.perf_counter() - t0:.0f} s)")
    print(f"LOO (nested) R@5/10/25 {fmt(mean(held_rows))}")
    print(f"in-sample    R@5/10/25 {fmt(mean(in_rows))}  choice {best_all}")
    for c, name in CATS.items():
        print(f"  {name:11s} LOO {fmt(mean(held_rows, c))}  in-sample {fmt(mean(in_rows, c))}")
    for held, c in chosen.items():
        print(f"  held out {held}: chose {c}")
    if not callable(theta):
        b = best_all[0]
        feats = ["hand", *SETS[b[2:]]] if b.startswith("h+") else SETS[b]
        w = ", ".join(f"{feats[k]} {theta[k]:+.3f}" for k in range(len(cols)))
        print(f"  weights (all five, raw features): {w}")
    return held_rows, in_rows, best_all, theta


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cache")
    ap.add_argument("--third", default="0", help="MaxSim-over-every-turn top K (comma list)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--second", default="0/0", help="second-round neighbours seeds/radius, list")
    ap.add_argument("--hand-loo", action="store_true", help="the hand-formed family's LOO")
    ap.add_argument("--mlp", default="", help="sets for a small non-linear RankNet (probe)")
    ap.add_argument("--shrink", default="", help="sets beside the hand score, shrunk to it")
    ap.add_argument("--only-joint", action="store_true", help="no per-set runs")
    ap.add_argument("--lams", default="0.001,0.01,0.1,1")
    ap.add_argument("--negs", default="0,30", help="negatives: all (0), top N by hand, -1 dcg")
    args = ap.parse_args()
    print("# python " + " ".join(sys.argv))
    convs = load(args.cache)
    if args.hand_loo:
        # the hand-formed family's own LOO on this pool (query content tokens, as the engine):
        # BM25 weight x MaxSim weight, each fold choosing on the other four
        import late_tune

        space = {
            "c": [C], "wb": [0.5, 0.6, 0.7], "nb": [NB], "ns": [NS], "nw": [NW],
            "wm": [0.6, 0.7, 0.8], "mnorm": ["minmax"], "dense": ["bge"], "qc": [True], "h": [0],
        }  # fmt: skip
        late_tune.loo(convs, space, ce=False, label="hand-formed: BM25 weight x MaxSim weight")
        return 0
    names = [d["project"] for d in convs]
    print(f"# {len(convs)} conversations, {sum(len(d['questions']) for d in convs)} questions")
    global SECOND
    for third, second in [
        (int(k), tuple(int(v) for v in sec.split("/")))
        for k in args.third.split(",")
        for sec in args.second.split(",")
    ]:
        SECOND = second
        data = {}
        size, cover = [], []
        for d in convs:
            _prepare(d)
            rows = []
            for qi in range(len(d["questions"])):
                ids, x, gold = question(d, qi, third)
                rows.append((d["category"][qi], x, gold, len(d["gold"][qi])))
                size.append(len(ids))
                cover.append(gold.sum() / max(len(d["gold"][qi]), 1))
            data[d["project"]] = rows
        print(
            f"\n# third source: MaxSim top {third} over every turn"
            if third
            else "\n# no third source"
        )
        if second[0]:
            print(
                f"# second-round neighbours: {second[0]} seeds by the hand score, "
                f"radius {second[1]}"
            )
        print(
            f"pool: mean {np.mean(size):.1f} candidates a question, "
            f"gold in the pool {np.mean(cover):.3f}"
        )
        hand = evaluate(data, names, [F["hand"]], np.array([1.0]))
        print(f"hand-formed order (0.3 fused + 0.7 minmax MaxSim, fixed): {fmt(mean(hand))}")
        for c, name in CATS.items():
            print(f"  {name:11s} {fmt(mean(hand, c))}")
        sets = args.sets.split(",")
        sets = [*sets, *(f"h+{x}" for x in args.shrink.split(",") if x)]
        sets = [*sets, *(f"mlp:{x}" for x in args.mlp.split(",") if x)]
        if third:
            SETS["all+third"] = [f for f in FEATURES]
            SETS["+src+nb+third"] = [*SETS["+src+nb"], "in_all", "all_rank"]
            sets = [*sets, "all+third", "+src+nb+third"]
        grid = choices_grid(
            sets, [float(x) for x in args.lams.split(",")], [int(x) for x in args.negs.split(",")]
        )
        nested(data, names, grid, f"learned fusion, third source {third}")
        for s in [] if args.only_joint else sets:
            single = choices_grid(
                [s],
                [float(x) for x in args.lams.split(",")],
                [int(x) for x in args.negs.split(",")],
            )
            nested(
                data,
                names,
                single,
                f"feature set {s} only (lambda, negatives by nested LOO), third {third}",
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
