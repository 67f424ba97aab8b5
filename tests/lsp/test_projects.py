"""Windows and their projects: a second editor window on the same store goes through the
first's socket and hears only about its own projects."""

from __future__ import annotations

import os
import sys

import pytest
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, client_capabilities

from lsp_helpers import CHANGED, call, plain, project_of, wait_until


@pytest.mark.asyncio
async def test_a_second_window_hears_only_its_own_projects(tmp_path):
    """Two editor windows on one store: the first owns it, the second goes through the owner's
    socket, subscribed to its own projects only (its folder and the projects it named)."""
    env = {**os.environ, "MEMLS_DATA_DIR": str(tmp_path / "data")}
    windows = []
    for name in ("first", "second"):
        root = tmp_path / name
        root.mkdir()
        config = ClientServerConfig(
            server_command=[sys.executable, "-m", "memls", "serve", "--stdio"], server_env=env
        )
        lsp = await config.start()
        lsp.notified = []

        @lsp.feature(CHANGED)
        def on_changed(params, lsp=lsp):
            lsp.notified.append(plain(params))

        await lsp.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                workspace_folders=[
                    types.WorkspaceFolder(uri=uris.from_fs_path(str(root)), name=name)
                ],
            )
        )
        # the first window's engine is open (it owns the store) before the second starts
        await call(lsp, "memory/stats", project=str(root.resolve()))
        lsp.root = root
        windows.append(lsp)
    first, second = windows
    try:
        mine = await call(
            first, "memory/store", text="For the second window's folder", project=project_of(second)
        )
        theirs = await call(
            first,
            "memory/store",
            text="Only the first window's business",
            project=project_of(first),
        )
        named = await call(
            second, "memory/store", text="A project the second window named", project="side"
        )
        await wait_until(
            second,
            CHANGED,
            lambda: (
                {i for n in second.notified for i in n["ids"]}
                >= {mine["memory"]["id"], named["memory"]["id"]}
            ),
            what="the second window's notifications",
        )
        await call(
            first,
            "memory/store",
            text="Later, for the first window again",
            project=project_of(first),
        )
        await wait_until(
            first, CHANGED, lambda: len(first.notified) >= 3, what="the first window's own"
        )
        heard = {n["project"] for n in second.notified}
        assert heard == {project_of(second), "side"}
        assert theirs["memory"]["id"] not in {i for n in second.notified for i in n["ids"]}
    finally:
        for lsp in windows[::-1]:
            await lsp.shutdown_session()
