"""Secrets through the owner socket: a client process's store, ingest and import reach the
owner's engine, which refuses a secret (the same InvalidInput, naming the field, on the
client's side) or redacts it when asked; nothing is stored by a refusal."""

from __future__ import annotations

import json

import pytest

from daemon_helpers import make_data
from memls import protocol as p
from memls.daemon import RemoteEngine, open_engine
from memls.errors import InvalidInput

GITLAB = "glpat-" + "Xy7_kP2mQ9vR4tL8wZ1n"  # FAKE, in GitLab's format


def test_store_ingest_import_through_the_owner_socket(procs, tmp_path):
    data = make_data(tmp_path)
    owner, _ = procs.owner(data)
    engine = open_engine(data, front="client", wait_seconds=60)
    try:
        assert isinstance(engine, RemoteEngine)
        text = f"Mirror job authenticates to GitLab with {GITLAB}"
        with pytest.raises(InvalidInput) as exc:
            engine.store(p.StoreParams(text=text, project="w"))
        assert exc.value.field == "text" and "gitlab-token" in exc.value.message
        items = [p.StoreParams(text="Deploys go out on Tuesdays"), p.StoreParams(text=text)]
        with pytest.raises(InvalidInput) as exc:
            engine.ingest(p.IngestParams(items=items, project="w"))
        assert exc.value.message.startswith("item 2: holds a secret")
        assert engine.list(p.ListParams(project="w")).memories == []

        stored = engine.store(p.StoreParams(text=text, project="w", redact=True))
        assert stored.memory.content == (
            "Mirror job authenticates to GitLab with [REDACTED:gitlab-token]"
        )
        # an export of project v as an older version wrote it: one memory, its secret in clear
        header, memory = list(engine.export("w"))[:2]
        memory["row"].update(id="m_" + "0" * 16, project="v", content=text)
        lines = [json.dumps({**header, "project": "v"}), json.dumps(memory)]
        with pytest.raises(InvalidInput) as exc:
            engine.import_("v", lines)
        assert exc.value.field == "file" and "gitlab-token" in exc.value.message
        assert exc.value.message.startswith("line 2: memory m_0000000000000000 holds a secret")
        assert engine.list(p.ListParams(project="v")).memories == []
        counts = engine.import_("v", lines, redact=True)
        assert counts["memories"] == 1
        (only,) = engine.list(p.ListParams(project="v")).memories
        assert GITLAB not in only.content and "[REDACTED:gitlab-token]" in only.content
    finally:
        engine.close()
