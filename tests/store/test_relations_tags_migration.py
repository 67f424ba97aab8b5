"""Schema 15 on a file of schema 14: the edges there are kept as they were (supersession and
a contradiction read the same), named `relates` edges and tags join them, readers see both,
and a forgotten memory leaves neither behind."""

from __future__ import annotations

import sqlite3

import pytest

from memls import protocol as p
from memls.engine import Engine
from memls.store.db import DB_NAME, Database
from memls.store.unit import Store

PROJECT = "/proj"


def _memory(conn: sqlite3.Connection, memory_id: str, text: str, status: str = "active") -> None:
    conn.execute(
        "INSERT INTO memories (id, project, content, type, status, valid_from, recorded_at, "
        "invalidated_at, content_hash, canonical_hash) VALUES (?, ?, ?, 'fact', ?, '2025', "
        "'2025', ?, 'h', ?)",
        (memory_id, PROJECT, text, status, "2025" if status == "superseded" else None, text),
    )


def test_edges_of_schema_14_are_kept_and_named_relations_and_tags_join_them(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    old = Database(data / DB_NAME, target_version=14)
    with old.transaction() as conn:
        _memory(conn, "m_old", "Deploys go through Jenkins.", "superseded")
        _memory(conn, "m_new", "Deploys go through GitHub Actions.")
        _memory(conn, "m_other", "Deploys run at noon.")
        conn.execute(
            "INSERT INTO edges (src, dst, kind, project, created_at) "
            "VALUES ('m_new', 'm_old', 'supersedes', ?, '2025')",
            (PROJECT,),
        )
        for src, dst in (("m_other", "m_new"), ("m_new", "m_other")):
            conn.execute(
                "INSERT INTO edges (src, dst, kind, project, created_at, confidence, status, "
                "detail) VALUES (?, ?, 'contradicts', ?, '2025', 0.9, 'open', ?)",
                (src, dst, PROJECT, '{"newer": "m_other", "older": "m_new"}'),
            )
    old.close()

    store = Store(Database(data / DB_NAME))
    assert store.version >= 15
    with store.write(PROJECT, "test") as tx:
        assert tx.edges.relate("m_new", "m_other", "depends_on", "2026")
        assert tx.edges.relate("m_new", "m_other", "part_of", "2026")  # a second name
        assert not tx.edges.relate("m_new", "m_other", "depends_on", "2026")  # once
        assert tx.tags.add("m_new", ["ci", " deploys ", "ci", ""]) == 2
        assert tx.tags.add("m_new", ["ci", "ops"]) == 1
    with pytest.raises(sqlite3.IntegrityError):  # a label names a relation only
        with store.write(PROJECT, "test") as tx:
            tx.conn.execute(
                "INSERT INTO edges (src, dst, kind, project, created_at, label) "
                "VALUES ('m_other', 'm_old', 'supersedes', ?, '2026', 'x')",
                (PROJECT,),
            )
    store.close()

    with Engine.open(data, front="test", vectors=False) as engine:
        new = engine.get(p.GetParams(id="m_new", project=PROJECT))
        other = engine.get(p.GetParams(id="m_other", project=PROJECT))
        old_memory = engine.get(p.GetParams(id="m_old", project=PROJECT))
        # supersession and the contradiction read as before: `relates` is neither
        assert (new.supersedes, new.superseded_by) == (["m_old"], [])
        assert old_memory.superseded_by == ["m_new"]
        assert [c.id for c in new.contradicted_by] == ["m_other"] and new.contradicts == []
        assert other.supersedes == [] and other.superseded_by == []
        assert new.tags == ["ci", "deploys", "ops"] and other.tags == []
        assert [(r.id, r.label) for r in new.related] == [
            ("m_other", "depends_on"),
            ("m_other", "part_of"),
        ]
        assert [(r.id, r.label) for r in other.related_by] == [
            ("m_new", "depends_on"),
            ("m_new", "part_of"),
        ]
        assert new.related_by == [] and other.related == [] and old_memory.related_by == []
        listed = engine.list(p.ListParams(project=PROJECT, status="active"))
        assert {m.id: m.tags for m in listed.memories}["m_new"] == ["ci", "deploys", "ops"]
        engine.forget(p.ForgetParams(id="m_new", reason="user_deleted", project=PROJECT))
        assert engine.get(p.GetParams(id="m_other", project=PROJECT)).related_by == []

    conn = sqlite3.connect(data / DB_NAME)
    try:
        assert conn.execute("SELECT count(*) FROM memory_tags").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM edges").fetchone()[0] == 0
    finally:
        conn.close()
