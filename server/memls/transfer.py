"""Export and import: JSON Lines of every table row of one project, round-tripping exactly.

The first line is a header; each further line is {"table": NAME, "row": {column: value}}.
Local sequence numbers are not exported: rows keep their order instead. An import is scoped
like every other write: every row must be of the importing project, of a known table, and
name no other project's memory; it is all or nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from memls import secrets, textnorm
from memls.errors import InvalidInput
from memls.store.unit import Store

FORMAT = "memls-export"
FORMAT_VERSION = 1


def export(store: Store, project: str) -> Iterator[dict[str, Any]]:
    with store.read(project) as tx:
        lines: list[dict[str, Any]] = [
            {
                "format": FORMAT,
                "version": FORMAT_VERSION,
                "schemaVersion": store.version,
                "project": project,
            }
        ]
        lines += [{"table": table, "row": row} for table, row in tx.export_rows()]
    return iter(lines)


def parse_lines(project: str, lines: Iterable[str]) -> list[tuple[int, str, dict[str, Any]]]:
    """(line number, table, row) for every row line, after the header; InvalidInput names the
    first bad line."""
    parsed: list[tuple[int, str, dict[str, Any]]] = []
    header = None
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {number}: not JSON ({exc.msg})", field="file") from None
        if header is None:
            if not isinstance(item, dict) or item.get("format") != FORMAT:
                raise InvalidInput(f"line {number}: not a memls export header", field="file")
            if item.get("version") != FORMAT_VERSION:
                raise InvalidInput(
                    f"line {number}: export format {item.get('version')} is not supported",
                    field="file",
                )
            header = item
            continue
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("table"), str)
            or not isinstance(item.get("row"), dict)
        ):
            raise InvalidInput(f"line {number}: expected {{table, row}}", field="file")
        parsed.append((number, item["table"], item["row"]))
    if header is None:
        raise InvalidInput("the file is empty", field="file")
    return parsed


def screen_memories(parsed: list[tuple[int, str, dict[str, Any]]], *, redact: bool) -> None:
    """Every memory row's text checked for secrets: refused naming the line of the file, or
    redacted in place (its hashes follow its new text)."""
    for number, table, row in parsed:
        content = row.get("content")
        if table != "memories" or not isinstance(content, str):
            continue
        clean = secrets.screen(
            content, "file", redact_it=redact, prefix=f"line {number}: memory {row.get('id')} "
        )
        if clean != content:
            row["content"] = clean
            row["content_hash"] = textnorm.content_hash(clean)
            row["canonical_hash"] = textnorm.canonical_hash(clean)


def import_lines(
    store: Store,
    project: str,
    lines: Iterable[str],
    *,
    now: str,
    front: str,
    redact: bool = False,
) -> dict[str, int]:
    """Insert every row of an export into this project, all or nothing; every new memory is
    queued for the index. A memory holding a secret refuses the import, or is redacted."""
    parsed = parse_lines(project, lines)
    screen_memories(parsed, redact=redact)
    with store.write(project, front) as tx:
        counts = tx.import_rows(parsed)
        for _, table, row in parsed:
            if table == "memories":
                tx.outbox.enqueue(row["id"], "index", now)
        tx.audit("import", None, now, **{k: v for k, v in counts.items() if v})
    return counts
