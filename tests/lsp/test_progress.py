"""Long engine work reaches the editor as work-done progress: a reindex
asked over LSP shows `$/progress` begin -> report -> end with the engine's counts."""

from __future__ import annotations

import pytest
from lsprotocol import types

from lsp_helpers import NOTE_UNITS, PROGRESS, call, notes_indexed, wait_until


def _ended(client) -> set:
    return {
        token
        for token, reports in client.progress_reports.items()
        if any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)
    }


@pytest.mark.asyncio
async def test_reindex_reports_begin_report_end(client):
    if not (client.capabilities.window and client.capabilities.window.work_done_progress):
        pytest.skip("this editor does not show work-done progress")
    await notes_indexed(client)
    await wait_until(client, PROGRESS, lambda: _ended(client), what="note indexing to end")
    before = set(client.progress_reports)

    result = await call(client, "memory/reindex")
    assert result["queued"] == NOTE_UNITS and result["indexed"]

    def reindex_tokens():
        return [
            token
            for token in set(client.progress_reports) - before
            if token in _ended(client)
            and isinstance(client.progress_reports[token][0], types.WorkDoneProgressBegin)
            and client.progress_reports[token][0].title == "memls: reindex"
        ]

    (token,) = await wait_until(client, PROGRESS, reindex_tokens, what="reindex progress to end")
    reports = client.progress_reports[token]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    middle = reports[1:-1]
    assert middle and all(isinstance(r, types.WorkDoneProgressReport) for r in middle)
    assert middle[-1].message == f"indexing {NOTE_UNITS}/{NOTE_UNITS}"
    assert middle[-1].percentage == 100
    assert f"re-indexed {NOTE_UNITS} memories" in (reports[-1].message or "")
