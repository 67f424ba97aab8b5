"""What keeps the dependencies silent whatever the user's environment says (docs/privacy.md):
the variables memls sets in every process before any dependency is imported, and Chroma's
settings, which read only what memls passes."""

from __future__ import annotations

import os
import subprocess
import sys

import memls
from memls.index.chroma import VectorIndex, chroma_settings

CHILD = "import os; print(os.environ.get('ORT_DISABLE_TELEMETRY'))"
PARENT = f"""
import memls, os, subprocess, sys
print(os.environ.get('ORT_DISABLE_TELEMETRY'))
subprocess.run([sys.executable, '-S', '-c', {CHILD!r}], check=True)
"""


def test_memls_turns_onnxruntime_telemetry_off_over_the_users_value_and_children_inherit():
    assert memls.SILENT_ENVIRONMENT == {"ORT_DISABLE_TELEMETRY": "1"}
    for asked in ("0", "", None):  # on, empty, unset: off in memls and in what it starts
        env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
        if asked is not None:
            env["ORT_DISABLE_TELEMETRY"] = asked
        done = subprocess.run(
            [sys.executable, "-c", PARENT], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["1", "1"], (asked, done.stdout)


DOTENV = """\
CHROMA_API_IMPL=chromadb.api.fastapi.FastAPI
CHROMA_SERVER_HOST=chroma.invalid
CHROMA_SERVER_HTTP_PORT=8000
"""


def test_chroma_reads_neither_the_environment_nor_a_dotenv_file(tmp_path, monkeypatch):
    """A project's `.env` (the working directory of a daemon a hook started there) and CHROMA_*
    variables once made the embedded store an HTTP client of another host."""
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(DOTENV)
    monkeypatch.chdir(project)
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "True")
    monkeypatch.setenv("CHROMA_OTEL_GRANULARITY", "all")
    monkeypatch.setenv("CHROMA_OTEL_COLLECTION_ENDPOINT", "http://otel.invalid:4317")
    settings = chroma_settings()
    assert settings.anonymized_telemetry is False
    assert settings.chroma_api_impl == "chromadb.api.rust.RustBindingsAPI"
    assert settings.chroma_server_host is None
    assert settings.chroma_otel_granularity is None
    assert settings.chroma_otel_collection_endpoint == ""
    index = VectorIndex(tmp_path / "data")  # the embedded store works in that folder
    try:
        index.collection("p").upsert(ids=["a"], embeddings=[[0.1, 0.2, 0.3]])
        assert index.collection("p").count() == 1
    finally:
        index.close()
