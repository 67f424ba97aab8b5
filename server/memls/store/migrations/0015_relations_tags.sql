-- memls schema 15: what another memory tool's store says about a memory beyond its text.
-- A `relates` edge is a named link from one memory to another that is neither supersession
-- nor contradiction (basic-memory's `- depends_on [[Other note]]`): `label` keeps the source's
-- name for it ('' on every other kind). Nothing that reads supersession or contradictions
-- reads it. SQLite cannot alter a CHECK, so `edges` is rebuilt with its rows (schemas 1 and 4)
-- and its index; a label is part of the key, so two memories may relate under two names.
CREATE TABLE edges_new (
    src         TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    dst         TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL
                    CHECK (kind IN ('supersedes', 'contradicts', 'derived_from', 'relates')),
    project     TEXT NOT NULL CHECK (length(project) > 0),
    created_at  TEXT NOT NULL,
    confidence  REAL CHECK (confidence IS NULL OR confidence BETWEEN 0 AND 1),
    status      TEXT CHECK (status IS NULL OR status IN ('open', 'dismissed', 'resolved')),
    detail      TEXT CHECK (detail IS NULL OR json_valid(detail)),
    closed_at   TEXT,
    label       TEXT NOT NULL DEFAULT '' CHECK (kind = 'relates' OR label = ''),
    PRIMARY KEY (src, dst, kind, label),
    CHECK (src <> dst)
);
INSERT INTO edges_new (src, dst, kind, project, created_at, confidence, status, detail, closed_at)
    SELECT src, dst, kind, project, created_at, confidence, status, detail, closed_at FROM edges;
DROP TABLE edges;
ALTER TABLE edges_new RENAME TO edges;
CREATE INDEX edges_dst ON edges (dst, kind);

-- A memory's tags (basic-memory's #tags and front-matter tags, claude-mem's concepts): one row
-- a tag, gone with the memory.
CREATE TABLE memory_tags (
    memory_id   TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    tag         TEXT NOT NULL CHECK (length(tag) > 0),
    ordinal     INTEGER NOT NULL CHECK (ordinal >= 0),
    PRIMARY KEY (memory_id, tag)
);
CREATE INDEX memory_tags_tag ON memory_tags (project, tag);
