-- memls schema 3: the outbox for derived copies (the Chroma vector index).
-- Written in the same transaction as the record it mirrors; drained by the indexer.

CREATE TABLE outbox (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    memory_id   TEXT NOT NULL,
    op          TEXT NOT NULL CHECK (op IN ('index', 'meta', 'delete')),
    created_at  TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT
);
CREATE INDEX outbox_project ON outbox (project, seq);
