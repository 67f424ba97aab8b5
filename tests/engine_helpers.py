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


# Six unrelated facts: retrieval, index and Chroma tests store them and ask about one.
FACTS = [
    "We use pnpm for package management in the monorepo",
    "The API server listens on port 8080 in development",
    "Alice owns the billing service and its on-call rotation",
    "Deploys go out on Tuesdays through ArgoCD",
    "Never commit secrets; they are encrypted with sops",
    "Database migrations are written with Alembic",
]
