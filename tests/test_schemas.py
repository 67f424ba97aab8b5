"""schemas/ holds exactly what the wire types generate (run `memls schemas --out schemas`)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from memls import protocol, schemas

CHECKED_IN = Path(__file__).resolve().parents[1] / "schemas"


def test_checked_in_schemas_match_the_code():
    generated = schemas.generate()
    on_disk = {p.name: p.read_text() for p in CHECKED_IN.glob("*.json")}
    assert sorted(on_disk) == sorted(generated), "run: memls schemas --out schemas"
    for name, schema in generated.items():
        assert on_disk[name] == schemas.render(schema), f"{name} differs: regenerate"


def test_one_schema_per_params_result_and_notification():
    names = set(schemas.generate())
    for method in protocol.METHODS:
        base = method.replace("/", ".")
        assert {f"{base}.params.json", f"{base}.result.json"} <= names
    for method in protocol.NOTIFICATIONS:
        assert f"{method.replace('/', '.')}.notification.json" in names


def test_schemas_are_valid_draft_2020_12_and_accept_real_messages():
    store = json.loads((CHECKED_IN / "memory.store.params.json").read_text())
    jsonschema.Draft202012Validator.check_schema(store)
    validator = jsonschema.Draft202012Validator(store)
    assert validator.is_valid({"text": "We use pnpm", "type": "decision", "validFrom": "2025"})
    assert not validator.is_valid({"text": "x", "type": "opinion"})
    assert not validator.is_valid({"text": "x", "project": "   "})
    assert not validator.is_valid({"type": "note"})
