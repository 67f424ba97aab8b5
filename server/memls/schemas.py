"""JSON Schemas (draft 2020-12) of every wire message — memory/* requests, notifications and the
owner socket's own messages — generated from the msgspec Structs of `memls.protocol`; checked
in at schemas/ and compared with the code by a test."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from memls import protocol

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _schema(kind: type, title: str) -> dict:
    (root,), components = msgspec.json.schema_components([kind],
                                                         ref_template="#/$defs/{name}")
    schema = {"$schema": DIALECT, "title": title, **root}
    if components:
        schema["$defs"] = components
    return schema


def generate() -> dict[str, dict]:
    """file name -> schema, one per params, result and notification."""
    files: dict[str, dict] = {}
    for method, spec in sorted(protocol.METHODS.items()):
        base = method.replace("/", ".")
        files[f"{base}.params.json"] = _schema(spec.params, f"{method} params")
        files[f"{base}.result.json"] = _schema(spec.result, f"{method} result")
    for method, kind in sorted(protocol.NOTIFICATIONS.items()):
        files[f"{method.replace('/', '.')}.notification.json"] = _schema(
            kind, f"{method} notification (server to client)")
    for method, (params, result) in sorted(protocol.OWNER_METHODS.items()):
        base = "owner." + method.replace("$/", "").replace("/", ".")
        files[f"{base}.params.json"] = _schema(params, f"{method} params (owner socket)")
        files[f"{base}.result.json"] = _schema(result, f"{method} result (owner socket)")
    files["owner.error.json"] = _schema(protocol.OwnerError, "error body (owner socket)")
    return files


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in generate().items():
        path = out / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written
