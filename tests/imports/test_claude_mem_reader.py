"""The claude-mem reader on stores claude-mem makes itself: claude-mem 13.25.3's own database
module (its SessionStore, run by Bun as its worker runs it; tests/imports/setup_claude_mem.sh
caches both) writes the sessions, observations and summaries, offline."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from daemon_helpers import make_data
from memls import protocol as p
from memls.daemon import open_engine
from memls.errors import InvalidInput
from memls.store.foreign import claude_mem

HERE = Path(__file__).parent
BANNER = "#" * 86
AT = "2026-03-0{}T10:00:00.000Z"


@pytest.fixture(scope="session")
def claude_mem_tool() -> tuple[str, str]:
    """(bun, claude-mem's package folder); skipped, loudly, where they cannot be installed."""
    done = subprocess.run(
        ["bash", str(HERE / "setup_claude_mem.sh")], capture_output=True, text=True, timeout=900
    )
    if done.returncode == 3:
        message = (
            f"\n{BANNER}\n## SKIPPED: claude-mem cannot be installed here:\n"
            f"## {done.stderr.strip()[-600:]}\n{BANNER}"
        )
        sys.stderr.write(message + "\n")
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)
    assert done.returncode == 0, done.stderr[-2000:]
    bun, package = done.stdout.strip().splitlines()[-2:]
    return bun, package


def observation(at: int, kind: str, title: str, **fields: object) -> dict[str, object]:
    return {
        "at": AT.format(at),
        "type": kind,
        "title": title,
        "subtitle": fields.get("subtitle"),
        "facts": fields.get("facts", []),
        "narrative": fields.get("narrative"),
        "concepts": fields.get("concepts", []),
        "files_read": fields.get("files_read", []),
        "files_modified": fields.get("files_modified", []),
    }


