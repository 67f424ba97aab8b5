-- memls schema 4: contradictions. A contradiction is a pair of `contradicts` edges (both
-- directions) carrying the verdict; its status is a real column. Dismissed pairs are
-- remembered by content, so the same two statements are not raised again.

ALTER TABLE edges ADD COLUMN confidence REAL CHECK (confidence IS NULL OR confidence BETWEEN 0 AND 1);
ALTER TABLE edges ADD COLUMN status TEXT CHECK (status IS NULL OR status IN ('open', 'dismissed', 'resolved'));
ALTER TABLE edges ADD COLUMN detail TEXT CHECK (detail IS NULL OR json_valid(detail));
ALTER TABLE edges ADD COLUMN closed_at TEXT;

CREATE TABLE conflict_dismissals (
    project     TEXT NOT NULL CHECK (length(project) > 0),
    hash_a      TEXT NOT NULL,
    hash_b      TEXT NOT NULL,
    at          TEXT NOT NULL,
    note        TEXT,
    PRIMARY KEY (project, hash_a, hash_b),
    CHECK (hash_a < hash_b)
);
