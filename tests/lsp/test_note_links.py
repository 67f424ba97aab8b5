"""Links among the notes of an editor's workspace, through a real LSP client: a link that
leads out of the folder is not read (by the owner's watcher, nor by the editor's own reads of
a buffer or of the disk) and gets a warning on the link; a link inside is read once, under
the name it leads to, whether from the disk or from the link's open buffer."""

from __future__ import annotations

import os

import pytest
from lsprotocol import types
from pygls import uris

from lsp_helpers import AGENTS, CHANGED, DIAGNOSTICS, note_units, wait_until

SECRET = "- B's secret line: the staging password is kept here.\n"


@pytest.fixture
def workspace(tmp_path):
    root, other = tmp_path / "proj", tmp_path / "B"
    (root / ".memls").mkdir(parents=True)
    other.mkdir()
    (other / "secret.md").write_text(SECRET)
    (root / "AGENTS.md").write_text(AGENTS)
    (root / ".memls" / "decisions.md").write_text("- Deploys go out on Tuesdays\n")
    os.symlink("AGENTS.md", root / "CLAUDE.md")
    os.symlink(other / "secret.md", root / ".memls" / "secret.md")
    return root


def _open(client, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )


def _close(client, uri: str) -> None:
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


def _sources(units: dict[str, dict]) -> set[str]:
    return {u["sourceUri"] for u in units.values()}


@pytest.mark.asyncio
async def test_links_in_an_editors_workspace(client):
    root = client.root
    agents = uris.from_fs_path(str(root / "AGENTS.md"))
    claude = uris.from_fs_path(str(root / "CLAUDE.md"))
    secret = uris.from_fs_path(str(root / ".memls" / "secret.md"))
    decisions = uris.from_fs_path(str(root / ".memls" / "decisions.md"))
    units = await wait_until(
        client,
        CHANGED,
        lambda: note_units(client),
        lambda u: {"We use yarn for package management", "Deploys go out on Tuesdays"} <= set(u),
        what="the workspace's notes indexed",
    )
    assert _sources(units) == {agents, decisions}  # AGENTS.md once, not again as CLAUDE.md
    assert not any("secret" in content for content in units)

    # the link that leads out: a warning on it, naming it and where it leads
    diags = await wait_until(
        client,
        DIAGNOSTICS,
        lambda: [d for d in client.diagnostics.get(secret, []) if d.code == "link-outside"],
        what="a warning on the link that leads out",
    )
    assert diags[0].severity == types.DiagnosticSeverity.Warning
    assert str(root / ".memls" / "secret.md") in diags[0].message
    assert str(root.parent / "B" / "secret.md") in diags[0].message

    # the link inside, opened: its buffer is synced under the name it leads to ...
    _open(client, claude, AGENTS + "- Edited through the link\n")
    units = await wait_until(
        client,
        CHANGED,
        lambda: note_units(client),
        lambda u: "Edited through the link" in u,
        what="the link's buffer synced",
    )
    assert units["Edited through the link"]["sourceUri"] == agents
    # ... and closed: the editor reads the disk again, through the link, under the same name
    _close(client, claude)
    units = await wait_until(
        client,
        CHANGED,
        lambda: note_units(client),
        lambda u: "Edited through the link" not in u,
        what="the disk read again once the link's buffer closed",
    )
    assert _sources(units) == {agents, decisions}

    # the link that leads out, opened (the editor read its target) and closed: not synced;
    # the barrier is a note edited after it
    _open(client, secret, SECRET)
    _close(client, secret)
    _open(client, decisions, "- Deploys go out on Tuesdays\n- Opened after the link\n")
    units = await wait_until(
        client,
        CHANGED,
        lambda: note_units(client),
        lambda u: "Opened after the link" in u,
        what="the barrier note synced",
    )
    assert not any("secret" in content for content in units)
    assert _sources(units) == {agents, decisions}
