"""The query pipeline. Hard filters (project, validity, status, trust) are applied by every
candidate source (SQL for BM25, `where` for Chroma) AND again by the final SQL fetch of the
fused candidates, so no path, shortcut or cache can return a memory the filters exclude."""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, replace
from typing import Any

from memls import protocol, timeutil
from memls.index.chroma import VectorIndex
from memls.index.chroma import where as chroma_where
from memls.models import ModelRuntime
from memls.models.late import MODEL_TAG, maxsim_packed
from memls.retrieval import boosts, fusion
from memls.scope import Visibility
from memls.store.search import SearchQueries


@dataclass(frozen=True)
class RetrievalConfig:
    # Every default below was chosen by leave-one-conversation-out on LoCoMo's dev split
    # (benchmarks/late_tune.py; docs/benchmarks.md gives the LOO and in-sample figures).
    candidates: int = 25  # per source, before fusion (the engine asks max(this, k))
    lexical_weight: float = 0.6  # score fusion weight of BM25
    fusion: str = "score"  # "score" | "rrf"
    rerank: bool = True
    # The cross-encoder head. Over this candidate stage it cannot raise R@5 / R@10 / R@25 at
    # any budget (late-tune-budget-cheap.txt: nested LOO over caps of 0-10 pairs, where the
    # head sits, cut, margin, lift, blend: LOO R@5 0.749-0.757 against 0.757 with no pair).
    # What it does raise is the first result (late-tune-first.txt): a gold turn first in
    # 0.507 of questions without it, 0.543 / 0.559 / 0.567 with 2 / 3 / 5 pairs at the top
    # (MRR@25 0.638 -> 0.657 / 0.669 / 0.673), recall at 5 / 10 / 25 unchanged by
    # construction. 3 pairs: most of the gain at ~10-13 ms a pair.
    rerank_depth: int = 3  # at most this many consecutive fused results go to the cross-
    #                        encoder, from rank `rerank_start`...
    rerank_relative: float = 0.0  # ...and only those scoring at least this share of the top
    rerank_start: int = 0  # the head starts at this rank (0: the top; 4: the edge of the
    #                        first five, what small heads chose over the earlier neighbours)
    rerank_anchor: int = 5  # the page boundary whose crossing is uncertain...
    rerank_margin: float = 9.0  # ...: only results within this x the best of it (9: off)
    rerank_blend: float = 0.0  # head order: (1 - b) z(logit) + b z(fused score); 0: logit
    interactive_depth: int = 0  # cross-encoder pairs of depth "interactive" (0: none)
    late: bool = True  # MaxSim late interaction over the fused candidates (interactive, default)
    late_weight: float = 0.7  # fused' = (1 - w) * fused + w * MaxSim...
    late_minmax: bool = True  # ...min-maxed over the candidates (else per query token)
    rerank_mode: str = "gated"  # "gated" | "replace" | "rrf"
    rerank_floor: float = -4.0  # gated: the head is re-ordered only if some logit reaches it
    boosts: bool = True
    query_prefix: str = ""  # embedder query instruction (measured; empty by default)
    # Neighbours (late-tune-ideas-cheap.txt): radius 4 around the 10 best fused hits, at the
    # seed's own score, then MaxSim judges them: interactive LOO 0.749 / 0.817 / 0.888 against
    # 0.722 / 0.805 / 0.880 (in-sample) with 3 / 10 / 0.5, ~87 candidates a question instead
    # of 77. 20 seeds (late-tune-ideas-neighbours.txt: LOO 0.750 / 0.817 / 0.890) cost 129
    # candidates and more time (benchmarks/results/neighbour-cost.txt: +24 ms p50 over
    # 3 / 10 / 0.5 against +16 ms, load ~6) for nothing LOO sees.
    neighbours: int = 4  # add memories within N units of a top hit in its source
    neighbour_seeds: int = 10  # how many top fused hits lend their neighbours a place
    neighbour_weight: float = 1.0  # a neighbour's fused score: this share of its seed's
    # Without late interaction (depth none) the neighbours stay as before (3 / 10 / 0.5): at
    # 4 / 20 / 0.85 they crowd the fused order (engine, dev split: R@5 0.548 against 0.608).
    plain_neighbours: int = 3
    plain_neighbour_seeds: int = 10
    plain_neighbour_weight: float = 0.5
    lift_seeds: int = 0  # after re-ranking, the best N lift the units within...
    #                     (0: no lift; the budget LOO chose none for heads <= 6, 5 for heads
    #                     of 8-10 from the top)
    lift_radius: int = 2  # ...this many places of them in their source...
    lift_margin: float = 5.0  # ...to their own logit minus this (0 seeds: no lift)


