-- A memory stated again (the same text, or a restatement merged into it: the near-duplicate
-- rule) is not stored twice: the existing memory counts how often it was seen again and when
-- it last was.
ALTER TABLE memories ADD COLUMN seen_again INTEGER NOT NULL DEFAULT 0 CHECK (seen_again >= 0);
ALTER TABLE memories ADD COLUMN last_seen_at TEXT DEFAULT NULL;
