-- memls schema 2: maintenance passes and their dead-letter queue.

CREATE TABLE dead_letters (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    operation   TEXT NOT NULL CHECK (operation IN ('expire_valid_until', 'expire_ttl')),
    memory_id   TEXT NOT NULL,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    error       TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 1 CHECK (attempts >= 1),
    first_at    TEXT NOT NULL,
    last_at     TEXT NOT NULL,
    resolved_at TEXT,
    UNIQUE (operation, memory_id)
);
CREATE INDEX dead_letters_open ON dead_letters (project, resolved_at);

CREATE TABLE maintenance_runs (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    started_at  TEXT NOT NULL,
    expired     INTEGER NOT NULL,
    failed      INTEGER NOT NULL
);
