"""An editor on a project whose Claude Code auto memory (outside the workspace folder) says
what AGENTS.md contradicts: the memory file gets the contradiction's diagnostic and its code
actions, and, opened, is synced from its buffer like a note (a secret typed into it is
flagged on its line). A real `memls serve --stdio` with a throwaway HOME."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, client_capabilities

from lsp_helpers import DIAGNOSTICS, EDITORS, wait_until
from memls.notes.agent_places import claude_slug

RELEASES = "Releases are cut from the develop branch."
AGENTS_LINE = "Releases are cut from main, not from the develop branch."
SLACK = "xoxb-" + "483920175566-2039485761234-" + "q7Rt2Zx9Lm4Kp8Vw3Nb6Yc1H"  # FAKE
TOPIC = (
    "---\nname: release-branch\ndescription: where releases are cut from\nmetadata:\n"
    "  type: project\n  node_type: memory\n---\n\n" + RELEASES + "\n"
)
AGENT_ENV = ("CLAUDE_CONFIG_DIR", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "MEMLS_AGENT_MEMORIES")


@pytest_asyncio.fixture(params=EDITORS)
async def editor(request, tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "AGENTS.md").write_text(f"- {AGENTS_LINE}\n")
    home = tmp_path / "home"
    memory = home / ".claude" / "projects" / claude_slug(str(root.resolve())) / "memory"
    memory.mkdir(parents=True)
    (memory / "release_branch.md").write_text(TOPIC)
    env = {k: v for k, v in os.environ.items() if k not in AGENT_ENV}
    env.update(HOME=str(home), MEMLS_DATA_DIR=str(tmp_path / "data"))
    lsp = await ClientServerConfig(
        server_command=[sys.executable, "-m", "memls", "serve", "--stdio"], server_env=env
    ).start()
    lsp.registered = asyncio.Event()

    @lsp.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        lsp.registered.set()

    await lsp.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="proj")],
        )
    )
    lsp.memory_file = memory / "release_branch.md"
    yield lsp
    await lsp.shutdown_session()


@pytest.mark.asyncio
async def test_an_auto_memory_file_gets_diagnostics_actions_and_its_buffer_synced(editor):
    uri = uris.from_fs_path(str(editor.memory_file))
    diags = await wait_until(
        editor,
        DIAGNOSTICS,
        lambda: editor.diagnostics.get(uri),
        lambda found: any(AGENTS_LINE in d.message for d in found or []),
        what="the auto memory's contradiction with AGENTS.md",
    )
    (d,) = [x for x in diags if AGENTS_LINE in x.message]
    assert d.range.start.line == 8  # the fact's own line, below the front matter
    actions = await editor.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    assert actions and "Not a contradiction" in {a.title for a in actions}

    text = TOPIC + f"\nThe release bot posts with SLACK_BOT_TOKEN={SLACK}\n"
    editor.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )
    found = await wait_until(
        editor,
        DIAGNOSTICS,
        lambda: editor.diagnostics.get(uri),
        lambda found: any(x.code == "secret" for x in found or []),
        what="the secret typed into the open auto memory",
    )
    (secret,) = [x for x in found if x.code == "secret"]
    assert secret.range.start.line == 10
    assert not editor.memory_file.read_text().count(SLACK)  # memls wrote nothing into it
