"""The vector index: a derived copy of SQLite in Chroma, kept in step through the outbox."""
