"""Schema 13 on a file of schema 12: every note unit there is gets its one source, so a later
note that states the same line adds a second one and removing the first file keeps it."""

from __future__ import annotations

from memls import protocol as p
from memls import textnorm
from memls.engine import Engine
from memls.store.db import DB_NAME, Database

TEXT = "Run make check before every push."


def test_note_units_of_schema_12_keep_their_source_and_gain_more(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    old = Database(data / DB_NAME, target_version=12)
    agents, gemini = "file:///proj/AGENTS.md", "file:///proj/GEMINI.md"
    with old.transaction() as conn:
        conn.execute(
            "INSERT INTO memories (id, project, content, type, valid_from, recorded_at, "
            "content_hash, canonical_hash, source_uri, source_range) VALUES ('m_1', '/proj', "
            ":text, 'note', '2025', '2025', 'h', :key, :uri, '0:2-0:35')",
            {"text": TEXT, "key": textnorm.canonical_hash(TEXT), "uri": agents},
        )
        conn.execute(
            "INSERT INTO note_units (memory_id, project, section, claim) "
            "VALUES ('m_1', '/proj', '', 1)"
        )
    old.close()
    line = f"- {TEXT}\n"
    with Engine.open(data, front="test", vectors=False) as engine:
        got = engine.get(p.GetParams(id="m_1", project="/proj"))
        assert [(s.uri, s.range) for s in got.sources] == [(agents, "0:2-0:35")]
        shared = engine.sync_note(p.SyncNoteParams(uri=gemini, text=line, project="/proj"))
        assert shared.added == [] and shared.shared == ["m_1"]
        gone = engine.sync_note(p.SyncNoteParams(uri=agents, text=None, project="/proj"))
        assert gone.removed == [] and gone.moved == ["m_1"]
        kept = engine.get(p.GetParams(id="m_1", project="/proj"))
        assert [s.uri for s in kept.sources] == [gemini] and kept.source_uri == gemini
        gone = engine.sync_note(p.SyncNoteParams(uri=gemini, text=None, project="/proj"))
        assert gone.removed == ["m_1"]
