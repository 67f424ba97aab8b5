"""The query pipeline. Hard filters (project, validity, status, trust) are applied by every
candidate source (SQL for BM25, `where` for Chroma) AND again by the final SQL fetch of the
fused candidates, so no path, shortcut or cache can return a memory the filters exclude.

The stages in their own modules: `tuning` (RetrievalConfig, the measured defaults), `context`
(neighbours of a hit in its source, and their lift), `rerank` (the cross-encoder's head, its
logits and the order they give)."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from memls import protocol, timeutil
from memls.index.chroma import VectorIndex
from memls.index.chroma import where as chroma_where
from memls.models import ModelRuntime
from memls.models.late import MODEL_TAG, maxsim_packed
from memls.notes.scope import covers_any
from memls.retrieval import boosts, fusion, rerank
from memls.retrieval.context import lift, neighbours
from memls.retrieval.rerank import Scored
from memls.retrieval.tuning import RetrievalConfig
from memls.scope import Visibility
from memls.store.search import SearchQueries

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
    # with paths, a memory scoped to other files (a rule of another folder) is not given
    gated = [
        m
        for m in records
        if m.id in fused and (not params.paths or covers_any(m.scope, params.paths))
    ]
    cited = r.reads.citing([m.id for m in gated], params.paths) if params.paths else set()
    unique = _boosted(gated, fused, seen.now, config, cited)
    at, head = rerank.head(unique, params, config, depth)
    logits = rerank.scores(r.models, params.query, head, degraded) if head else None
    lifted = lift(head, logits, config) if logits else {}
    results: list[protocol.QueryHit] = []
    ordered = boosts.fresh_first(
        _current_first(
            _related(r.reads, rerank.order(unique, logits, config, lifted, at), params.k)
        )
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
    turns), and moving them cost 4 points of R@5 on the LoCoMo dev split. Every
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
