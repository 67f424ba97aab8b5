"""The query pipeline's settings (`memls.retrieval.pipeline`), each default with the
measurement that chose it; config.toml's [retrieval] overrides some of them."""

from __future__ import annotations

from dataclasses import dataclass


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
    # of 77. 20 seeds (LOO 0.750 / 0.817 / 0.890) cost 129 candidates and more time (+24 ms
    # p50 over 3 / 10 / 0.5 against +16 ms, load ~6) for nothing LOO sees (docs/benchmarks.md,
    # "Tried and not kept").
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
