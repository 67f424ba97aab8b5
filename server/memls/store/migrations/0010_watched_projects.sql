-- memls schema 10: the projects whose notes the owning daemon watches (every project a front
-- named: an editor's workspace folder, an agent's root or --project, the hooks' --project,
-- the CLI's --project on context and query), kept across restarts. A project is a folder's
-- absolute path; `via` is the front that named it first.
CREATE TABLE watched_projects (
    project     TEXT PRIMARY KEY CHECK (length(project) > 0),
    via         TEXT NOT NULL,
    since       TEXT NOT NULL
) WITHOUT ROWID;
