"""The system of record: SQLite (WAL) with FTS5, logs and numbered migrations."""
