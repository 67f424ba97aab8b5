"""Readers of other memory tools' stores (OMEGA, basic-memory, claude-mem), read-only.

Each reader turns one project's part of a tool's store into `records.ForeignStore`; the engine
writes those records through the same checks as any other write. A reader never changes the
store it reads.
"""
