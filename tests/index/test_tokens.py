"""The late-interaction token vectors: a derived copy beside the record, written by the
indexer at store time, dropped on forget, checked by doctor and rebuilt by reindex; without
the model, retrieval still answers and says it is degraded."""

from __future__ import annotations

from engine_helpers import FACTS, query, store
from memls import protocol as p
from memls.engine import Engine
from memls.models import ModelRuntime
from memls.models.late import MODEL_TAG, unpack


def _kept(engine, project="alpha"):
    return engine.storage.tokens.ids(project, MODEL_TAG)


def test_token_vectors_are_written_at_store_and_dropped_on_forget(vengine):
    ids = [store(vengine, t).id for t in FACTS]
    assert vengine.flush()
    assert _kept(vengine) == set(ids)
    blob = vengine.storage.tokens.get("alpha", [ids[1]], MODEL_TAG)[ids[1]]
    tokens = unpack(blob, 384)
    assert 5 <= len(tokens) <= 20  # content tokens of one short fact, no [CLS] / [SEP] / ","
    assert vengine.storage.tokens.get("beta", [ids[1]], MODEL_TAG) == {}  # per project
    vengine.forget(p.ForgetParams(id=ids[0], reason="user_deleted", project="alpha"))
    assert vengine.flush()
    assert _kept(vengine) == set(ids[1:])
    assert vengine.doctor(p.DoctorParams(project="alpha")).ok


def test_doctor_finds_missing_token_vectors_and_reindex_rebuilds_them(vengine):
    ids = [store(vengine, t).id for t in FACTS]
    assert vengine.flush()
    vengine.storage.tokens.clear("alpha")  # the derived copy lost (deleted file, say)
    report = vengine.doctor(p.DoctorParams(project="alpha"))
    assert not report.ok
    assert any("6 memories without token vectors" in line for line in report.problems)
    result = vengine.reindex(p.ReindexParams(project="alpha"))
    assert result.indexed and result.queued == len(ids)
    assert _kept(vengine) == set(ids)
    assert vengine.doctor(p.DoctorParams(project="alpha")).ok


def test_a_missing_late_model_degrades_loudly_and_retrieval_still_answers(tmp_path, clock):
    with (
        ModelRuntime(late_dir=tmp_path / "no-colbert") as models,
        Engine.open(tmp_path / "data", front="test", clock=clock, models=models) as engine,
    ):
        ids = [store(engine, t).id for t in FACTS]
        assert engine.flush()
        assert _kept(engine) == set()  # nothing to compute them with; Chroma still indexed
        r = query(engine, "who owns the billing service", k=3)
        assert r.results[0].id == ids[2]
        assert any("late interaction unavailable" in d for d in r.degraded)
        health = engine.health()
        assert not health.ok and any("late missing" in d for d in health.degraded)
        assert health.models["late"]["state"] == "missing"
        report = engine.doctor(p.DoctorParams(project="alpha"))
        assert any("late missing" in line for line in report.problems)
