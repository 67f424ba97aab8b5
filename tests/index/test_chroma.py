"""The Chroma index: the same code against a Chroma server, and reads that never create a
collection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine_helpers import FACTS, query, store
from lsp_helpers import free_port, wait_for_port
from memls import protocol as p
from memls.engine import Engine


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    port = free_port()
    chroma = Path(sys.executable).with_name("chroma")
    proc = subprocess.Popen(
        [
            str(chroma),
            "run",
            "--path",
            str(tmp_path_factory.mktemp("chroma-server")),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    if not wait_for_port(port, proc=proc):
        proc.kill()
        pytest.fail("chroma run did not start")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=30)


def test_the_same_code_against_a_chroma_server(tmp_path, chroma_server, monkeypatch, models):
    monkeypatch.setenv("MEMLS_CHROMA_URL", chroma_server)
    with Engine.open(tmp_path / "data", models=models) as engine:
        assert engine.index.url == chroma_server
        ids = {t: store(engine, t).id for t in FACTS}
        store(engine, "Bob owns billing in the other project", project="beta")
        assert engine.flush()
        assert not (tmp_path / "data" / "chroma").exists()  # nothing embedded
        r = query(engine, "who is responsible for invoices and payments", k=3)
        assert r.degraded == [] and r.results[0].id == ids[FACTS[2]]
        assert all(h.project == "alpha" for h in r.results)
        engine.forget(p.ForgetParams(id=ids[FACTS[2]], reason="user_deleted", project="alpha"))
        engine.flush()
        assert ids[FACTS[2]] not in engine.index.all_ids("alpha")
        assert engine.doctor(p.DoctorParams(project="alpha")).ok


def test_reads_never_create_a_collection(vengine):
    store(vengine, FACTS[0])
    vengine.flush()
    before = len(vengine.index.client.list_collections())
    assert query(vengine, "anything", project="typo-project").results == []
    assert vengine.doctor(p.DoctorParams(project="typo-project")).ok
    assert len(vengine.index.client.list_collections()) == before


def _brute_force(vectors, ids, q, passing, n):
    import numpy as np

    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = unit @ (q / np.linalg.norm(q))
    return [ids[k] for k in np.argsort(-sims) if ids[k] in passing][:n]


@pytest.mark.parametrize("kinds", [40, 2], ids=["few-pass", "many-pass"])
def test_nearest_that_pass_the_filters(tmp_path, kinds):
    """The n nearest that pass the hard filters, when fewer than n of the 2n nearest do: ranked
    exactly when few pass (as many as there are, however HNSW's graph is built), through the
    filtered HNSW search when many do (n of them, every one passing)."""
    import numpy as np

    from memls.index.chroma import EXACT_PASSING, VectorIndex

    rng = np.random.default_rng(3)
    total = 2 * EXACT_PASSING + 100
    ids = [f"m{i}" for i in range(total)]
    vectors = rng.standard_normal((total, 16)).astype(np.float32)
    kind = {i: f"k{k % kinds}" for k, i in enumerate(ids)}
    index = VectorIndex(tmp_path)
    try:
        for start in range(0, total, 500):
            chunk = ids[start : start + 500]
            index.upsert(
                "alpha", chunk, vectors[start : start + 500], [{"type": kind[i]} for i in chunk]
            )
        passing = {i for i in ids if kind[i] == "k1"}
        assert (len(passing) <= EXACT_PASSING) == (kinds == 40)
        queries = rng.standard_normal((3, 16)).astype(np.float32)
        asked: list[list[str]] = []

        def admit(found: list[str]) -> set[str]:
            asked.append(found)
            return {i for i in found if i in passing}

        got = index.nearest("alpha", queries, 10, {"type": {"$eq": "k1"}}, admit)
        for q, hits in zip(queries, got):
            found = [i for i, _ in hits]
            assert len(found) == 10 and set(found) <= passing
            assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
            if kinds == 40:
                assert found == _brute_force(vectors, ids, q, passing, 10)
        assert len(asked) == 2  # the unfiltered 2n, then one look again for all three
    finally:
        index.close()
