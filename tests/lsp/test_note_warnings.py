"""What the owner could not read of a note as its agent meant it reaches the editor as a
Warning on the line; the editor sends its buffers and the owner says which are notes."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls import uris

from lsp_helpers import CHANGED, DIAGNOSTICS, call, notes_indexed, wait_until

RULE = '---\npaths: ["src/api/**"]\n---\n- Validate every request.\n'


def _open(client, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )


def _warned(client, uri: str) -> list:
    return [d for d in client.diagnostics.get(uri, []) if d.code == "note-unread"]


@pytest.mark.asyncio
async def test_a_rule_whose_front_matter_breaks_in_the_buffer_is_warned_then_fixed(client):
    root = client.root
    await notes_indexed(client)
    rule = root / ".claude" / "rules" / "api.md"
    rule.parent.mkdir(parents=True)
    rule.write_text(RULE)
    uri = uris.from_fs_path(str(rule))
    _open(client, uri, RULE)
    await wait_until(
        client,
        CHANGED,
        lambda: call(client, "memory/query", query="validate request", paths=["src/api/a.py"]),
        lambda r: any(h["scope"] == ["src/api/**"] for h in r["results"]),
        what="the rule indexed with its scope",
    )
    broken = RULE.replace('["src/api/**"]', '["src/api/**')
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=broken)],
        )
    )
    (warning,) = await wait_until(
        client, DIAGNOSTICS, lambda: _warned(client, uri), what="the front matter warning"
    )
    assert warning.severity == types.DiagnosticSeverity.Warning
    assert warning.range.start.line == 1 and "not readable YAML" in warning.message
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=RULE)],
        )
    )
    await wait_until(
        client, DIAGNOSTICS, lambda: not _warned(client, uri), what="the warning cleared"
    )


@pytest.mark.asyncio
async def test_an_open_buffer_of_no_note_is_not_indexed(client):
    root = client.root
    await notes_indexed(client)
    readme = uris.from_fs_path(str(root / "README.md"))
    _open(client, readme, "- A readme line typed in the editor.\n")
    agents = uris.from_fs_path(str(root / "AGENTS.md"))
    # a note opened after it is synced after it: the readme was answered by then
    _open(client, agents, (root / "AGENTS.md").read_text() + "- Lint before pushing\n")
    await wait_until(
        client,
        CHANGED,
        lambda: call(client, "memory/query", query="lint before pushing"),
        lambda r: any(h["content"] == "Lint before pushing" for h in r["results"]),
        what="the open note indexed",
    )
    found = await call(client, "memory/query", query="readme line typed in the editor")
    assert not any("readme line" in h["content"] for h in found["results"])