DEPTHS = ("none", "interactive", "default")


def depth_of(params: protocol.QueryParams) -> str:
    """How much work a query buys: "lexical" (BM25 only, `mode: lexical`), "none" (BM25 +
    vectors, fused), "interactive" (+ late interaction), "default" (+ the cross-encoder on the
    uncertain head). The request's `depth` when it has one, else from its `mode`."""
    if params.mode == "lexical":
        return "lexical"
    depth = getattr(params, "depth", None)
    if depth:
        return str(depth)
    return "interactive" if params.mode == "interactive" else "default"


class Retriever:
    """One query's collaborators: the store's filtered reads, the vector index and the models
    (None when vectors are off), and the configuration."""

    def __init__(
        self,
        reads: SearchQueries,
        index: VectorIndex | None,
        models: ModelRuntime | None,
        config: RetrievalConfig,
    ) -> None:
        self.reads = reads
        self.index = index
        self.models = models
        self.config = config

    def lexical(self, seen: Visibility, text: str, n: int) -> dict[str, float]:
        """BM25 candidates (higher is better), hard filters in the same statement."""
        return self.reads.bm25(seen, text, n)

    def vector(self, seen: Visibility, text: str, n: int) -> dict[str, float]:
        """Cosine candidates for a query text (embeds it, then `nearest`)."""
        assert self.models is not None
        return self.nearest(
            seen, self.models.embedder.embed([self.config.query_prefix + text])[0], n
        )

    def nearest(self, seen: Visibility, qv: Any, n: int) -> dict[str, float]:
        """Cosine candidates from each project's Chroma collection, passed through the hard
        filters before they leave this function (see `VectorIndex.nearest`)."""
        assert self.index is not None
        where = chroma_where(seen)
        found: dict[str, float] = {}
        for project in seen.projects:
            (hits,) = self.index.nearest(
                project, [qv], n, where, lambda ids: self.reads.admitted(seen, ids)
            )
            for memory_id, cosine in hits:
                found[memory_id] = max(cosine, found.get(memory_id, -1.0))
        return found

    def search(self, params: protocol.QueryParams, seen: Visibility) -> protocol.QueryResult:
        return search(self, params, seen)


Scored = tuple[float, float, dict[str, float], protocol.Memory]
"""(fused score x boost, boost, the boost's factors, the memory)."""


