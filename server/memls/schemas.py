"""JSON Schemas (draft 2020-12) of every wire message — memory/* requests, notifications and the
owner socket's own messages — generated from the msgspec Structs of `memls.protocol`, of
`memls check --json`'s report, and of config.toml (`memls.config`); checked in at schemas/
and compared with the code by a test. README's settings table is generated here too:
`python -m memls.schemas README.md` rewrites it in place."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from memls import config, protocol

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _schema(kind: type, title: str) -> dict:
    (root,), components = msgspec.json.schema_components([kind], ref_template="#/$defs/{name}")
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
            kind, f"{method} notification (server to client)"
        )
    for method, (params, result) in sorted(protocol.OWNER_METHODS.items()):
        base = "owner." + method.replace("$/", "").replace("/", ".")
        files[f"{base}.params.json"] = _schema(params, f"{method} params (owner socket)")
        files[f"{base}.result.json"] = _schema(result, f"{method} result (owner socket)")
    files["owner.error.json"] = _schema(protocol.OwnerError, "error body (owner socket)")
    files["check.report.json"] = _schema(protocol.CheckReport, "memls check --json report")
    files["config.json"] = _schema(config.ConfigFile, "memls config.toml")
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


# ---------------------------------------------------------------- README's settings table

README_BEGIN = (
    "<!-- settings table: generated from memls.config by "
    "`python -m memls.schemas README.md`; do not edit -->"
)
README_END = "<!-- end of the settings table -->"


def _value(row: config.Described) -> str:
    if row.default is msgspec.UNSET:
        return row.unset
    if isinstance(row.default, bool):
        return f"`{str(row.default).lower()}`"
    if isinstance(row.default, list):  # a TOML array, as the user writes it
        return f"`{json.dumps(row.default)}`"
    return f"`{row.default}`"


def settings_table() -> str:
    """Every config.toml key and MEMLS_* variable with what it takes and does, from the
    Structs' descriptions. Keys of a section that read alike share one row."""
    lines = ["| `config.toml` | value | default | |", "|---|---|---|---|"]
    for section, struct in config.sections().items():
        rows: list[tuple[list[str], str, str, str]] = []
        for row in config.described(struct):
            cells = (_value(row), row.expect, row.description)
            if rows and rows[-1][1:] == cells:
                rows[-1][0].append(row.key)
            else:
                rows.append(([row.key], *cells))
        for keys, default, expect, description in rows:
            names = ", ".join(f"`{k}`" for k in keys)
            lines.append(f"| `[{section}]` {names} | {expect} | {default} | {description} |")
    lines += ["", "| environment | value | |", "|---|---|---|"]
    for row in config.described(config.Environment):
        lines.append(f"| `{config.env_name(row.key)}` | {row.expect} | {row.description} |")
    return "\n".join([README_BEGIN, *lines, README_END])


def with_settings_table(readme: str) -> str:
    """`readme` with the block between the markers replaced by settings_table()."""
    start, end = readme.index(README_BEGIN), readme.index(README_END) + len(README_END)
    return readme[:start] + settings_table() + readme[end:]


if __name__ == "__main__":
    import sys

    for name in sys.argv[1:]:
        path = Path(name)
        path.write_text(with_settings_table(path.read_text(encoding="utf-8")), encoding="utf-8")
