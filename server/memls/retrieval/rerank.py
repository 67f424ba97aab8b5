"""The cross-encoder stage: which fused results it re-scores (the uncertain head), their
logits, and the order those give (the gate, the blend, the lift from `context.lift`). Pure
but for `scores`, which runs the model."""

from __future__ import annotations

import math

from memls import protocol
from memls.models import ModelRuntime
from memls.retrieval import fusion
from memls.retrieval.tuning import RetrievalConfig

Scored = tuple[float, float, dict[str, float], protocol.Memory]
"""(fused score x boost, boost, the boost's factors, the memory)."""


def head(
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


def scores(
    models: ModelRuntime | None, query: str, head: list[Scored], degraded: list[str]
) -> list[float] | None:
    """Cross-encoder logits for the head; None when switched off (not degraded: explain
    shows "fused") or unavailable (degraded, named)."""
    if models is None:
        degraded.append("reranking unavailable: models are not loaded (vectors = false)")
        return None
    reranker = models.reranker
    if not reranker.enabled:
        return None
    try:
        return [float(x) for x in reranker.rerank(query, [item[3].content for item in head])]
    except Exception as exc:  # noqa: BLE001 - degraded loudly: the result says why
        degraded.append(f"reranking unavailable: {exc}")
        return None


def order(unique, logits, config, lifted=None, at=0):
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
