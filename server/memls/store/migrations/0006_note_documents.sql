-- memls schema 6: notes read as documents. Per note unit its section and whether it
-- is a claim; per note file its standing (status, current) and what it says about its history
-- (the typed references, change lines) as a JSON `NoteFacts`; the supersession/amendment links
-- between note files, resolved by link or number (never by similarity).

CREATE TABLE note_units (
    memory_id   TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    section     TEXT NOT NULL CHECK (section IN
                    ('', 'status', 'context', 'options', 'decision', 'consequences', 'update',
                     'references')),
    claim       INTEGER NOT NULL CHECK (claim IN (0, 1))
);

CREATE TABLE note_files (
    project     TEXT NOT NULL CHECK (length(project) > 0),
    uri         TEXT NOT NULL CHECK (length(uri) > 0),
    number      INTEGER,
    status      TEXT NOT NULL CHECK (status IN
                    ('', 'proposed', 'accepted', 'rejected', 'superseded', 'deprecated',
                     'amended', 'completed')),
    current     INTEGER NOT NULL CHECK (current IN (0, 1)),
    facts       TEXT NOT NULL CHECK (json_valid(facts)),
    synced_at   TEXT NOT NULL,
    PRIMARY KEY (project, uri)
);

-- newer_uri supersedes / amends older_uri; `stated_in` is the note whose line says so.
CREATE TABLE note_links (
    project     TEXT NOT NULL CHECK (length(project) > 0),
    newer_uri   TEXT NOT NULL,
    older_uri   TEXT NOT NULL,
    relation    TEXT NOT NULL CHECK (relation IN ('supersedes', 'amends')),
    label       TEXT NOT NULL,
    stated_in   TEXT NOT NULL,
    line        INTEGER NOT NULL CHECK (line >= 0),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (project, newer_uri, older_uri, relation),
    CHECK (newer_uri <> older_uri)
);
CREATE INDEX note_links_older ON note_links (project, older_uri);
