"""Shared fixtures: a real engine on a real SQLite file in a temporary data directory."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memls import timeutil
from memls.engine import Engine

# every process a test or a module starts is stopped when it ends; the run fails, naming
# them, if any outlive it (tests/suite_processes.py)
pytest_plugins = ["suite_processes"]


class FakeClock:
    """Time that moves only when a test says so (one microsecond per reading otherwise)."""

    def __init__(self, start: str = "2025-01-01T00:00:00Z") -> None:
        self.moment = datetime.fromisoformat(start.replace("Z", "+00:00"))

    def __call__(self) -> str:
        self.moment += timedelta(microseconds=1)
        return timeutil.format_ts(self.moment)

    def set(self, when: str) -> None:
        self.moment = datetime.fromisoformat(when.replace("Z", "+00:00")).astimezone(UTC)

    def advance(self, **delta: float) -> None:
        self.moment += timedelta(**delta)


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory):
    """Optimised model graphs go to this run's temporary folder, not the user's cache (the
    engines and daemons the tests start, and their subprocesses, read the variable). One folder
    for the run, shared by its xdist workers (each graph is written whole, by rename): the
    graphs are optimised once a run, not once a worker."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker's folder is <the run's>/<worker id>
        base = base.parent
    folder = base / "model-cache"
    folder.mkdir(mode=0o700, exist_ok=True)
    before = os.environ.get("MEMLS_MODEL_CACHE")
    os.environ["MEMLS_MODEL_CACHE"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("MEMLS_MODEL_CACHE", None)
    else:
        os.environ["MEMLS_MODEL_CACHE"] = before


@pytest.fixture(scope="session", autouse=True)
def user_agent_memories_unread():
    """The memories agents keep in the user's own home (Claude Code's auto memory, Codex's and
    Gemini CLI's) are not read by the engines and daemons the tests start: a test of them lays
    out a HOME of its own and removes the variable (`monkeypatch.delenv`), and the real
    agents' tests build their environment from nothing."""
    before = os.environ.get("MEMLS_AGENT_MEMORIES")
    os.environ["MEMLS_AGENT_MEMORIES"] = "0"
    yield
    if before is None:
        os.environ.pop("MEMLS_AGENT_MEMORIES", None)
    else:
        os.environ["MEMLS_AGENT_MEMORIES"] = before


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def engine(tmp_path, clock):
    """Lexical-only engine (BM25): the engine's semantics, fast."""
    with Engine.open(tmp_path / "data", front="test", clock=clock, vectors=False) as e:
        yield e


@pytest.fixture(scope="session")
def models():
    """The real ONNX models, loaded once per test session and shared."""
    from memls.models import ModelRuntime

    with ModelRuntime() as runtime:
        yield runtime


@pytest.fixture
def vengine(tmp_path, clock, models):
    """The full engine: Chroma (embedded) + embedder + cross-encoder."""
    with Engine.open(tmp_path / "data", front="test", clock=clock, models=models) as e:
        yield e


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: one worker more than the cores. Most tests wait on processes they started (a
    daemon's start-up, its socket, an editor): the serial run used 35% of one core on a shared
    2-core machine. One more worker than cores keeps the cores busy while one waits.
    PYTEST_XDIST_AUTO_NUM_WORKERS=N still decides (xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1


# The folders whose tests take longest (real daemons, editors and CLIs started and waited on,
# the engine's stateful property tests), in the order they start under xdist: longest first,
# so the many short tests fill the workers' ends instead of one long module running alone at
# the end (pyproject: --dist loadfile --no-loadscope-reorder keeps this order).
FIRST = ("e2e", "agents", "reliability", "privacy", "imports", "daemon", "engine", "mcp", "lsp")
TESTS = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        top = item.path.relative_to(TESTS).parts[0] if item.path.is_relative_to(TESTS) else ""
        return FIRST.index(top) if top in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: each module keeps its own order
