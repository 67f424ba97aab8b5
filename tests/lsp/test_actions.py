"""Code actions on a contradiction's diagnostic, through a real LSP client: "Not a
contradiction" clears it, "Open the other statement" shows the other note."""

from __future__ import annotations

import ast

import pytest
from lsprotocol import types
from pygls import uris

from lsp_helpers import DIAGNOSTICS, wait_until


def command_of(action) -> types.Command:
    """A code action's command (the test client may decode a CodeAction as a Command whose
    `command` holds the nested command as a dict)."""
    inner = action.command
    if isinstance(inner, str) and inner.startswith("{"):
        # lsprotocol's union hook decodes a CodeAction as a Command and turns the nested
        # command into its repr; real editors parse the JSON themselves
        inner = ast.literal_eval(inner)
    if isinstance(inner, str):
        return action
    if isinstance(inner, dict):
        return types.Command(
            title=inner["title"], command=inner["command"], arguments=inner.get("arguments")
        )
    return inner


@pytest.mark.asyncio
async def test_code_action_not_a_contradiction_clears_the_diagnostic(client):
    root = client.root
    note = root / ".memls" / "theme.md"
    note.write_text(
        "- The light theme uses a white background\n\n## Update 2024-05-01\n\n"
        "- The light theme uses a black background\n"
    )
    uri = uris.from_fs_path(str(note))
    diags = await wait_until(
        client, DIAGNOSTICS, lambda: client.diagnostics.get(uri), what="diagnostics on disk note"
    )
    d = diags[0]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    dismiss = next(a for a in actions if a.title == "Not a contradiction")
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=command_of(dismiss).command, arguments=command_of(dismiss).arguments
        )
    )
    await wait_until(
        client, DIAGNOSTICS, lambda: len(client.diagnostics[uri]) == 0, what="cleared after dismiss"
    )
    opened = next(a for a in actions if a.title == "Open the other statement")
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=command_of(opened).command, arguments=command_of(opened).arguments
        )
    )
    assert client.shown_documents and client.shown_documents[-1].uri == uri
