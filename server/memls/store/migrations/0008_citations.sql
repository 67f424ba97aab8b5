-- memls schema 8: citations, memories that know their code. Each row cites a path relative to
-- the project folder, a line range (1-based, inclusive) and optionally a symbol; `anchor` is
-- the tracker's record of what was cited (normalised lines, context, fingerprint) as JSON, read
-- only by the tracker. `path`, `start_line`, `end_line` are where the citation stands now (they
-- follow moves and renames); `cited_path` is where it was made; `state` is the last check's
-- answer, recomputed from the tree each time (never accumulated).
-- The forgetting log takes the reason `source_changed` (the cited code changed): SQLite cannot
-- alter a CHECK, so the table is rebuilt with its rows.

CREATE TABLE citations (
    memory_id   TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    ordinal     INTEGER NOT NULL CHECK (ordinal >= 0),
    project     TEXT NOT NULL CHECK (length(project) > 0),
    path        TEXT NOT NULL CHECK (length(path) > 0),
    start_line  INTEGER NOT NULL CHECK (start_line >= 1),
    end_line    INTEGER NOT NULL CHECK (end_line >= start_line),
    symbol      TEXT,
    kind        TEXT NOT NULL CHECK (kind IN ('span', 'symbol', 'file')),
    inferred    INTEGER NOT NULL CHECK (inferred IN (0, 1)),
    cited_path  TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    anchor      TEXT NOT NULL CHECK (json_valid(anchor)),
    commit_id   TEXT,
    state       TEXT NOT NULL CHECK (state IN ('fresh', 'moved', 'changed', 'missing')),
    diff        TEXT,
    cited_at    TEXT NOT NULL,
    checked_at  TEXT NOT NULL,
    PRIMARY KEY (memory_id, ordinal)
);
CREATE INDEX citations_path ON citations (project, path);
CREATE INDEX citations_state ON citations (project, state);

CREATE TABLE forgetting_log_new (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id   TEXT NOT NULL,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    reason      TEXT NOT NULL CHECK (reason IN ('user_deleted', 'superseded', 'ttl_expired',
                    'decay', 'dedup', 'feedback_flagged', 'source_removed', 'source_changed')),
    preview     TEXT NOT NULL,
    type        TEXT NOT NULL,
    at          TEXT NOT NULL,
    front       TEXT NOT NULL,
    UNIQUE (memory_id, reason)
);
INSERT INTO forgetting_log_new (seq, memory_id, project, reason, preview, type, at, front)
    SELECT seq, memory_id, project, reason, preview, type, at, front FROM forgetting_log;
DROP TABLE forgetting_log;
ALTER TABLE forgetting_log_new RENAME TO forgetting_log;
CREATE INDEX forgetting_log_project ON forgetting_log (project, reason);
