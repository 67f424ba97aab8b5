"""Context from a hit's source: the memories next to it (the neighbouring items of a note,
the neighbouring turns of a conversation) join the candidates before the final gate
(`neighbours`) and rise after re-ranking (`lift`)."""

from __future__ import annotations

import functools
import math

from memls import protocol
from memls.retrieval.tuning import RetrievalConfig
from memls.scope import Visibility
from memls.store.search import SearchQueries


@functools.lru_cache(maxsize=8192)
def start_line(source_range: str | None) -> int | None:
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
        start = start_line(row["source_range"])
        if start is not None:
            hits.setdefault(row["source_uri"], []).append((start, row["id"]))
    out = dict(fused)
    for uri, seeded in hits.items():
        for row in by_source.get(uri, []):
            start = start_line(row["source_range"])
            if start is None:
                continue
            for seed_start, seed in seeded:
                if row["id"] != seed and abs(start - seed_start) <= config.neighbours:
                    share = fused[seed] * config.neighbour_weight
                    if share > out.get(row["id"], 0.0):
                        out[row["id"]] = share
    return out


def lift(head, logits: list[float], config: RetrievalConfig) -> dict[str, tuple[float, str]]:
    """Context after re-ranking: the units within `lift_radius` places of the `lift_seeds`
    best re-ranked memories in their source rise to the seed's logit minus `lift_margin` when
    that is above their own (the reply to a matching turn, the next bullet of a matching note
    often holds the answer). Only re-ranked units move. id -> (logit, seed id)."""
    if config.lift_seeds <= 0:
        return {}
    placed: dict[tuple[str, int], int] = {}
    for i, item in enumerate(head):
        start = start_line(item[3].source_range)
        if item[3].source_uri and start is not None:
            placed[(item[3].source_uri, start)] = i
    lifted: dict[str, tuple[float, str]] = {}
    seeds = sorted(range(len(head)), key=lambda i: -logits[i])[: config.lift_seeds]
    for i in seeds:
        seed = head[i][3]
        start = start_line(seed.source_range)
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
