-- memls schema 13: what came in from another memory tool's store (`memls import --from`): one
-- row per row of the source, by the source's own id, so that importing the same store again
-- brings nothing twice; and which tool a memory came from (its origin, shown with it).
-- outcome: 'stored' (memory_id is the memory it became), 'duplicate' (the project held the same
-- text: memory_id is that memory), 'forgotten' (a deletion the source logged; memory_id is the
-- forgetting log's name for it).
CREATE TABLE imported (
    project     TEXT NOT NULL CHECK (length(project) > 0),
    tool        TEXT NOT NULL CHECK (tool IN ('omega', 'basic-memory', 'claude-mem')),
    source_key  TEXT NOT NULL CHECK (length(source_key) > 0),
    memory_id   TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('stored', 'duplicate', 'forgotten')),
    at          TEXT NOT NULL,
    PRIMARY KEY (project, tool, source_key)
);
CREATE INDEX imported_memory ON imported (memory_id);
