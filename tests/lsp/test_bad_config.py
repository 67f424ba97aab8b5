"""A bad config.toml under the editor: the daemon shows one message naming the key, and every
request answers with that reason instead of hanging or crashing."""

from __future__ import annotations

import os
import sys

import pytest
from lsprotocol import types
from pygls import uris
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, client_capabilities


@pytest.mark.asyncio
async def test_a_bad_config_is_shown_to_the_editor_naming_the_key(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text('[index]\nvectors = "false"\n')
    root = tmp_path / "proj"
    root.mkdir()
    env = {**os.environ, "MEMLS_DATA_DIR": str(data)}
    lsp = await ClientServerConfig(
        server_command=[sys.executable, "-m", "memls", "serve", "--stdio"], server_env=env
    ).start()
    try:
        await lsp.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                workspace_folders=[
                    types.WorkspaceFolder(uri=uris.from_fs_path(str(root)), name="proj")
                ],
            )
        )
        with pytest.raises(JsonRpcException) as err:
            await lsp.protocol.send_request_async("memory/stats", {"project": "p"})
        assert "index.vectors: must be a boolean" in str(err.value)
        # the message went out before the engine was marked ready, so before this reply
        shown = [m for m in lsp.messages if m.type == types.MessageType.Error]
        assert len(shown) == 1
        assert shown[0].message.startswith("memls: index.vectors: must be a boolean")
        assert str(data / "config.toml") in shown[0].message and "\n" not in shown[0].message
    finally:
        await lsp.shutdown_session()
