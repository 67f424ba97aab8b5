"""`memls mcp` starts light: what it imports, what it lists without the owner, and the
project of a client that sends no roots (the repository of its working directory)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcp_helpers import lexical, mcp_session, ok, refused
from memls.agent import listing

LIGHT = {"memls", "memls.launch", "memls.mcp", "memls.mcp.relay", "memls.mcp.lines", "memls.reach"}


def test_the_relay_imports_the_standard_library_and_its_own_modules_only():
    probe = (
        "import sys, memls.launch, memls.mcp.relay;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('memls', 'msgspec', 'pydantic', 'mcp', 'typer', 'rich', 'anyio', 'numpy')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert set(json.loads(result.stdout.replace("'", '"'))) <= LIGHT


def test_the_listing_it_answers_with_is_the_tools_of_the_structs():
    """`memls/mcp/listing.json` is what `memls.agent.listing` makes of the tool table; after a
    change to a tool or a Struct, `python -m memls.agent.listing` writes it again."""
    assert listing.FILE.read_text(encoding="utf-8") == listing.text()


@pytest.mark.asyncio
async def test_without_roots_the_repository_of_the_working_directory_is_the_project(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "app").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("- Deploys go through Jenkins.\n")
    other = tmp_path / "other"
    other.mkdir()
    async with mcp_session(lexical(tmp_path / "data"), roots=None, cwd=repo / "src" / "app") as s:
        found = await ok(s, "recall", query="how do we deploy")
        assert found["project"] == str(repo.resolve())
        assert [h["text"] for h in found["results"]] == ["Deploys go through Jenkins."]
        text = await refused(s, "stats", project=str(other))
        assert "working directory" in text and str(repo.resolve()) in text
