"""The latency corpus (benchmarks/corpus.py): distinct, seeded, and free of the speakers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
_saved = list(sys.path)
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    corpus = pytest.importorskip("corpus")
finally:
    # benchmarks/ holds mcp.py: left on sys.path it shadows the MCP SDK for later test modules
    sys.path[:] = _saved


@pytest.fixture(scope="module")
def sample() -> dict:
    if not LOCOMO.exists():
        pytest.skip("the LoCoMo dev split is not on this machine")
    return json.loads(LOCOMO.read_text())[0]


def test_a_project_holds_its_turns_and_distinct_distractors_up_to_the_size(sample) -> None:
    items = corpus.project_items(sample, 3000)
    texts = [i.text for i in items]
    assert len(items) == 3000
    assert len(set(texts)) == len(texts)
    real = [i for i in items if i.dia_id is not None]
    assert [i.dia_id for i in real] == [d.strip() for d, _, _ in corpus.turns(sample)]
    speakers = {sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]}
    for item in items:
        if item.dia_id is None:
            assert not any(f"{s}:" in item.text or f"{s} " in item.text for s in speakers)


def test_the_same_seed_gives_the_same_corpus_and_another_seed_another(sample) -> None:
    one = [i.text for i in corpus.project_items(sample, 1500)]
    assert one == [i.text for i in corpus.project_items(sample, 1500)]
    assert one != [i.text for i in corpus.project_items(sample, 1500, seed=7)]
