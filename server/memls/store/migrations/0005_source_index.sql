-- memls schema 5: memories by their source (note sync and the query's neighbouring-units
-- expansion look memories up by file; without this index both scanned the project). The two
-- statements name it (INDEXED BY): without statistics SQLite preferred the validity index.

CREATE INDEX memories_source ON memories (source_uri, project) WHERE source_uri IS NOT NULL;
