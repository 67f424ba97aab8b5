"""Short calls on a real engine, shared by the tests of its parts (camelCase dicts go through
the wire parser, as a front's request would)."""

from __future__ import annotations

from memls import protocol as p


def store(engine, text, project="alpha", **kw):
    return engine.store(p.parse(p.StoreParams, {"text": text, "project": project, **kw}))


def query(engine, text, project="alpha", **kw):
    return engine.query(p.parse(p.QueryParams, {"query": text, "project": project, **kw}))


def ids(result):
    return [h.id for h in result.results]


def count_rows(engine, table):
    return engine.db.read(f"SELECT count(*) FROM {table}")[0][0]
