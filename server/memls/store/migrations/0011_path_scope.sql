-- memls schema 11: the files a memory applies to. A memory read from an agent's instruction
-- file carries its path scope: the folder of a nested file (`services/api/AGENTS.md` ->
-- `services/api/**`) or the globs of a rules file's front matter (`paths`, `applyTo`,
-- `globs`, `fileMatchPattern`), one glob a line, relative to the project folder. NULL: the
-- whole project (every memory not read from such a file, and every unscoped rule). Queries
-- filter on it: `path_scope IS NULL` is every file's; globs are matched by the reader.
ALTER TABLE memories ADD COLUMN path_scope TEXT DEFAULT NULL
    CHECK (path_scope IS NULL OR (length(path_scope) > 0 AND instr(path_scope, char(0)) = 0));