def make_store(tool: tuple[str, str], root: Path, spec: list[dict]) -> tuple[Path, dict]:
    bun, package = tool
    spec_file = root / "spec.json"
    spec_file.write_text(json.dumps(spec))
    data = root / "claude-mem"
    data.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(root / "home"), "CLAUDE_MEM_DATA_DIR": str(data)}
    done = subprocess.run(
        [
            bun,
            str(HERE / "claude_mem_store.js"),
            package,
            str(data / "claude-mem.db"),
            str(spec_file),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return data / "claude-mem.db", json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def scenario(claude_mem_tool, tmp_path_factory):
    """(claude-mem.db, project folder `alpha`): sessions of alpha (one adopted from a worktree),
    of beta, of no working folder (claude-mem's 'unknown-project') and of an empty project."""
    root = tmp_path_factory.mktemp("claude-mem").resolve()
    alpha = root / "alpha"
    (alpha / "src").mkdir(parents=True)
    for name in ("src/cache.py", "src/store.py", "README.md"):
        (alpha / name).write_text("x = 1\n")
    spec = [
        {
            "content": "c-alpha",
            "memory": "m-alpha",
            "project": "alpha",
            "prompt": "make the cache faster",
            "observations": [
                observation(
                    1,
                    "decision",
                    "Cache in Redis",
                    subtitle="not in process",
                    narrative="Two workers share one cache.",
                    facts=["Redis 7", "TTL 60 s"],
                    concepts=["trade-off", "why-it-exists"],
                    files_read=["src/cache.py", "src/gone.py", "/etc/hostname"],
                    files_modified=[str(alpha / "src/store.py")],
                ),
                observation(2, "discovery", "The store batches writes", concepts=["how-it-works"]),
                observation(3, "bugfix", "Keys were not expired", narrative="Set a TTL."),
                observation(4, "feature", "Added a cache warmup", files_read=["README.md"]),
            ],
            "summaries": [
                {
                    "at": AT.format(5),
                    "request": "make the cache faster",
                    "investigated": "the store's write path",
                    "learned": "Batching writes halves the latency.",
                    "completed": "Redis cache",
                    "next_steps": "warm it at start",
                    "notes": None,
                }
            ],
        },
        {
            "content": "c-wt",
            "memory": "m-wt",
            "project": "alpha-wt",
            "prompt": "p",
            "adoptedInto": "alpha",
            "observations": [observation(6, "change", "Worktree renamed a flag")],
        },
        {
            "content": "c-beta",
            "memory": "m-beta",
            "project": "beta",
            "prompt": "p",
            "observations": [observation(1, "decision", "Beta uses Postgres")],
            "summaries": [
                {
                    "at": AT.format(2),
                    "request": "r",
                    "investigated": "i",
                    "learned": "l",
                    "completed": "c",
                    "next_steps": "n",
                    "notes": None,
                }
            ],
        },
        {
            "content": "c-none",
            "memory": "m-none",
            "project": "unknown-project",
            "prompt": "p",
            "observations": [observation(7, "discovery", "A session with no folder")],
        },
        {
            "content": "c-empty",
            "memory": "m-empty",
            "project": "",
            "prompt": "p",
            "observations": [observation(8, "decision", "A row of no project")],
        },
    ]
    db, ids = make_store(claude_mem_tool, root, spec)
    return db, alpha, ids


def test_this_projects_observations_and_summaries(scenario):
    db, alpha, ids = scenario
    before = (db.read_bytes(), db.stat().st_mtime_ns, sorted(p.name for p in db.parent.iterdir()))
    store = claude_mem.read(db, alpha)
    after = (db.read_bytes(), db.stat().st_mtime_ns, sorted(p.name for p in db.parent.iterdir()))
    assert after == before, "the store was changed (or a file made beside it)"

    assert (store.tool, store.version, store.source) == ("claude-mem", "52", str(db))
    by_key = {m.key: m for m in store.memories}
    obs = ids["m-alpha"]["observations"]
    summary = ids["m-alpha"]["summaries"][0]
    assert list(by_key) == [
        f"observation:m-alpha:{obs[0]}",
        f"observation:m-alpha:{obs[1]}",
        f"observation:m-alpha:{obs[2]}",
        f"observation:m-alpha:{obs[3]}",
        f"summary:m-alpha:{summary}",
        f"summary:m-alpha:{summary}:learned",
        f"observation:m-wt:{ids['m-wt']['observations'][0]}",
    ]
    decision = by_key[f"observation:m-alpha:{obs[0]}"]
    assert decision.text == (
        "Cache in Redis — not in process\n\nTwo workers share one cache.\n\n- Redis 7\n- TTL 60 s"
    )
    assert decision.type == "decision" and decision.source_type is None
    assert decision.tags == ("trade-off", "why-it-exists")
    assert decision.created_at == "2026-03-01T10:00:00.000000Z" == decision.valid_from
    # files that exist in the project, relative to it; a file gone or outside it is dropped
    assert [(c.path, c.role) for c in decision.citations] == [
        ("src/store.py", "modified"),
        ("src/cache.py", "read"),
    ]
    kinds = [(m.type, m.source_type) for m in store.memories]
    assert kinds == [
        ("decision", None),
        ("fact", None),
        ("lesson", None),
        ("note", "feature"),
        ("note", "session_summary"),
        ("lesson", None),
        ("note", "change"),
    ]
    assert by_key[f"observation:m-alpha:{obs[3]}"].citations[0].path == "README.md"
    note = by_key[f"summary:m-alpha:{summary}"]
    assert note.text == (
        "Request: make the cache faster\nInvestigated: the store's write path\n"
        "Completed: Redis cache\nNext steps: warm it at start"
    )
    assert note.created_at == "2026-03-05T10:00:00.000000Z"
    assert by_key[f"summary:m-alpha:{summary}:learned"].text == (
        "Batching writes halves the latency."
    )


def test_rows_of_no_project_apart_and_other_projects_counted(scenario):
    db, alpha, ids = scenario
    store = claude_mem.read(db, alpha)
    assert [m.text for m in store.unscoped] == ["A session with no folder", "A row of no project"]
    assert [m.type for m in store.unscoped] == ["fact", "decision"]
    # beta's observation, and its summary's note and lesson
    assert store.other_projects == 3
    beta = claude_mem.read(db, alpha.parent / "beta")
    assert [m.text for m in beta.memories][0] == "Beta uses Postgres"
    assert (
        beta.other_projects == 7
    )  # alpha's four observations, its note and lesson, the worktree's


def test_the_folder_of_the_store_is_read_as_the_store(scenario):
    db, alpha, _ = scenario
    assert len(claude_mem.read(db.parent, alpha).memories) == 7


@pytest.fixture
def copy(scenario, tmp_path):
    db, alpha, _ = scenario
    target = tmp_path / "claude-mem.db"
    shutil.copy(db, target)
    return target, alpha


def _refused(source: Path, project: Path) -> str:
    with pytest.raises(InvalidInput) as caught:
        claude_mem.read(source, project)
    assert caught.value.field == "source"
    assert "\n" not in caught.value.message
    return caught.value.message


def test_not_a_claude_mem_store(copy, tmp_path):
    _, alpha = copy
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 10)
    assert "is not a claude-mem store (not a SQLite database)" in _refused(text, alpha)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE memories (id)").connection.commit()
    assert "is not a claude-mem store (no observations" in _refused(other, alpha)
    assert "no such file" in _refused(tmp_path / "missing.db", alpha)


def test_an_unknown_schema_version(copy):
    db, alpha = copy
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_versions (version, applied_at) VALUES (60, 'x')")
    conn.close()
    message = _refused(db, alpha)
    assert "claude-mem schema version 60 is not one memls reads (it knows 49, 50, 51, 52" in message


def test_a_locked_store(copy):
    db, alpha = copy
    holder = sqlite3.connect(db)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("DELETE FROM observations")
    try:
        assert "is locked by another process (claude-mem writing?)" in _refused(db, alpha)
    finally:
        holder.rollback()
        holder.close()


def test_a_corrupt_store(copy):
    db, alpha = copy
    data = bytearray(db.read_bytes())
    page = 4096
    for start in range(2 * page, len(data) - page, page):
        data[start : start + 64] = b"\xa5" * 64
    db.write_bytes(bytes(data))
    assert f"{db} is corrupt: database disk image is malformed" in _refused(db, alpha)


def test_files_an_observation_names_are_cited_and_its_concepts_tagged_once(scenario, tmp_path):
    """The import cites the project's files an observation names, as a store with citations
    does; a file gone from the project, or outside it, is not cited; its concepts are tags; a
    second import adds nothing."""
    db, alpha, _ = scenario
    params = p.ImportFromParams(from_="claude-mem", source=str(db), project=str(alpha))
    with open_engine(make_data(tmp_path), front="cli") as engine:
        first = engine.import_from(params).projects[0]
        assert (first.citations, first.citations_skipped) == (3, 0)
        cited, tags = {}, {}
        for memory_id in first.ids:
            memory = engine.get(p.GetParams(id=memory_id, project=str(alpha)))
            for c in memory.citations:
                cited.setdefault(memory.content.splitlines()[0], []).append((c.path, c.state))
            if memory.tags:
                tags[memory.content.splitlines()[0]] = memory.tags
        assert cited == {
            "Cache in Redis — not in process": [
                ("src/store.py", "fresh"),
                ("src/cache.py", "fresh"),
            ],
            "Added a cache warmup": [("README.md", "fresh")],
        }
        # its concepts are its tags
        assert tags == {
            "Cache in Redis — not in process": ["trade-off", "why-it-exists"],
            "The store batches writes": ["how-it-works"],
        }
        assert first.tags == 3
        again = engine.import_from(params).projects[0]
        assert (again.stored, again.citations, again.already) == (0, 0, first.stored)
        assert again.tags == 0
