"""How the cross-encoder's logits order the head: adaptive depth, the gate, the lift of
neighbouring units. Pure functions over made-up candidates (the models are tested elsewhere)."""

from __future__ import annotations

from memls import protocol as p
from memls.retrieval import context, rerank
from memls.retrieval.tuning import RetrievalConfig

CONFIG = RetrievalConfig(rerank_blend=0.0, lift_seeds=5)  # the logit alone orders the head


def item(memory_id: str, fused: float, uri: str | None = None, line: int | None = None):
    memory = p.Memory(
        id=memory_id,
        project="alpha",
        content=memory_id,
        type="note",
        status="active",
        trust="candidate",
        valid_from="2026-01-01T00:00:00Z",
        recorded_at="2026-01-01T00:00:00Z",
        content_hash=memory_id,
        canonical_hash=memory_id,
        source_uri=uri,
        source_range=None if line is None else f"{line}-{line}",
    )
    return (fused, 1.0, {}, memory)


def ids(ordered) -> list[str]:
    return [entry[1][3].id for entry in ordered]


def test_the_cross_encoder_orders_the_head_and_the_tail_keeps_its_place():
    head = [item("a", 0.9), item("b", 0.8), item("c", 0.7)]
    tail = [item("d", 0.6), item("e", 0.5)]
    ordered = rerank.order(head + tail, [-2.0, 5.0, 1.0], CONFIG)
    assert ids(ordered) == ["b", "c", "a", "d", "e"]
    assert [entry[3] for entry in ordered] == [True, True, True, False, False]
    scores = [entry[0] for entry in ordered]
    assert scores == sorted(scores, reverse=True)


def test_the_blend_lets_the_fused_score_break_near_ties_of_the_logits():
    head = [item("a", 0.9), item("b", 0.5), item("c", 0.4)]
    logits = [4.0, 4.2, -3.0]
    assert ids(rerank.order(head, logits, CONFIG))[:2] == ["b", "a"]
    blended = RetrievalConfig(rerank_blend=0.3)
    ordered = rerank.order(head, logits, blended)
    assert ids(ordered) == ["a", "b", "c"]  # a logit far behind stays behind
    assert all(entry[0] > 1.0 for entry in ordered)  # the head stays above any tail score
    assert ids(rerank.order(head, [4.0, 9.0, -3.0], blended))[0] == "b"  # a clear logit wins


def test_the_gate_keeps_the_fused_order_when_nothing_looks_like_an_answer():
    unique = [item("a", 0.9), item("b", 0.8), item("c", 0.7)]
    ordered = rerank.order(unique, [-9.0, -5.0, -8.0], CONFIG)
    assert ids(ordered) == ["a", "b", "c"]
    assert not any(entry[3] for entry in ordered)


def test_the_best_hits_lift_their_next_units_in_the_same_source():
    head = [
        item("answer", 0.9, "doc", 10),
        item("after", 0.5, "doc", 11),
        item("far", 0.5, "doc", 10 + CONFIG.lift_radius + 1),
        item("other-file", 0.5, "notes", 11),
        item("middling", 0.8),
    ]
    logits = [6.0, -8.0, -8.0, -8.0, 1.0]
    lifted = context.lift(head, logits, CONFIG)
    assert lifted == {"after": (6.0 - CONFIG.lift_margin, "answer")}
    ordered = rerank.order(head, logits, CONFIG, lifted)
    assert ids(ordered)[:3] == ["answer", "after", "middling"]


def test_a_lift_never_lowers_a_score_and_can_be_switched_off():
    head = [item("answer", 0.9, "doc", 10), item("strong-neighbour", 0.5, "doc", 9)]
    assert context.lift(head, [6.0, 5.0], CONFIG) == {}
    off = RetrievalConfig(lift_seeds=0)
    assert (
        context.lift([item("a", 0.9, "doc", 1), item("b", 0.5, "doc", 2)], [6.0, -8.0], off) == {}
    )


def test_only_the_best_seeds_lift():
    config = RetrievalConfig(lift_seeds=1)
    head = [
        item("best", 0.9, "doc", 1),
        item("n1", 0.5, "doc", 2),
        item("second", 0.8, "doc", 20),
        item("n2", 0.5, "doc", 21),
    ]
    lifted = context.lift(head, [7.0, -9.0, 6.0, -9.0], config)
    assert set(lifted) == {"n1"}


def test_a_head_below_the_top_reorders_only_its_window():
    unique = [
        item(name, score) for name, score in zip("abcdefg", (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3))
    ]
    config = RetrievalConfig(rerank_depth=3, rerank_start=2, rerank_relative=0.0)
    at, head = rerank.head(unique, p.QueryParams(query="q"), config, "default")
    assert at == 2 and [entry[3].id for entry in head] == ["c", "d", "e"]
    ordered = rerank.order(unique, [-1.0, 0.5, 3.0], config, None, at)
    # above the window: fused order, kept; the window by the logit; below: kept
    assert ids(ordered) == ["a", "b", "e", "d", "c", "f", "g"]
    assert [entry[3] for entry in ordered] == [False, False, True, True, True, False, False]
    scores = [entry[0] for entry in ordered]
    assert scores == sorted(scores, reverse=True)


def test_the_margin_keeps_only_results_near_the_page_boundary():
    scores = (1.0, 0.95, 0.9, 0.62, 0.6, 0.58, 0.3, 0.2)
    unique = [item(f"m{i}", s) for i, s in enumerate(scores)]
    # the boundary between ranks 5 and 6 is (0.6 + 0.58) / 2 = 0.59; within 0.05 of it:
    # 0.62, 0.6, 0.58 — not 0.9 above nor 0.3 below, though the window holds them
    config = RetrievalConfig(
        rerank_depth=6, rerank_start=2, rerank_relative=0.0, rerank_anchor=5, rerank_margin=0.05
    )
    at, head = rerank.head(unique, p.QueryParams(query="q"), config, "default")
    assert at == 3 and [entry[3].id for entry in head] == ["m3", "m4", "m5"]
    # a request's own rerankDepth takes the top N, as before (no window, no margin)
    at, head = rerank.head(unique, p.QueryParams(query="q", rerank_depth=2), config, "default")
    assert at == 0 and [entry[3].id for entry in head] == ["m0", "m1"]


def test_a_head_of_one_is_not_worth_a_pair():
    unique = [item("a", 0.9), item("b", 0.2)]
    config = RetrievalConfig(rerank_depth=2, rerank_start=0, rerank_relative=0.5)
    assert rerank.head(unique, p.QueryParams(query="q"), config, "default") == (0, [])
