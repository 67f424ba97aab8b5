-- memls schema 13: one fact in several note files. A memory read from notes keeps every note
-- file that states it (the same text, after the canonical form), each with the lines it
-- stands on and the files that file's lines apply to; the memory's own source_uri and
-- source_range are its first source. Dropping one source (its file removed, or its line
-- edited) keeps the memory while another source states it; the last one gone forgets it.
CREATE TABLE note_sources (
    memory_id   TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    uri         TEXT NOT NULL CHECK (length(uri) > 0),
    source_range TEXT NOT NULL,
    path_scope  TEXT DEFAULT NULL,
    seq         INTEGER NOT NULL,
    PRIMARY KEY (memory_id, uri)
);
CREATE INDEX note_sources_uri ON note_sources (project, uri);

-- Every note unit there is has its one source so far.
INSERT INTO note_sources (memory_id, project, uri, source_range, path_scope, seq)
SELECT m.id, m.project, m.source_uri, coalesce(m.source_range, ''), m.path_scope, m.seq
FROM memories m JOIN note_units u ON u.memory_id = m.id
WHERE m.source_uri IS NOT NULL AND m.status = 'active';

-- A restatement across note files (the near-duplicate rule of the engine): `memory_id` says
-- in other words what `restated_id`, recorded before it, says. Both stay memories of their own
-- files, each forgotten only when its own sources are gone; the link goes with either.
CREATE TABLE note_restates (
    memory_id   TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    restated_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    project     TEXT NOT NULL CHECK (length(project) > 0),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (memory_id, restated_id),
    CHECK (memory_id <> restated_id)
);
CREATE INDEX note_restates_restated ON note_restates (restated_id);