def search(r: Retriever, params: protocol.QueryParams, seen: Visibility) -> protocol.QueryResult:
    """Candidates -> fusion -> neighbours -> the final gate -> boosts and dedup -> the
    cross-encoder over the adaptive head -> lift -> results that explain their scores."""
    started = time.perf_counter()
    degraded: list[str] = []
    depth = depth_of(params)
    config = r.config
    query_tokens = _submit_late(r, params, depth)
    lex, vec, early = _candidates(r, params, seen, degraded)
    if config.fusion == "rrf":
        fused = fusion.rrf(
            sorted(lex, key=lambda i: lex[i], reverse=True),
            sorted(vec, key=lambda i: vec[i], reverse=True),
        )
    else:
        fused = fusion.score_fusion(lex, vec, lexical_weight=config.lexical_weight)
    if not fused:
        return protocol.QueryResult(project=seen.projects[0], results=[], degraded=degraded)
    if query_tokens is None:  # no late interaction to judge them: fewer, weaker neighbours
        config = replace(
            config,
            neighbours=config.plain_neighbours,
            neighbour_seeds=config.plain_neighbour_seeds,
            neighbour_weight=config.plain_neighbour_weight,
        )
    if config.neighbours > 0:
        fused = neighbours(r.reads, seen, fused, config)
    late: dict[str, float] = {}
    if query_tokens is not None:
        late = _late(r, seen, query_tokens, fused, degraded)
        if late:
            w = config.late_weight
            fused = {i: (1.0 - w) * s + w * late[i] for i, s in fused.items()}
    # The final gate: the candidates' records through the same hard filters (the BM25 ones
    # were read while the query embedded; links and contradictions later, for the results).
    later = [i for i in fused if i not in early]
    records = [*early.values(), *r.reads.visible(seen, later, relations=False)]
    gated = [m for m in records if m.id in fused]
    cited = r.reads.citing([m.id for m in gated], params.paths) if params.paths else set()
    unique = _boosted(gated, fused, seen.now, config, cited)
    at, head = _head(unique, params, config, depth)
    logits = _rerank(r, params.query, head, degraded) if head else None
    lifted = _lift(head, logits, config) if logits else {}
    results: list[protocol.QueryHit] = []
    ordered = boosts.fresh_first(
        _current_first(_related(r.reads, _order(unique, logits, config, lifted, at), params.k))
    )
    for final, item, logit, reordered in ordered[: params.k]:
        _, _, factors, m = item
        explain = None
        if params.explain:
            explain = protocol.Explain(
                bm25=round(lex[m.id], 6) if m.id in lex else None,
                vector=round(vec[m.id], 6) if m.id in vec else None,
                fused=round(fused[m.id], 6),
                boosts={k: round(v, 6) for k, v in factors.items()},
                rerank=round(logit, 6) if logit is not None else None,
                stage="rerank" if reordered else "fused",
                lifted_by=lifted[m.id][1] if reordered and m.id in lifted else None,
            )
        fields = {f: getattr(m, f) for f in m.__struct_fields__}
        results.append(protocol.QueryHit(**fields, score=round(final, 6), explain=explain))
    took = (time.perf_counter() - started) * 1000
    return protocol.QueryResult(
        project=seen.projects[0], results=results, degraded=degraded, took_ms=round(took, 3)
    )


def _submit_late(r: Retriever, params: protocol.QueryParams, depth: str) -> Any:
    """Start encoding the query's tokens on the model pool (beside the query embedding) when
    the depth uses late interaction; None otherwise."""
    if depth not in ("interactive", "default") or not r.config.late:
        return None
    if r.models is None or r.index is None:
        return None
    return r.models.late.submit([params.query])


def _late(
    r: Retriever, seen: Visibility, query: Any, fused: dict[str, float], degraded: list[str]
) -> dict[str, float]:
    """MaxSim of the query's tokens against each candidate's stored token vectors, per query
    token (0..1); a candidate without vectors yet (just stored) gets the candidates' mean.
    Empty when the model is unavailable (degraded, named) or no candidate has vectors."""
    try:
        (tokens,) = query.result()
    except Exception as exc:  # noqa: BLE001 - degraded loudly: the result says why
        degraded.append(f"late interaction unavailable: {exc}")
        return {}
    if len(tokens) == 0:
        return {}
    blobs = r.reads.token_vectors(seen, fused, MODEL_TAG)
    if not blobs:
        return {}
    ids = list(blobs)
    dim = tokens.shape[1]
    scores = maxsim_packed(tokens, [blobs[i] for i in ids], dim) / len(tokens)
    if r.config.late_minmax and len(scores) > 1:
        lo, hi = float(scores.min()), float(scores.max())
        scores = (scores - lo) / max(hi - lo, 1e-9)
    found = {i: float(s) for i, s in zip(ids, scores)}
    mean = float(scores.mean())
    return {i: found.get(i, mean) for i in fused}


