"""Citations through a real LSP client: store with a citation, the memories citing a document
(memory/citations keeps its document uri), a bad citation answered with InvalidParams naming
the field, memory/check and memory/reconfirm."""

from __future__ import annotations

import pytest
from pygls import uris
from pygls.exceptions import JsonRpcException

from lsp_helpers import call

SOURCE = "def deploy(env):\n    run('make release', env)\n    notify(env)\n"


@pytest.mark.asyncio
async def test_citations_round_trip(client):
    (client.root / "ops.py").write_text(SOURCE)
    stored = await call(
        client,
        "memory/store",
        text="Deploys run make release first",
        citations=[{"path": "ops.py", "symbol": "deploy"}],
    )
    assert stored["memory"]["citations"][0]["state"] == "fresh"
    doc = uris.from_fs_path(str(client.root / "ops.py"))
    found = await call(client, "memory/citations", uri=doc)
    assert [(r["memory"], r["startLine"], r["endLine"], r["stale"]) for r in found["ranges"]] == [
        (stored["id"], 1, 3, False)
    ]
    (client.root / "ops.py").write_text(SOURCE.replace("release", "ship"))
    checked = await call(client, "memory/check")
    assert [c["state"] for c in checked["citations"]] == ["changed"]
    again = await call(client, "memory/reconfirm", id=stored["id"])
    assert again["memory"]["stale"] is False
    with pytest.raises(JsonRpcException) as err:
        await client.protocol.send_request_async(
            "memory/store",
            {"text": "x", "citations": [{"path": "ops.py", "startLine": 2, "endLine": 99}]},
        )
    assert err.value.code == -32602 and "citations[0].endLine" in str(err.value)
