"""A real `memls serve --stdio` per test, driven by a pytest-lsp client that declares VS Code's
or Neovim's capabilities, on a workspace with two note files (and one file that is no note)."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, client_capabilities

from lsp_helpers import AGENTS, CHANGED, CONFLICTS, EDITORS, plain


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "AGENTS.md").write_text(AGENTS)
    (root / ".memls").mkdir()
    (root / ".memls" / "decisions.md").write_text("- Deploys go out on Tuesdays\n")
    (root / "README.md").write_text("- not a note file: never indexed\n")
    return root


@pytest_asyncio.fixture(params=EDITORS)
async def client(request, workspace, tmp_path):
    env = {**os.environ, "MEMLS_DATA_DIR": str(tmp_path / "data")}
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "memls", "serve", "--stdio"], server_env=env
    )
    lsp = await config.start()
    registrations = []
    lsp.registered = asyncio.Event()  # set when the server registers a capability (a request)

    @lsp.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        registrations.extend(params.registrations)
        lsp.registered.set()

    lsp.registrations = registrations
    lsp.notified = []

    for method in (CHANGED, CONFLICTS):

        @lsp.feature(method)
        def on_note(params, method=method):
            lsp.notified.append((method, plain(params)))

    lsp.editor = request.param
    lsp.root = workspace
    await lsp.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            workspace_folders=[
                types.WorkspaceFolder(uri=uris.from_fs_path(str(workspace)), name="proj")
            ],
        )
    )
    yield lsp
    await lsp.shutdown_session()
