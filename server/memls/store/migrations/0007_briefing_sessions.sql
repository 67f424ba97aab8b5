-- memls schema 7: what each agent session was given by the briefing (memory/context), so a
-- memory is not given twice in one session. Scratch state: rows older than a week are
-- dropped when the next briefing is recorded; a forgotten memory's rows go with it.

CREATE TABLE briefing_given (
    project     TEXT NOT NULL CHECK (length(project) > 0),
    session     TEXT NOT NULL CHECK (length(session) > 0),
    memory_id   TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    at          TEXT NOT NULL,
    PRIMARY KEY (project, session, memory_id)
) WITHOUT ROWID;

CREATE INDEX briefing_given_at ON briefing_given (at);
