"""The basic-memory reader, and `memls import --from basic-memory`, on stores basic-memory
makes itself: basic-memory 0.24.1 (its own venv, tests/imports/setup_basic_memory.sh) indexes
markdown notes written into two projects' folders (`basic-memory project add`) and writes one
through its CLI (`tool write-note`), offline, in a config folder of its own."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from memls.errors import InvalidInput
from memls.store.foreign import basic_memory

HERE = Path(__file__).parent
BANNER = "#" * 86

CACHE = """---
title: Cache layer
type: note
tags: [infra]
created: 2026-02-01T09:00:00Z
---
# Cache layer

The cache sits in front of the API.

## Observations
- [decision] Use Redis for the cache #redis (after the load test)
- [convention] Cache keys start with the service name
- [risk] A cold cache doubles latency #perf

## Relations
- depends_on [[Storage]]
- relates_to [[A note nobody wrote]]
"""
STORAGE = """---
title: Storage
created: 2026-02-02T09:00:00Z
---
# Storage

## Observations
- [fact] Postgres 16 holds the orders
- A line with a #tag only

- part_of [[Cache layer]]
"""
ONBOARDING = """---
title: Onboarding
type: guide
created: 2026-02-03T09:00:00Z
---
# Onboarding

Run make install, then make test.
"""
BETA = """---
title: Beta
---
# Beta

