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
