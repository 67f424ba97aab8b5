"""What is not an OMEGA store memls can read: refused with one line naming why, nothing
changed; the same refusal through the owner socket (the error names the field) and the LSP
(InvalidParams naming the field), and an import through both."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys

import pytest
from lsprotocol import types
from pygls import uris
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, client_capabilities

from daemon_helpers import make_data
from lsp_helpers import call
from memls import protocol as p
from memls.daemon import RemoteEngine, open_engine
from memls.errors import InvalidInput


def copy_of(db, tmp_path):
    folder = tmp_path / "copy"
    folder.mkdir()
    shutil.copy(db, folder / "omega.db")
    return folder / "omega.db"


def refused(run, source, project, *extra: str) -> str:
    code, out, err = run("import", "--from", "omega", str(source), "-p", str(project), *extra)
    assert code != 0 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    code, out, _ = run("stats", "-p", str(project), "--json")
    assert json.loads(out)["memories"] == 0  # nothing came in
    return lines[0]


def test_what_is_not_a_store_memls_reads_is_refused_in_one_line(run, scenario, tmp_path):
    db, a, _, _ = scenario
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    assert "not an OMEGA store (not a SQLite database)" in refused(run, text, a)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    assert "not an OMEGA store (no memories and schema_version tables)" in refused(run, other, a)
    assert "no such file" in refused(run, tmp_path / "nowhere", a)

    newer = copy_of(db, tmp_path)
    conn = sqlite3.connect(newer)
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    line = refused(run, newer, a)
    assert "schema version 99" in line and "it knows 16" in line


def test_an_unknown_tool_is_refused(run, scenario):
    db, a, _, _ = scenario
    code, _, err = run("import", "--from", "mem0", str(db), "-p", str(a))
    assert code != 0 and "expected one of omega, basic-memory, claude-mem" in err


def test_a_locked_store_is_refused_and_read_once_free(run, scenario, tmp_path):
    db, a, _, _ = scenario
    locked = copy_of(db, tmp_path)
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE memories SET access_count = access_count + 1")
    try:
        assert "is locked by another process" in refused(run, locked, a)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    code, out, err = run("import", "--from", "omega", str(locked), "-p", str(a), "--json")
    assert code == 0, err
    assert json.loads(out)["projects"][0]["stored"] == 11


def test_a_corrupt_store_is_refused(run, scenario, tmp_path):
    db, a, _, _ = scenario
    broken = copy_of(db, tmp_path)
    data = bytearray(broken.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for at in range(page, len(data), page):  # every page after the first: headers garbled
        data[at : at + 16] = b"\xa5" * 16
    broken.write_bytes(bytes(data))
    line = refused(run, broken, a)
    assert "corrupt" in line or "cannot be read as an OMEGA store" in line


def test_the_owner_socket_imports_and_names_the_bad_field(scenario, tmp_path):
    db, a, _, _ = scenario
    data = make_data(tmp_path)
    with open_engine(data, front="lsp", serve=True) as local:
        with RemoteEngine.connect(data, front="cli") as remote:
            with pytest.raises(InvalidInput) as err:
                remote.import_from(
                    p.ImportFromParams(from_="omega", source=str(tmp_path), project=str(a))
                )
            assert err.value.field == "source"
            r = remote.import_from(
                p.ImportFromParams(from_="omega", source=str(db), project=str(a))
            )
            assert r.projects[0].stored == 11 and r.other_projects == 2
        assert local.stats(p.StatsParams(project=str(a))).memories == 11


@pytest.mark.asyncio
async def test_the_lsp_imports_and_answers_invalid_params_naming_the_field(scenario, tmp_path):
    db, a, _, _ = scenario
    env = {"MEMLS_DATA_DIR": str(make_data(tmp_path))}
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "memls", "serve", "--stdio"],
        server_env={**__import__("os").environ, **env},
    )
    client = await config.start()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=uris.from_fs_path(str(a)), name="a")],
        )
    )
    try:
        with pytest.raises(JsonRpcException) as err:
            await client.protocol.send_request_async(
                "memory/importFrom", {"from": "omega", "source": str(tmp_path / "none.db")}
            )
        assert err.value.code == -32602 and "source" in str(err.value)
        with pytest.raises(JsonRpcException) as err:
            await client.protocol.send_request_async(
                "memory/importFrom", {"from": "mem0", "source": str(db)}
            )
        assert err.value.code == -32602 and "from" in str(err.value)
        r = await call(client, "memory/importFrom", **{"from": "omega", "source": str(db)})
        assert r["projects"][0]["project"] == str(a) and r["projects"][0]["stored"] == 11
    finally:
        await client.shutdown_session()


def test_a_store_omega_has_open_is_read_through_its_wal(run, scenario, tmp_path):
    db, a, _, _ = scenario
    live = copy_of(db, tmp_path)
    writer = sqlite3.connect(live, isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint = 0")  # the new row stays in the WAL
    writer.execute(
        "INSERT INTO memories (node_id, content, metadata, created_at, event_type, project) "
        "VALUES ('mem-written-now', 'Feature flags live in LaunchDarkly.', ?, "
        "'2026-01-02T03:04:05+00:00', 'decision', ?)",
        (json.dumps({"project": str(a), "event_type": "decision"}), str(a)),
    )
    try:
        assert live.with_name("omega.db-wal").stat().st_size > 0
        code, out, err = run("import", "--from", "omega", str(live), "-p", str(a), "--json")
        assert code == 0, err
        assert json.loads(out)["projects"][0]["read"] == 13
        code, out, _ = run("list", "--json", "-p", str(a), "--limit", "100")
        assert "Feature flags live in LaunchDarkly." in {
            m["content"] for m in json.loads(out)["memories"]
        }
    finally:
        writer.close()
