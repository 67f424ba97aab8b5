"""OMEGA itself (PyPI omega-memory 1.5.20, in a cached venv of its own: setup_omega.sh) makes
the stores these tests import, through its own API (omega_store.py), offline: its embedding
model is memls's packaged bge-small, its cross-encoder off."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memls.cli import main
from memls.models.locate import packaged_dir

HERE = Path(__file__).parent


def omega_env(home: Path) -> dict[str, str]:
    embedder = packaged_dir("embedder")
    assert embedder is not None and (embedder / "model.onnx").is_file()
    return {
        **os.environ,
        "OMEGA_HOME": str(home),
        "OMEGA_ONNX_MODEL_DIR": str(embedder),
        "OMEGA_CROSS_ENCODER": "0",
        "OMEGA_RERANKER_AUTODOWNLOAD": "0",
        "HF_HUB_OFFLINE": "1",
    }


@pytest.fixture(scope="session")
def omega_python() -> str:
    done = subprocess.run(
        ["bash", str(HERE / "setup_omega.sh")], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def make_store(omega_python: str, root: Path, *args: str) -> tuple[Path, dict[str, str]]:
    """An OMEGA store under root/home, made by OMEGA with the working directory `root/a`."""
    home, a = root / "home", root / "a"
    for folder in (home, a, root / "b"):
        folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [omega_python, str(HERE / "omega_store.py"), *args],
        cwd=a,
        env=omega_env(home),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return home / "omega.db", json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def scenario(omega_python, tmp_path_factory):
    """(omega.db, project A, project B, OMEGA's ids by name): two projects, rows of no project
    and of an empty-string one, a supersession, a review flag, feedback, a contradiction edge,
    a secret, and two deletions (one tied to A, one not)."""
    root = tmp_path_factory.mktemp("omega").resolve()
    db, ids = make_store(
        omega_python, root, "scenario", str(root / "home"), str(root / "a"), str(root / "b")
    )
    return db, root / "a", root / "b", ids


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    """`memls ARGS` in this process on a data directory of its own: (exit code, out, err)."""
    monkeypatch.setenv("MEMLS_DATA_DIR", str(tmp_path / "data"))

    def invoke(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return invoke
