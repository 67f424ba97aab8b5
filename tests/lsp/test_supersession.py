"""Supersession stated by decision records, through a real LSP client: a Hint on
the older record ("superseded by ADR-7 (0007-eks.md)") on the line that says so, and a code
action that opens the newer record."""

from __future__ import annotations

import ast

import pytest
from lsprotocol import types
from pygls import uris

from lsp_helpers import DIAGNOSTICS, wait_until

OLD = """# 3. Run our own Kubernetes clusters with kOps

## Status

Superseded by [ADR-7](0007-eks.md)

## Decision

We run the Kubernetes clusters ourselves with kOps on EC2 instances.
"""

NEW = """# 7. Use EKS

## Status

Accepted

## Decision

We use Amazon EKS for every Kubernetes cluster.
"""

AMENDING = """# 9. Name clusters by purpose

## Status

Accepted. Amends 0007.

## Decision

Clusters are named after what they host.
"""


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "proj"
    adr = root / "docs" / "adr"
    adr.mkdir(parents=True)
    (adr / "0003-kops.md").write_text(OLD)
    (adr / "0007-eks.md").write_text(NEW)
    (adr / "0009-names.md").write_text(AMENDING)
    return root


def command_of(action) -> types.Command:
    """The command of a code action (the test client may decode a CodeAction as a Command
    whose `command` is the nested command: see test_actions.command_of)."""
    inner = action.command
    if isinstance(inner, types.Command):
        return inner
    if isinstance(inner, str) and inner.startswith("{"):
        inner = ast.literal_eval(inner)
    if isinstance(inner, dict):
        return types.Command(
            title=inner["title"], command=inner["command"], arguments=inner.get("arguments")
        )
    return action


def hints(client, uri):
    return [
        d
        for d in client.diagnostics.get(uri, [])
        if d.severity == types.DiagnosticSeverity.Hint and d.source == "memls"
    ]


@pytest.mark.asyncio
async def test_superseded_record_gets_a_hint_and_an_action_to_open_the_newer(client):
    adr = client.root / "docs" / "adr"
    old = uris.from_fs_path(str(adr / "0003-kops.md"))
    new = uris.from_fs_path(str(adr / "0007-eks.md"))
    found = await wait_until(client, DIAGNOSTICS, lambda: hints(client, old), what="hint on 0003")
    (hint,) = found
    assert hint.message == "superseded by ADR-7 (0007-eks.md)"
    assert hint.range.start.line == 4  # the status line that says so
    assert hint.related_information and hint.related_information[0].location.uri == new
    # the amended record gets its own hint, stated by the newer record (so on its first line)
    amended = await wait_until(client, DIAGNOSTICS, lambda: hints(client, new), what="on 0007")
    assert [(d.message, d.range.start.line) for d in amended] == [("amended by 0009-names.md", 0)]
    assert hints(client, uris.from_fs_path(str(adr / "0009-names.md"))) == []

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=old),
            range=hint.range,
            context=types.CodeActionContext(diagnostics=[hint]),
        )
    )
    assert [a.title for a in actions] == ["Open the newer record (0007-eks.md)"]
    opened = command_of(actions[0])
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=opened.command, arguments=opened.arguments)
    )
    assert client.shown_documents and client.shown_documents[-1].uri == new
