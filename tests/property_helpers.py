"""Shared pieces of the engine's property tests (tests/engine/test_scope_isolation.py,
test_user_scope.py, test_project_refused.py, test_bitemporal.py, test_review_state_machine.py,
tests/index/test_worker.py, tests/test_scope.py).

Each example gets a fresh data directory and a fake clock (one step per reading), so histories
have distinct, predictable times. Engines are lexical-only (vectors=False) except in
test_scope_isolation_with_vectors, which shares the session `models` runtime: never let an engine
load its own models per example (each open/close cycle keeps ~100 MB).

The models below follow the rules written in memls.scope / memls.lifecycle / the Visibility
docstring, not the SQL that implements them. Before reading audit/conflicts, tests flush the
background indexer (it runs the write-time contradiction check and adds audit entries).
"""

from __future__ import annotations

import tempfile
import threading
import unicodedata
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from memls import timeutil
from memls.engine import Engine
from memls.scope import USER_PROJECT

BASE = datetime(2025, 1, 1, tzinfo=UTC)
VISIBLE = ("candidate", "verified")
TRUST_STATES = ("candidate", "verified", "flagged", "rejected")


def ts(moment: datetime) -> str:
    return timeutil.format_ts(moment)


class FakeClock:
    """Zero-argument clock: every call moves one step forward.

    The engine's background indexer (write-time contradiction check) reads the clock too, from
    its own thread; `last` is the latest reading taken on the calling (test) thread.
    """

    def __init__(self, start: datetime = BASE, step: timedelta = timedelta(seconds=1)) -> None:
        self.moment = start
        self.step = step
        self._lock = threading.Lock()
        self._local = threading.local()

    def __call__(self) -> str:
        with self._lock:
            self.moment += self.step
            value = ts(self.moment)
        self._local.last = value
        return value

    @property
    def last(self) -> str | None:
        return getattr(self._local, "last", None)

    def peek(self) -> str:
        """The earliest value the next call can return."""
        with self._lock:
            return ts(self.moment + self.step)


class Fresh:
    """A new data directory and engine (fake clock) for one example."""

    def __init__(self, front: str = "test", models=None) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="memls-prop-")
        self.clock = FakeClock()
        # Lexical-only unless a shared model runtime is given (never load models per example).
        self.engine = Engine.open(
            self._tmp.name, front=front, clock=self.clock, vectors=models is not None, models=models
        )

    def close(self) -> None:
        try:
            self.engine.close()
        finally:
            self._tmp.cleanup()

    def __enter__(self) -> Fresh:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def expected_key(raw: str) -> str:
    """The documented normalisation: NFC, then outer white space stripped."""
    return unicodedata.normalize("NFC", raw).strip()


def invisible_only(key: str) -> bool:
    """A key that renders as nothing is refused: white space, control, format,
    unassigned, separators, lone combining marks, the blank letters."""
    return all(
        c.isspace()
        or unicodedata.category(c)[0] in "CZ"
        or unicodedata.category(c) in ("Mn", "Me")
        or c in "\u115f\u1160\u3164\uffa0\u2800"
        for c in key
    )


def model_feedback_trust(trust: str, old: int, new: int) -> str:
    """Feedback rule written from the lifecycle docstring (not by calling lifecycle)."""
    if trust in VISIBLE and old > -3 and new <= -3:
        return "flagged"
    if trust == "flagged" and new > -3:
        return "candidate"
    return trust


DELTA = {"helpful": 1, "unhelpful": -1, "outdated": -2}
REVIEW_TARGET = {"approve": "verified", "reject": "rejected", "restore": "candidate"}


# Families of raw project names: every variant in a family normalises to the same key;
# different families are different projects (they differ in inner content).
NAME_FAMILIES: list[list[str]] = [
    ["alpha", " alpha", "alpha ", "alpha\t", "\talpha\n", "\u3000alpha\xa0"],
    ["Alpha", " Alpha"],  # case is content: a different project from "alpha"
    ["a b", " a b ", "a b\t"],
    ["a  b", "\na  b"],  # inner white space is content
    ["ab"],
    ["caf\u00e9", "cafe\u0301", " cafe\u0301 ", "caf\u00e9\u2003"],  # NFC vs NFD
    ["cafe"],  # without the accent: different
    ["\u00c5ngstr\u00f6m", "A\u030angstro\u0308m", "\u212bngstr\u00f6m"],  # incl. ANGSTROM SIGN
    ["\ud55c\uad6d\uc5b4", "\u1112\u1161\u11ab\u1100\u116e\u11a8\u110b\u1165"],  # Hangul NFD
    [
        "\u65e5\u672c\u8a9e/\u30d7\u30ed\u30b8\u30a7\u30af\u30c8",
        " \u65e5\u672c\u8a9e/\u30d7\u30ed\u30b8\u30a7\u30af\u30c8",
    ],
    ["alpha/beta", "alpha/beta\r\n"],
]
USER_FAMILY = [USER_PROJECT, " " + USER_PROJECT, USER_PROJECT + "\n"]

VOCAB = ["deploy", "database", "cache", "token", "release", "schema", "lint", "migration"]
QUERY_ALL = " ".join(VOCAB)


def text_strategy():
    """One to three distinct words of VOCAB: every project shares the vocabulary."""
    return st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3, unique=True).map(" ".join)
