"""The Chroma directory deleted or corrupted is found at start, said
loudly, and rebuilt from SQLite with nothing lost; `memls doctor --repair` does it on demand."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys

import pytest

from memls import protocol as p
from memls.engine import Engine
from memls.index import integrity

TEXTS = [
    "We deploy on Tuesdays",
    "Tabs, not spaces, in the Makefile",
    "The cache is Redis 7",
    "Releases are tagged vX.Y.Z",
    "Tests run with pytest -q",
]


def filled(directory, models, project="proj") -> list[str]:
    with Engine.open(directory, front="test", models=models) as engine:
        ids = [engine.store(p.StoreParams(text=t, project=project)).id for t in TEXTS]
        assert engine.flush(120)
        assert engine.doctor(p.DoctorParams(project=project)).ok
    # chromadb keeps one client per path per process: forget it, as a restart would
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    return ids


def assert_whole(engine, ids, project="proj"):
    report = engine.doctor(p.DoctorParams(project=project))
    assert report.ok and report.indexed == len(ids) == report.memories, report
    hits = engine.query(p.QueryParams(query="which day do we deploy", project=project, k=3))
    assert hits.results[0].id == ids[0] and not hits.degraded


@pytest.mark.parametrize("quick", [False, True], ids=["full", "quick"])
@pytest.mark.parametrize("damage", ["deleted", "corrupted", "emptied"])
def test_a_damaged_vector_index_is_found_said_and_rebuilt(tmp_path, models, caplog, damage, quick):
    data = tmp_path / "data"
    ids = filled(data, models)
    chroma = data / "chroma"
    if damage == "deleted":
        shutil.rmtree(chroma)
    elif damage == "corrupted":
        for f in chroma.rglob("*"):
            if f.is_file():
                f.write_bytes(b"\0garbage" * 64)
    else:
        shutil.rmtree(chroma)
        chroma.mkdir(mode=0o700)
    with Engine.open(data, front="test", models=models) as engine:
        before = engine.doctor(p.DoctorParams(project="proj"))
        assert not before.ok  # doctor sees it without repairing anything
        with caplog.at_level(logging.ERROR, logger="memls.index"):
            found = integrity.check(engine, repair=True, quick=quick)
        assert found and any(r.levelno == logging.ERROR for r in caplog.records)
        assert_whole(engine, ids)
        assert engine.stats(p.StatsParams(project="proj")).memories == len(ids)
        assert integrity.check(engine, repair=False) == []
        assert integrity.check(engine, repair=False, quick=True) == []


def test_the_quick_check_compares_counts_and_finds_a_lost_token_vector(tmp_path, models):
    data = tmp_path / "data"
    ids = filled(data, models)
    with Engine.open(data, front="test", models=models) as engine:
        assert engine.index_counts_agree("proj")
        engine.storage.tokens.delete("proj", ids[:1])
        assert not engine.index_counts_agree("proj")
        assert integrity.check(engine, repair=True, quick=True)
        assert engine.flush(120)
        assert engine.index_counts_agree("proj")


def test_doctor_repair_on_the_command_line(tmp_path, models):
    data = tmp_path / "data"
    ids = filled(data, models)
    shutil.rmtree(data / "chroma")
    env = {**os.environ}
    cmd = [sys.executable, "-m", "memls", "--data-dir", str(data), "doctor", "-p", "proj"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 1 and "missing from the vector index" in out.stdout, out
    out = subprocess.run(cmd + ["--repair"], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0 and "repaired: proj" in out.stderr, out
    assert "Traceback" not in out.stderr
    with Engine.open(data, front="test", models=models) as engine:
        assert_whole(engine, ids)
