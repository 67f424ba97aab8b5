-- memls schema 12: whose own memory a note file is. '' for a note of the project; else the
-- agent that keeps it by itself outside the project's folder ('claude-memory': Claude Code's
-- auto memory of the project; 'codex-memories', 'gemini-memory': the user-wide memories of
-- the Codex CLI and the Gemini CLI, under the project '@user'). A contradiction between such a
-- memory and a note of the project is read with the project's note standing (store/edges.py).
ALTER TABLE note_files ADD COLUMN origin TEXT NOT NULL DEFAULT ''
    CHECK (origin IN ('', 'claude-memory', 'codex-memories', 'gemini-memory'));
