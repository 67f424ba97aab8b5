"""JSON Schemas of the MCP tools, derived from the msgspec Structs of `memls.protocol`.

A tool's input schema is its params Struct's schema (the one `memory/*` validates against)
with the fields the tool fixes or keeps from the agent left out, the `project` field described
for an agent, and a description added to each property. Its output schema is the result
Struct's schema. Nothing is written by hand, so the shapes cannot drift from the wire types.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import msgspec

REF = "#/$defs/{name}"


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.add(ref.removeprefix("#/$defs/"))
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _closure(top: dict, components: dict[str, Any]) -> dict[str, Any]:
    """The components `top` refers to, directly or through others."""
    wanted: set[str] = set()
    _refs(top, wanted)
    done: dict[str, Any] = {}
    while wanted:
        name = wanted.pop()
        if name in done:
            continue
        done[name] = components[name]
        more: set[str] = set()
        _refs(components[name], more)
        wanted |= more - set(done)
    return done


def object_schema(kind: type) -> dict[str, Any]:
    """The Struct's schema as a top-level object (MCP wants `type: object` at the top), with
    the components it uses under `$defs`."""
    (_,), components = msgspec.json.schema_components([kind], ref_template=REF)
    top = copy.deepcopy(components[kind.__name__])
    defs = _closure(top, components)
    if defs:
        top["$defs"] = copy.deepcopy(defs)
    return top


def input_schema(
    kind: type, *, drop: tuple[str, ...] = (), project: str, descriptions: dict[str, str]
) -> dict[str, Any]:
    """The params Struct's schema for a tool: `drop` (wire names) left out, `project` optional
    and described, each property described from `descriptions`."""
    schema = object_schema(kind)
    schema.pop("title", None)
    props: dict[str, Any] = schema["properties"]
    for name in drop:
        props.pop(name, None)
    if "project" in props:
        prop = props["project"]
        prop["description"] = project
    for name, text in descriptions.items():
        if name not in props:
            raise KeyError(f"{kind.__name__} has no field {name!r} to describe")
        props[name]["description"] = text
    schema["required"] = [r for r in schema.get("required", []) if r in props]
    if not schema["required"]:
        del schema["required"]
    if "$defs" in schema:  # drop components only the removed fields used
        used: set[str] = set()
        _refs(props, used)
        kept = _closure({"properties": props}, {**schema["$defs"]})
        schema["$defs"] = {k: v for k, v in kept.items() if k in used or k in kept}
        if not schema["$defs"]:
            del schema["$defs"]
    json.dumps(schema)  # plain JSON, or fail at import
    return schema