def _candidates(
    r: Retriever, params: protocol.QueryParams, seen: Visibility, degraded: list[str]
) -> tuple[dict[str, float], dict[str, float], dict[str, protocol.Memory]]:
    """BM25 and vector candidates, and the records of the BM25 ones: the query embeds on the
    model pool while BM25 runs here and the final gate reads its candidates (both release the
    GIL), so that read is off the query's critical path. A source that is off or failing is
    named in `degraded`."""
    n = max(r.config.candidates, params.k)
    embedding = None
    if r.index is not None and r.models is not None and params.mode != "lexical":
        embedding = r.models.embedder.submit([r.config.query_prefix + params.query])
    elif r.index is None:
        degraded.append("vector search is switched off (settings: vectors = false)")
    lex = r.lexical(seen, params.query, n)
    early: dict[str, protocol.Memory] = {}
    vec: dict[str, float] = {}
    if embedding is not None:
        early = {m.id: m for m in r.reads.visible(seen, list(lex), relations=False)}
        try:
            vec = r.nearest(seen, embedding.result()[0], n)
        except Exception as exc:  # noqa: BLE001 - degraded loudly: the result says why
            degraded.append(f"vector search unavailable: {exc}")
    return lex, vec, early


def _boosted(
    memories: list[protocol.Memory],
    fused: dict[str, float],
    now: str,
    config: RetrievalConfig,
    cited: set[str] | frozenset[str] = frozenset(),
) -> list[Scored]:
    """Type weight x decay x feedback (x the cited-path boost) on the fused score, best first,
    one result per canonical text (a superseded copy of the same words, say)."""
    now_us = timeutil.to_micros(now)
    scored: list[Scored] = []
    for m in memories:
        factors = {"type": 1.0, "decay": 1.0, "feedback": 1.0}
        if config.boosts:
            factors = {
                "type": boosts.type_weight(m.type),
                "decay": boosts.decay(m.type, now_us - timeutil.to_micros(m.valid_from)),
                "feedback": boosts.feedback(m.feedback_score),
            }
        if m.id in cited:
            factors["cites_path"] = boosts.CITED_PATH_BOOST
        boost = math.prod(factors.values())
        scored.append((fused[m.id] * boost, boost, factors, m))
    scored.sort(key=lambda item: (-item[0], item[3].id))
    hashes: set[str] = set()
    unique = []
    for item in scored:
        if item[3].canonical_hash not in hashes:
            hashes.add(item[3].canonical_hash)
            unique.append(item)
    return unique


def _head(
    unique: list[Scored], params: protocol.QueryParams, config: RetrievalConfig, depth: str
) -> tuple[int, list[Scored]]:
    """What the cross-encoder re-scores, as (its first rank, the head): the configured number
    for the depth (a request's rerankDepth wins) of consecutive results from rank
    `rerank_start` (0: the top), and of those only the ones whose order is still uncertain:
    scoring at least `rerank_relative` x the best and within `rerank_margin` x the best of
    the boundary between ranks `rerank_anchor` and `rerank_anchor` + 1 (where a result
    enters or leaves the first page). A request's own rerankDepth takes the top N (the cut
    still applies). A head of fewer than two is not worth a pair."""
    pairs = 0
    if config.rerank and params.rerank is not False and depth in ("interactive", "default"):
        pairs = config.interactive_depth if depth == "interactive" else config.rerank_depth
        if params.rerank_depth is not None:
            pairs = params.rerank_depth
    if not unique or pairs <= 0:
        return 0, []
    # a request's own rerankDepth asks for the top N (the relative cut still applies)
    own = params.rerank_depth is not None
    start = 0 if own else config.rerank_start
    margin = math.inf if own else config.rerank_margin
    top = unique[0][0]
    anchor = config.rerank_anchor
    if 0 < anchor < len(unique):
        bound = 0.5 * (unique[anchor - 1][0] + unique[anchor][0])
    else:
        bound = unique[-1][0]
    window = unique[start : start + pairs]
    keep = [
        i
        for i, item in enumerate(window)
        if item[0] >= config.rerank_relative * top and abs(item[0] - bound) <= margin * top
    ]
    if len(keep) < 2:
        return 0, []
    # the scores are sorted, so the kept ones are consecutive
    return start + keep[0], window[keep[0] : keep[-1] + 1]


