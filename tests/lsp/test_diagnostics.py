"""Contradictions shown as diagnostics on the notes they sit in, through a real LSP client:
edited into a contradiction, the diagnostic appears; edited out, it clears."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls import uris

from lsp_helpers import AGENTS, DIAGNOSTICS, call, notes_indexed, wait_until


@pytest.mark.asyncio
async def test_a_note_edited_into_and_out_of_contradiction(client):
    root = client.root
    agents = uris.from_fs_path(str(root / "AGENTS.md"))
    await notes_indexed(client)
    # a note's own units are compared only across a change it records (an Update section)
    text = (
        AGENTS
        + "\n## Update 2024-05-01\n\n- We switched from yarn to pnpm for package management\n"
    )
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=agents, language_id="markdown", version=1, text=AGENTS
            )
        )
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=agents, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    diags = await wait_until(
        client, DIAGNOSTICS, lambda: client.diagnostics.get(agents), what="a diagnostic"
    )
    lines = sorted(d.range.start.line for d in diags)
    assert lines == [3, 9]  # the yarn line and the new pnpm line, in the buffer's numbering
    d = next(x for x in diags if x.range.start.line == 9)
    assert d.severity == types.DiagnosticSeverity.Warning and d.source == "memls"
    assert "yarn" in d.message and d.code
    assert d.related_information and d.related_information[0].location.uri == agents
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=agents),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    titles = [a.title for a in actions]
    assert titles == [
        "Supersede the older statement",
        "Not a contradiction",
        "Open the other statement",
    ]
    # edit out of contradiction: the diagnostic clears
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=agents, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=AGENTS)],
        )
    )
    await wait_until(
        client,
        DIAGNOSTICS,
        lambda: len(client.diagnostics[agents]) == 0,
        what="diagnostics cleared",
    )
    # the removed unit was forgotten with reason source_removed
    log = await call(client, "memory/forgotten", reason="source_removed")
    assert any("pnpm" in e["preview"] for e in log["entries"])


@pytest.mark.asyncio
async def test_a_later_line_of_an_instruction_file_that_contradicts_an_earlier_one(client):
    """An AGENTS.md is an instruction file: any two of its lines are compared, with no Update
    section. Both lines get a warning that names the other by its quoted words, its path in
    the workspace and its line, and says the kind of contradiction in words."""
    root = client.root
    agents = uris.from_fs_path(str(root / "AGENTS.md"))
    await notes_indexed(client)
    text = AGENTS.replace(
        "- Tests run with pytest\n",
        "- Tests run with pytest\n"
        "- We switched from yarn to pnpm: install dependencies with pnpm, never yarn.\n",
    )
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=agents, language_id="markdown", version=1, text=text
            )
        )
    )
    diags = await wait_until(
        client, DIAGNOSTICS, lambda: client.diagnostics.get(agents), what="a diagnostic"
    )
    by_line = {d.range.start.line: d.message for d in diags}
    assert sorted(by_line) == [3, 6]  # the yarn line and the later pnpm line
    assert by_line[6].startswith(
        "A later switch: contradicts “We use yarn for package management” (AGENTS.md:4); "
        "confidence "
    )
    assert by_line[3].startswith(
        "A later switch: contradicted by “We switched from yarn to pnpm: install dependencies "
        "with pnpm, never yarn.” (AGENTS.md:7); confidence "
    )
