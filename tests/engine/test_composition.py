"""The engine's use cases are composed, not stacked: no class of memls.engine inherits
another class of memls.engine (each gets what it uses through its constructor), and the
shared parts are made once and handed to every use case that uses them."""

from __future__ import annotations

import ast
from pathlib import Path

import memls.engine
from memls.engine.facade import Engine

PACKAGE = Path(memls.engine.__file__).parent


def _classes() -> dict[str, list[str]]:
    """class name -> the names of its bases, for every class defined in memls.engine."""
    found: dict[str, list[str]] = {}
    for module in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(), str(module))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                found[f"{module.stem}.{node.name}"] = bases
    return found


def test_no_engine_class_inherits_another():
    classes = _classes()
    ours = {name.split(".", 1)[1] for name in classes}
    assert {"Engine", "Writes", "Reads", "Review", "Notes", "Conflicts", "Admin"} <= ours
    stacked = {name: bases for name, bases in classes.items() if ours & set(bases)}
    assert stacked == {}, f"use cases inherit one another: {stacked}"


def test_the_use_cases_share_one_of_each_part(engine):
    made = engine._cases
    cases = [
        made.writes,
        made.notes,
        made.reads,
        made.review,
        made.conflicts,
        made.admin,
        made.transfers,
    ]
    assert not any(isinstance(case, Engine) for case in cases)
    for part in ("units", "clock", "indexing", "announcer"):
        held = {id(getattr(case, part)) for case in cases if hasattr(case, part)}
        assert held == {id(getattr(made, part, engine.clock))}, part
    assert made.reads.cache is engine.cache
    assert engine.listeners is made.announcer.listeners
    # restatements merged, paraphrases across note files linked, then contradictions
    checks = engine.indexer.after_index
    assert checks.func == made.writes.after_index
    linked = checks.keywords["then"]
    assert linked.func.__name__ == "after_index"
    assert linked.keywords == {"then": made.conflicts.after_index}
