"""A bad setting from the client is refused by name and shown to the user; the server goes on
with the settings it had, and its notes are read all the same (which files are notes is the
owner's to say)."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, client_capabilities

from lsp_helpers import plain


@pytest.mark.asyncio
async def test_bad_initialization_option_is_shown_and_defaults_stay(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "AGENTS.md").write_text("- We use yarn for package management\n")
    env = {**os.environ, "MEMLS_DATA_DIR": str(tmp_path / "data")}
    client = await ClientServerConfig(
        server_command=[sys.executable, "-m", "memls", "serve", "--stdio"], server_env=env
    ).start()
    try:
        # registered before initialize: the note may be indexed before we would ask
        indexed = asyncio.ensure_future(client.wait_for_notification("memory/changed"))
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("neovim"),
                initialization_options={"token": 5, "notes": {"globs": 5}},
                workspace_folders=[
                    types.WorkspaceFolder(uri=uris.from_fs_path(str(root)), name="proj")
                ],
            )
        )
        # sent while initialize is answered, so recorded before its reply arrived
        (message,) = [m for m in client.messages if "settings" in m.message]
        assert message.type == types.MessageType.Warning
        assert "initializationOptions.token" in message.message
        # AGENTS.md is indexed and found: the old `notes` section is not the editor's to say
        # the note is indexed once its units are announced (memory/changed, op sync)
        await asyncio.wait_for(indexed, 60)
        found = plain(
            await client.protocol.send_request_async(
                "memory/query", {"query": "package manager yarn", "project": str(root)}
            )
        )
        assert found and found["results"][0]["content"] == "We use yarn for package management"
    finally:
        await client.shutdown_session()