- [decision] Beta keeps its queue in SQS
- [fact] Beta runs in eu-west-1
"""
DEPLOY = (
    "- [lesson] @effective[2026-06-10,2026-07-27) Deploys run the migration first #ops\n"
    "- [preference] Small pull requests\n"
    "- follows [[Storage]]\n"
)


@pytest.fixture(scope="session")
def basic_memory_bin() -> str:
    """basic-memory's CLI; skipped, loudly, where it cannot be installed."""
    done = subprocess.run(
        ["bash", str(HERE / "setup_basic_memory.sh")], capture_output=True, text=True, timeout=900
    )
    if done.returncode == 3:
        message = (
            f"\n{BANNER}\n## SKIPPED: basic-memory cannot be installed here:\n"
            f"## {done.stderr.strip()[-600:]}\n{BANNER}"
        )
        sys.stderr.write(message + "\n")
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def bm(binary: str, root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "HOME": str(root / "home"),
        "BASIC_MEMORY_CONFIG_DIR": str(root / "basic-memory"),
        "BASIC_MEMORY_NO_PROMOS": "1",
    }
    env.pop("BASIC_MEMORY_HOME", None)
    done = subprocess.run(
        [binary, *args], env=env, cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def scenario(basic_memory_bin, tmp_path_factory):
    """(basic-memory's folder, project folder `alpha`): alpha's notes in alpha/notes
    (basic-memory project "alpha-notes"), beta's in beta/notes (project "beta")."""
    root = tmp_path_factory.mktemp("basic-memory").resolve()
    (root / "home").mkdir()
    config = root / "basic-memory"
    config.mkdir()
    # semantic search off: its embedding model would be downloaded
    (config / "config.json").write_text('{"semantic_search_enabled": false, "auto_update": false}')
    alpha, beta = root / "alpha", root / "beta"
    for path, text in (
        (alpha / "notes/design/cache.md", CACHE),
        (alpha / "notes/storage.md", STORAGE),
        (alpha / "notes/onboarding.md", ONBOARDING),
        (beta / "notes/beta.md", BETA),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    bm(basic_memory_bin, root, "project", "add", "alpha-notes", str(alpha / "notes"))
    bm(basic_memory_bin, root, "project", "add", "beta", str(beta / "notes"))
    bm(
        basic_memory_bin,
        root,
        "tool",
        "write-note",
        "--project",
        "alpha-notes",
        "--title",
        "Deploy",
        "--folder",
        "ops",
        "--content",
        DEPLOY,
    )
    return config, alpha


def _state(folder: Path) -> tuple:
    db = folder / "memory.db"
    return db.read_bytes(), db.stat().st_mtime_ns, sorted(p.name for p in folder.iterdir())


def test_observations_of_the_project_with_tags_relations_and_the_note_cited(scenario):
    config, alpha = scenario
    before = _state(config)
    store = basic_memory.read(config, alpha)
    assert _state(config) == before, "the store was changed (or a file made beside it)"

    assert (store.tool, store.version, store.source) == (
        "basic-memory",
        "0042",
        str(config / "memory.db"),
    )
    assert store.unscoped == [] and store.forgotten == []
    assert store.other_projects == 2  # beta's two observations; the default project is empty
    got = [(m.text, m.type, m.source_type, m.tags) for m in store.memories]
    assert got[:6] == [
        (
            "Use Redis for the cache #redis (after the load test)",
            "decision",
            None,
            ("redis", "infra"),
        ),
        ("Cache keys start with the service name", "convention", None, ("infra",)),
        ("A cold cache doubles latency #perf", "note", "risk", ("perf", "infra")),
        ("Postgres 16 holds the orders", "fact", None, ()),
        ("A line with a #tag only", "note", None, ("tag",)),
        ("Onboarding\n\nRun make install, then make test.", "note", "guide", ()),
    ]
    deploy = store.memories[6:]
    assert [(m.text, m.type) for m in deploy] == [
        ("Deploys run the migration first #ops", "lesson"),
        ("Small pull requests", "preference"),
    ]
    by_text = {m.text.split(" (")[0]: m for m in store.memories}
    redis = by_text["Use Redis for the cache #redis"]
    assert redis.created_at == "2026-02-01T09:00:00.000000Z" == redis.valid_from
    assert by_text["Postgres 16 holds the orders"].created_at == "2026-02-02T09:00:00.000000Z"
    # the @effective qualifier is the memory's valid time
    lesson = deploy[0]
    assert (lesson.valid_from, lesson.valid_until) == (
        "2026-06-10T00:00:00.000000Z",
        "2026-07-27T00:00:00.000000Z",
    )
    # keys: the note's permalink, the observation's place in it; the same on every read
    assert redis.key.startswith("alpha-notes/design/cache/observations/decision/")
    assert [m.key for m in basic_memory.read(config, alpha).memories] == [
        m.key for m in store.memories
    ]
    # the note file, relative to the project folder
    assert [c.path for c in redis.citations] == ["notes/design/cache.md"]
    assert [c.path for c in lesson.citations] == ["notes/ops/Deploy.md"]
    # relations: from each memory of the note to the first memory of the other note; a
    # relation to a note nobody wrote is left out
    storage_first = by_text["Postgres 16 holds the orders"].key
    cache_first = redis.key
    for memory in store.memories[:3]:
        assert [(e.kind, e.target, e.label) for e in memory.edges] == [
            ("relates", storage_first, "depends_on")
        ]
    assert [(e.target, e.label) for e in store.memories[3].edges] == [(cache_first, "part_of")]
    assert [(e.target, e.label) for e in lesson.edges] == [(storage_first, "follows")]
    assert store.memories[5].edges == ()


def test_only_the_project_whose_folder_is_the_importing_one(scenario):
    config, alpha = scenario
    beta = basic_memory.read(config / "memory.db", alpha.parent / "beta")
    assert [m.text for m in beta.memories] == [
        "Beta keeps its queue in SQS",
        "Beta runs in eu-west-1",
    ]
    assert beta.other_projects == 8
    assert beta.memories[0].citations[0].path == "notes/beta.md"
    # a folder with no basic-memory project in it, or above one, reads nothing
    assert basic_memory.read(config, alpha / "notes" / "design").memories == []
    whole = basic_memory.read(config, alpha.parent)
    assert len(whole.memories) == 10 and whole.other_projects == 0
    # the one named, wherever its folder is: no citation outside the project
    named = basic_memory.read(config, alpha.parent / "elsewhere", name="beta")
    assert [m.citations for m in named.memories] == [(), ()]


@pytest.fixture
def copy(scenario, tmp_path):
    config, alpha = scenario
    target = tmp_path / "memory.db"
    with sqlite3.connect(config / "memory.db") as source, sqlite3.connect(target) as dest:
        source.backup(dest)
    source.close()
    dest.close()
    return target, alpha


def _refused(source: Path, project: Path) -> str:
    with pytest.raises(InvalidInput) as caught:
        basic_memory.read(source, project)
    assert caught.value.field == "source"
    assert "\n" not in caught.value.message
    return caught.value.message


def test_not_a_basic_memory_store(copy, tmp_path):
    _, alpha = copy
    text = tmp_path / "memory.md"
    text.write_text("# not a database\n" * 10)
    assert "is not a basic-memory store (not a SQLite database)" in _refused(text, alpha)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE observations (id)").connection.commit()
    assert "is not a basic-memory store (no project, entity" in _refused(other, alpha)
    (tmp_path / "empty").mkdir()
    missing = _refused(tmp_path / "empty", alpha)
    assert "no such file (a basic-memory store is memory.db)" in missing


def test_an_unknown_schema_version(copy):
    db, alpha = copy
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0043'")
    conn.close()
    message = _refused(db, alpha)
    assert "basic-memory schema version 0043 is not one memls reads (it knows 0042" in message


def test_a_locked_store(copy):
    db, alpha = copy
    holder = sqlite3.connect(db)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("DELETE FROM observation")
    try:
        assert "is locked by another process (basic-memory writing?)" in _refused(db, alpha)
    finally:
        holder.rollback()
        holder.close()


def test_a_corrupt_store(copy):
    db, alpha = copy
    data = bytearray(db.read_bytes())
    for start in range(2 * 4096, len(data) - 4096, 4096):
        data[start : start + 64] = b"\xa5" * 64
    db.write_bytes(bytes(data))
    assert f"{db} is corrupt: database disk image is malformed" in _refused(db, alpha)


def test_a_copy_is_read_as_the_store(copy, scenario):
    db, alpha = copy
    config, _ = scenario
    assert basic_memory.read(db, alpha).memories == basic_memory.read(config, alpha).memories


def test_import_keeps_tags_and_named_relations_once(run, scenario):
    config, alpha = scenario
    code, out, err = run(
        "import", "--from", "basic-memory", str(config), "-p", str(alpha), "--json"
    )
    assert code == 0, err
    (counts,) = json.loads(out)["projects"]
    assert (counts["read"], counts["stored"], counts["merged"]) == (8, 8, 0)
    # the three memories of "Cache layer" depend on Storage's first, Storage's two are part of
    # Cache's first, Deploy's two follow Storage's first; a tag a (memory, tag)
    assert (counts["edges"], counts["tags"]) == (7, 7)

    def listed() -> dict[str, dict]:
        code, out, err = run("list", "-p", str(alpha), "--json", "--limit", "100")
        assert code == 0, err
        return {m["content"].split(" (")[0]: m for m in json.loads(out)["memories"]}

    got = listed()
    redis = got["Use Redis for the cache #redis"]
    postgres = got["Postgres 16 holds the orders"]
    lesson = got["Deploys run the migration first #ops"]
    # an observation's #tags first, then its note's front-matter tags
    assert redis["tags"] == ["redis", "infra"]
    assert got["Cache keys start with the service name"]["tags"] == ["infra"]
    assert got["A line with a #tag only"]["tags"] == ["tag"] and postgres.get("tags", []) == []
    assert lesson["tags"] == ["ops"]
    cache = [m for m in got.values() if "infra" in m.get("tags", [])]  # Cache layer's three
    assert len(cache) == 3
    for memory in cache:
        assert memory["related"] == [{"id": postgres["id"], "label": "depends_on"}]
    assert postgres["related"] == [{"id": redis["id"], "label": "part_of"}]
    assert lesson["related"] == [{"id": postgres["id"], "label": "follows"}]
    assert sorted((r["id"], r["label"]) for r in postgres["relatedBy"]) == sorted(
        [(m["id"], "depends_on") for m in cache]
        + [(lesson["id"], "follows"), (got["Small pull requests"]["id"], "follows")]
    )
    assert [(r["id"], r["label"]) for r in redis["relatedBy"]] == [
        (postgres["id"], "part_of"),
        (got["A line with a #tag only"]["id"], "part_of"),
    ]

    # as a person reads them: under each memory of a list, in the fields of one
    code, out, err = run("list", "-p", str(alpha), "--limit", "100")
    assert code == 0, err
    assert "\n    tags redis, infra\n" in out
    assert f"\n    depends_on {postgres['id']}\n" in out
    code, out, err = run("get", redis["id"], "-p", str(alpha))
    assert code == 0, err
    assert "tags            redis, infra" in out
    assert f"relatedBy       part_of {postgres['id']}, part_of " in out

    # a second import brings nothing, and nothing twice
    code, out, err = run(
        "import", "--from", "basic-memory", str(config), "-p", str(alpha), "--json"
    )
    assert code == 0, err
    (again,) = json.loads(out)["projects"]
    assert (again["stored"], again["already"], again["edges"], again["tags"]) == (0, 8, 0, 0)
    assert listed() == got
