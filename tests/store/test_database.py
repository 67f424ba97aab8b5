"""The SQLite file itself: pragmas, migrations, permissions, ownership, crash safety."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest

from memls import protocol as p
from memls.engine import Engine
from memls.errors import StoreError
from memls.store.db import DB_NAME, LATEST, Database


def test_pragmas_wal_foreign_keys_busy_timeout(tmp_path):
    db = Database(tmp_path / DB_NAME)
    conn = db.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30000
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST >= 2
    db.close()


def test_an_older_file_is_migrated_and_keeps_its_rows(tmp_path):
    path = tmp_path / DB_NAME
    old = Database(path, target_version=1)
    assert old.version == 1
    with old.transaction() as conn:
        conn.execute(
            "INSERT INTO memories (id, project, content, type, valid_from, recorded_at, "
            "content_hash, canonical_hash) VALUES ('m_1', 'alpha', 'kept across migrations', "
            "'note', '2025', '2025', 'h', 'c')"
        )
        assert not conn.execute(
            "SELECT name FROM sqlite_master WHERE name = 'dead_letters'"
        ).fetchall()
    old.close()
    new = Database(path)
    assert new.version == LATEST
    assert new.read("SELECT content FROM memories")[0][0] == "kept across migrations"
    assert new.read("SELECT name FROM sqlite_master WHERE name = 'dead_letters'")
    new.close()


def test_a_newer_file_is_refused_with_a_message(tmp_path):
    path = tmp_path / DB_NAME
    Database(path).close()
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {LATEST + 5}")
    conn.close()
    with pytest.raises(StoreError, match="newer than this memls"):
        Database(path)


def test_data_directory_and_file_are_owner_only(tmp_path):
    data = tmp_path / "data"
    with Engine.open(data) as engine:
        engine.store(p.StoreParams(text="private", project="alpha"))
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((data / DB_NAME).stat().st_mode) == 0o600


def test_one_process_owns_a_data_directory(tmp_path):
    data = tmp_path / "data"
    with Engine.open(data):
        code = textwrap.dedent(f"""
            from memls.engine import Engine
            from memls.errors import StoreError
            try:
                Engine.open({str(data)!r}, wait_seconds=0.3)
            except StoreError as exc:
                print("refused:", exc)
        """)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert f"pid {os.getpid()}" in out.stdout and "refused" in out.stdout
    with Engine.open(data, wait_seconds=0.3):  # released on close: the next one takes over
        pass


def test_acknowledged_writes_survive_a_kill(tmp_path):
    """SIGKILL a writer at a random moment: every id it printed (acknowledged) is readable."""
    data = tmp_path / "data"
    code = textwrap.dedent(f"""
        import sys
        from memls import protocol as p
        from memls.engine import Engine
        engine = Engine.open({str(data)!r}, vectors=False)
        for i in range(100000):
            r = engine.store(p.StoreParams(text=f"memory number {{i}}", project="crash"))
            print(r.id, flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    acknowledged = []
    for line in proc.stdout:
        acknowledged.append(line.strip())
        if len(acknowledged) >= 150:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    acknowledged += [line.strip() for line in proc.stdout if line.strip()]
    with Engine.open(data) as engine:
        for memory_id in acknowledged:
            assert engine.get(p.GetParams(id=memory_id, project="crash")).id == memory_id
        assert engine.db.read("PRAGMA integrity_check")[0][0] == "ok"
