"""The CLI in this process: `run(*args)` calls `memls` with a temporary data directory and
gives back (exit code, stdout, stderr)."""

from __future__ import annotations

import pytest

from memls.cli import main


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMLS_DATA_DIR", str(tmp_path / "data"))

    def invoke(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return invoke
