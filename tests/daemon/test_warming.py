"""A serving owner (open_engine(serve=True)) loads Chroma and both models in the background,
and a model that cannot load stays loud."""

from __future__ import annotations

from memls import protocol as p
from memls.daemon import open_engine


def test_a_serving_owner_loads_chroma_and_both_models_in_the_background(tmp_path):
    engine = open_engine(tmp_path / "data", front="test", serve=True)
    try:
        warming = engine._warming
        assert warming is not None  # started by open_engine, not by a query
        warming.join(timeout=120)
        assert not warming.is_alive()
        models = engine.models.status()
        assert (models.embedder.state, models.reranker.state) == ("loaded", "loaded")
        assert engine.index._client is not None
    finally:
        engine.close()


def test_background_loading_of_a_missing_model_stays_loud(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(f'[models]\nembedder_dir = "{tmp_path / "nowhere"}"\n')
    engine = open_engine(data, front="test", serve=True)
    try:
        engine._warming.join(timeout=120)
        assert engine.models.status().embedder.state == "missing"
        stats = engine.stats(p.StatsParams(project="alpha"))
        assert any("embedder" in d and "missing" in d for d in stats.degraded)
    finally:
        engine.close()


def test_close_waits_for_the_start_up_index_check(tmp_path):
    """The start-up index check runs on its own thread; close() must not leave it running into
    the interpreter's teardown (it crashed a daemon-style process with SIGSEGV there)."""
    engine = open_engine(tmp_path / "data", front="test", serve=True)
    checks = list(engine._background)
    assert [t.name for t in checks] == ["memls-index-check"]  # adopted by open_engine
    engine.close()
    assert not any(t.is_alive() for t in checks)
    assert engine._background == []
