-- memls schema 1: the system of record.
-- Every epistemic state lives in a real column with a CHECK constraint.
-- Project keys are stored normalised: never empty, no outer white space.

CREATE TABLE memories (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE CHECK (length(id) > 0),
    project         TEXT NOT NULL CHECK (
                        length(project) > 0
                        AND project = trim(project, ' ' || char(9, 10, 11, 12, 13, 160, 12288))
                    ),
    content         TEXT NOT NULL CHECK (length(trim(content)) > 0),
    type            TEXT NOT NULL CHECK (type IN
                        ('decision', 'convention', 'preference', 'fact', 'lesson', 'note',
                         'constraint')),
    status          TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded')),
    trust           TEXT NOT NULL DEFAULT 'candidate'
                        CHECK (trust IN ('candidate', 'verified', 'flagged', 'rejected')),
    valid_from      TEXT NOT NULL,
    valid_until     TEXT CHECK (valid_until IS NULL OR valid_until >= valid_from),
    recorded_at     TEXT NOT NULL,
    invalidated_at  TEXT CHECK (invalidated_at IS NULL OR invalidated_at >= recorded_at),
    feedback_score  INTEGER NOT NULL DEFAULT 0,
    content_hash    TEXT NOT NULL,
    canonical_hash  TEXT NOT NULL,
    source_uri      TEXT,
    source_range    TEXT,
    derived_from    TEXT,
    extra           TEXT CHECK (extra IS NULL OR json_valid(extra)),
    CHECK ((status = 'superseded') = (invalidated_at IS NOT NULL))
);

-- One active memory per canonical text in a project: write-time dedup, enforced.
CREATE UNIQUE INDEX memories_active_canonical
    ON memories (project, canonical_hash) WHERE status = 'active';
CREATE INDEX memories_project_validity ON memories (project, valid_from, valid_until);
CREATE INDEX memories_project_trust ON memories (project, trust);

-- Lexical index, kept in step by triggers (porter stemming measured best on LoCoMo).
CREATE VIRTUAL TABLE memories_fts USING fts5(
    content,
    content = 'memories',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;

-- Typed links between memories of one project. src -> dst: "src supersedes dst" etc.
CREATE TABLE edges (
    src         TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    dst         TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('supersedes', 'contradicts', 'derived_from')),
    project     TEXT NOT NULL CHECK (length(project) > 0),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (src, dst, kind),
    CHECK (src <> dst)
);
CREATE INDEX edges_dst ON edges (dst, kind);

-- Feedback signals, with the query that surfaced the memory.
CREATE TABLE feedback (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id   TEXT NOT NULL,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    signal      TEXT NOT NULL CHECK (signal IN ('helpful', 'unhelpful', 'outdated')),
    delta       INTEGER NOT NULL,
    score_after INTEGER NOT NULL,
    query       TEXT,
    at          TEXT NOT NULL,
    front       TEXT NOT NULL
);
CREATE INDEX feedback_memory ON feedback (project, memory_id);

-- Every trust transition (review verbs and feedback thresholds).
CREATE TABLE trust_transitions (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id   TEXT NOT NULL,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    from_trust  TEXT NOT NULL CHECK (from_trust IN ('candidate', 'verified', 'flagged', 'rejected')),
    to_trust    TEXT NOT NULL CHECK (to_trust IN ('candidate', 'verified', 'flagged', 'rejected')),
    cause       TEXT NOT NULL CHECK (cause IN ('approve', 'reject', 'restore', 'feedback')),
    note        TEXT,
    at          TEXT NOT NULL,
    front       TEXT NOT NULL,
    CHECK (from_trust <> to_trust)
);
CREATE INDEX trust_transitions_memory ON trust_transitions (project, memory_id);

-- The forgetting log: one row per (memory, reason), with a preview.
CREATE TABLE forgetting_log (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id   TEXT NOT NULL,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    reason      TEXT NOT NULL CHECK (reason IN ('user_deleted', 'superseded', 'ttl_expired',
                    'decay', 'dedup', 'feedback_flagged', 'source_removed')),
    preview     TEXT NOT NULL,
    type        TEXT NOT NULL,
    at          TEXT NOT NULL,
    front       TEXT NOT NULL,
    UNIQUE (memory_id, reason)
);
CREATE INDEX forgetting_log_project ON forgetting_log (project, reason);

-- Tombstones: forgotten content is not re-stored without a word.
CREATE TABLE tombstones (
    project         TEXT NOT NULL CHECK (length(project) > 0),
    canonical_hash  TEXT NOT NULL,
    memory_id       TEXT NOT NULL,
    reason          TEXT NOT NULL,
    at              TEXT NOT NULL,
    PRIMARY KEY (project, canonical_hash)
);

-- Append-only audit log of every mutation.
CREATE TABLE audit (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    memory_id   TEXT,
    op          TEXT NOT NULL,
    front       TEXT NOT NULL,
    detail      TEXT CHECK (detail IS NULL OR json_valid(detail))
);
CREATE INDEX audit_memory ON audit (project, memory_id);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