def _rerank(
    r: Retriever, query: str, head: list[Scored], degraded: list[str]
) -> list[float] | None:
    """Cross-encoder logits for the head; None when switched off (not degraded: explain
    shows "fused") or unavailable (degraded, named)."""
    if r.models is None:
        degraded.append("reranking unavailable: models are not loaded (vectors = false)")
        return None
    reranker = r.models.reranker
    if not reranker.enabled:
        return None
    try:
        return [float(x) for x in reranker.rerank(query, [item[3].content for item in head])]
    except Exception as exc:  # noqa: BLE001 - degraded loudly: the result says why
        degraded.append(f"reranking unavailable: {exc}")
        return None


def _related(reads: SearchQueries, ordered: list[Any], k: int) -> list[Any]:
    """The first k results with their links and open contradictions, and so is every other
    candidate one of them names (the other side `_current_first` may move up, and so on):
    only those can reach the first k, so the rest need not pay for the lookups. The records
    are those of the final gate; only their edges are read."""
    position = {entry[1][3].id: i for i, entry in enumerate(ordered)}
    out = list(ordered)
    wanted = [entry[1][3].id for entry in ordered[:k]]
    done: set[str] = set()
    while wanted:
        done.update(wanted)
        named: list[str] = []
        for memory in reads.related([ordered[position[i]][1][3] for i in wanted]):
            i = position[memory.id]
            final, item, logit, reordered = out[i]
            out[i] = (final, (*item[:3], memory), logit, reordered)
            refs = (*memory.contradicts, *memory.contradicted_by)
            named += [x for ref in refs for x in (ref.id, ref.current) if x in position]
        wanted = [i for i in dict.fromkeys(named) if i not in done]
    return out


def _current_first(ordered: list[Any]) -> list[Any]:
    """Both sides of an open contradiction in the results: the one that stands now (the newer
    statement, unless the older was approved later) is moved just above the other, with its
    score, so a reader never meets the stale side first.

    Only for typed statements (decision, convention, ... — not `note`): on free text such as
    conversation turns the scorer still raises many false pairs (1,155 among LoCoMo's 2,760 dev
    turns), and moving them cost 4 points of R@5 (benchmarks/results/locomo-house.txt). Every
    result still carries its contradicts / contradictedBy marks."""
    out = list(ordered)
    position = {entry[1][3].id: i for i, entry in enumerate(out)}
    for entry in list(out):
        memory = entry[1][3]
        if memory.type == "note":
            continue
        for ref in (*memory.contradicts, *memory.contradicted_by):
            here, there = position.get(memory.id), position.get(ref.current)
            if (
                ref.current == memory.id
                or here is None
                or there is None
                or there < here
                or out[there][1][3].type == "note"
            ):
                continue
            moved = out.pop(there)
            out.insert(here, (out[here][0], *moved[1:]))
            position = {e[1][3].id: i for i, e in enumerate(out)}
    return out


@functools.lru_cache(maxsize=8192)
def _start(source_range: str | None) -> int | None:
    where = protocol.SourceRange.parse(source_range)
    return where.start_line if where is not None else None


def neighbours(
    reads: SearchQueries, seen: Visibility, fused: dict[str, float], config: RetrievalConfig
) -> dict[str, float]:
    """Context expansion: memories next to a top hit in the same source (the neighbouring
    items of a note, the neighbouring turns of a conversation) join the candidates with a
    share of the hit's score. The hard filters apply to them like to every candidate."""
    seeds = sorted(fused, key=lambda i: fused[i], reverse=True)[: config.neighbour_seeds]
    placed, by_source = reads.placed(seen, seeds)
    hits: dict[str, list[tuple[int, str]]] = {}
    for row in placed:
        start = _start(row["source_range"])
        if start is not None:
            hits.setdefault(row["source_uri"], []).append((start, row["id"]))
    out = dict(fused)
    for uri, seeded in hits.items():
        for row in by_source.get(uri, []):
            start = _start(row["source_range"])
            if start is None:
                continue
            for seed_start, seed in seeded:
                if row["id"] != seed and abs(start - seed_start) <= config.neighbours:
                    share = fused[seed] * config.neighbour_weight
                    if share > out.get(row["id"], 0.0):
                        out[row["id"]] = share
    return out


