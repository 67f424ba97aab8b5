"""The indexer encodes the next batch while it checks this one (`Indexer._encode_ahead`): the
vectors and token vectors it stores are those of the memories they belong to, and a memory
forgotten in between is not indexed."""

from __future__ import annotations

import numpy as np

from memls import protocol as p
from memls.engine import Engine
from memls.models.late import MODEL_TAG

TEXTS = [
    "We deploy on Tuesdays after the standup",
    "The cache is Redis 7 behind the API",
    "Releases are tagged vX.Y.Z on main",
    "Tests run with pytest -q in CI",
    "Never commit secrets to the repository",
    "The API listens on port 8080",
    "Docs are built with mkdocs-material",
]


def test_batches_encoded_ahead_store_each_memory_its_own_vectors(tmp_path, models):
    with Engine.open(tmp_path / "d", front="test", models=models) as engine:
        engine.worker.stop()  # drive the indexer here, two memories a batch
        engine.worker = None
        ids = [engine.store(p.StoreParams(text=t, project="alpha")).id for t in TEXTS]
        used = []
        real = engine.indexer._encoded

        def spy(fresh):
            got = real(fresh)
            used.append(got is not None)
            return got

        engine.indexer._encoded = spy
        assert engine.indexer.drain(batch=2) == len(TEXTS)
        assert any(used[1:]) and not used[0]  # the first batch had nothing encoded ahead
        stored = engine.index.existing("alpha").get(ids=ids, include=["embeddings"])
        vectors = dict(zip(stored["ids"], np.asarray(stored["embeddings"], dtype=np.float32)))
        alone = models.embedder.embed(TEXTS)
        for i, memory_id in enumerate(ids):
            v = vectors[memory_id]
            cosine = float(v @ alone[i]) / float(np.linalg.norm(v) * np.linalg.norm(alone[i]))
            assert cosine > 0.98, (TEXTS[i], cosine)
        tokens = engine.storage.tokens.get("alpha", ids, MODEL_TAG)
        assert set(tokens) == set(ids)
        assert engine.doctor(p.DoctorParams(project="alpha")).ok


def test_a_memory_forgotten_after_it_was_encoded_ahead_is_not_indexed(tmp_path, models):
    with Engine.open(tmp_path / "d", front="test", models=models) as engine:
        engine.worker.stop()
        engine.worker = None
        ids = [engine.store(p.StoreParams(text=t, project="alpha")).id for t in TEXTS[:4]]
        check = engine.indexer.after_index
        forgotten = []

        def forget_during_the_first_check(project, rows, vectors):
            if not forgotten:  # ids[2:4] are being encoded ahead right now
                assert ids[2] in engine.indexer._ahead
                engine.forget(p.ForgetParams(id=ids[2], reason="user_deleted", project="alpha"))
                forgotten.append(ids[2])
            check(project, rows, vectors)

        engine.indexer.after_index = forget_during_the_first_check
        engine.indexer.drain(batch=2)
        assert forgotten and engine.indexer.pending() == 0
        kept = set(engine.index.existing("alpha").get(include=[])["ids"])
        assert ids[2] not in kept and {ids[0], ids[1], ids[3]} <= kept
        assert engine.doctor(p.DoctorParams(project="alpha")).ok
