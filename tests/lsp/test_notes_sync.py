"""Workspace notes kept indexed through a real LSP client: discovered at start (with work-done
progress where the editor shows it), and forgotten when the file goes."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls import uris

from lsp_helpers import CHANGED, PROGRESS, call, notes_indexed, wait_until


@pytest.mark.asyncio
async def test_notes_are_indexed_with_ranges_and_sources(client):
    root = client.root
    agents = uris.from_fs_path(str(root / "AGENTS.md"))
    found = await notes_indexed(client)
    assert found["We use yarn for package management"]["sourceUri"] == agents
    assert found["We use yarn for package management"]["sourceRange"].startswith("3:")
    assert "not a note file: never indexed" not in found
    if client.capabilities.window and client.capabilities.window.work_done_progress:

        def ends():
            return [
                r
                for reports in client.progress_reports.values()
                for r in reports
                if isinstance(r, types.WorkDoneProgressEnd)
            ]

        await wait_until(client, PROGRESS, ends, what="indexing progress to end (after embedding)")
        health = await call(client, "memory/health")
        assert health["indexPending"] == 0  # progress ends once the notes are embedded


@pytest.mark.asyncio
async def test_watched_file_removed_on_disk_forgets_its_units(client):
    root = client.root
    note = root / ".memls" / "decisions.md"
    await wait_until(
        client,
        CHANGED,
        lambda: call(client, "memory/query", query="Tuesdays deploys"),
        lambda r: any("Tuesdays" in h["content"] for h in r["results"]),
        what="the note indexed",
    )
    note.unlink()
    log = await wait_until(
        client,
        CHANGED,
        lambda: call(client, "memory/forgotten", reason="source_removed"),
        lambda r: r["entries"],
        what="forgetting on delete",
    )
    assert "Tuesdays" in log["entries"][0]["preview"]