def _lift(head, logits: list[float], config: RetrievalConfig) -> dict[str, tuple[float, str]]:
    """Context after re-ranking: the units within `lift_radius` places of the `lift_seeds`
    best re-ranked memories in their source rise to the seed's logit minus `lift_margin` when
    that is above their own (the reply to a matching turn, the next bullet of a matching note
    often holds the answer). Only re-ranked units move. id -> (logit, seed id)."""
    if config.lift_seeds <= 0:
        return {}
    placed: dict[tuple[str, int], int] = {}
    for i, item in enumerate(head):
        start = _start(item[3].source_range)
        if item[3].source_uri and start is not None:
            placed[(item[3].source_uri, start)] = i
    lifted: dict[str, tuple[float, str]] = {}
    seeds = sorted(range(len(head)), key=lambda i: -logits[i])[: config.lift_seeds]
    for i in seeds:
        seed = head[i][3]
        start = _start(seed.source_range)
        if not seed.source_uri or start is None:
            continue
        for offset in range(-config.lift_radius, config.lift_radius + 1):
            j = placed.get((seed.source_uri, start + offset))
            if j is None or j == i:
                continue
            value = logits[i] - config.lift_margin
            other = head[j][3].id
            if value > logits[j] and value > lifted.get(other, (-math.inf, ""))[0]:
                lifted[other] = (value, seed.id)
    return lifted


def _order(unique, logits, config, lifted=None, at=0):
    """(final score, item, cross-encoder logit or None, re-ordered by it) in result order.
    The head is `unique[at : at + len(logits)]`: what is above it keeps its fused order and
    stays above it, what is below stays below."""
    if not logits:
        return [(item[0], item, None, False) for item in unique]
    lifted = lifted or {}
    above = unique[:at]
    unique = unique[at:]
    head, tail = unique[: len(logits)], unique[len(logits) :]
    confident = max(logits) >= config.rerank_floor
    if config.rerank_mode == "gated" and not confident:
        # no passage in the head looks like an answer: keep the fused order
        return [(item[0], item, None, False) for item in above] + [
            (item[0], item, logits[i] if i < len(logits) else None, False)
            for i, item in enumerate(unique)
        ]
    if config.rerank_mode == "rrf":
        by_fused = list(range(len(head)))
        by_ce = sorted(by_fused, key=lambda i: -logits[i])
        rr = fusion.rrf([str(i) for i in by_fused], [str(i) for i in by_ce])
        keyed = [(rr[str(i)], head[i], logits[i]) for i in range(len(head))]
    elif config.rerank_blend > 0 and len(head) > 1:
        # the (lifted) logit and the fused score, each as a z-score over the head, blended
        ce = [lifted.get(head[i][3].id, (logits[i], ""))[0] for i in range(len(head))]
        blended = [
            (1.0 - config.rerank_blend) * a + config.rerank_blend * b
            for a, b in zip(_z(ce), _z([item[0] for item in head]))
        ]
        keyed = [(_sigmoid(blended[i]), head[i], logits[i]) for i in range(len(head))]
    else:  # "replace" and confident "gated": the cross-encoder orders the head, boosts kept
        keyed = [
            (
                _sigmoid(lifted.get(head[i][3].id, (logits[i], ""))[0]) * head[i][1],
                head[i],
                logits[i],
            )
            for i in range(len(head))
        ]
    keyed.sort(key=lambda x: (-x[0], x[1][3].id))
    # Head scores sit above every tail score: 1 + value in the head; value / (1 + value) after.
    out = [(1.0 + k, item, logit, True) for k, item, logit in keyed]
    out += [(item[0] / (1.0 + item[0]), item, None, False) for item in tail]
    # Above the head: fused order, scores above every head score.
    over = max((entry[0] for entry in out), default=1.0) + 1.0
    out[:0] = [(over + item[0] / (1.0 + item[0]), item, None, False) for item in above]
    return out


def _z(values: list[float]) -> list[float]:
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return [(v - mean) / max(std, 1e-6) for v in values]


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))
