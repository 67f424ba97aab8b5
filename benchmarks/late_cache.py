"""Encode the LoCoMo dev turns and questions once, for offline tuning (`late_tune.py`).

Per conversation: turn texts (as `locomo.py` stores them), BM25 candidates from an FTS5 table
built like the store's (porter, stop words out of the MATCH), bge dense vectors, the
late-interaction token vectors of turns (float16, content tokens only) and questions (all
tokens and content tokens), and cross-encoder logits for a candidate pool per question.

    python benchmarks/late_cache.py ../shared/data/locomo/locomo-dev.json --out CACHE --ce 30
    python benchmarks/late_cache.py ../shared/data/locomo/locomo-dev.json --out CACHE \
        --fill '{"c": 25, ...}' --extra CACHE-extra --top 12

Writes one pickle per conversation into CACHE (nothing to benchmarks/results/: the figures come
from `late_tune.py` over the cache; docs/benchmarks.md gives the commands).

--fill: cross-encoder logits for the pairs a pipeline configuration (late_tune's keys) puts in
its top N that the cache lacks, written to the --extra folder (the cache is left as it is;
late_tune.py --extra merges them).
"""

from __future__ import annotations

import argparse
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
from memls.store.search import match_expression


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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--out", required=True, help="the cache folder")
    ap.add_argument("--ce", type=int, default=0, help="cross-encoder logits for a pool of N")
    ap.add_argument("--fill", action="append", default=[], help="a configuration (JSON)")
    ap.add_argument("--extra", help="with --fill: the folder for the extra logits")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
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
    from late_tune import load, stage1

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
    from late_tune import base_scores, pipeline

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
