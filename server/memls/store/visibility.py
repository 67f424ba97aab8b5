"""The hard filters of every read path (project, trust, validity, transaction time, types) as
SQL over the memories table, with named parameters."""

from __future__ import annotations

from typing import Any

from memls.scope import VISIBLE_TRUST, Visibility


def where(seen: Visibility, alias: str = "m") -> tuple[str, dict[str, Any]]:
    """The WHERE clause (without WHERE) and its named arguments (all prefixed `v_`)."""
    a = alias
    args: dict[str, Any] = {f"v_p{i}": p for i, p in enumerate(seen.projects)}
    trust = {f"v_t{i}": t for i, t in enumerate(VISIBLE_TRUST)}
    args.update(trust)
    clauses = [
        f"{a}.project IN ({', '.join(':' + k for k in args if k.startswith('v_p'))})",
        f"{a}.trust IN ({', '.join(':' + k for k in trust)})",
    ]
    if seen.valid_at is None and seen.as_of is None:
        clauses += [
            f"{a}.status = 'active'",
            f"{a}.invalidated_at IS NULL",
            f"{a}.valid_from <= :v_now",
            f"({a}.valid_until IS NULL OR {a}.valid_until > :v_now)",
        ]
        args["v_now"] = seen.now
    if seen.valid_at is not None:
        clauses += [
            f"{a}.valid_from <= :v_valid_at",
            f"({a}.valid_until IS NULL OR {a}.valid_until > :v_valid_at)",
        ]
        args["v_valid_at"] = seen.valid_at
    if seen.as_of is not None:
        clauses += [
            f"{a}.recorded_at <= :v_as_of",
            f"({a}.invalidated_at IS NULL OR {a}.invalidated_at > :v_as_of)",
        ]
        args["v_as_of"] = seen.as_of
    if seen.types:
        types = {f"v_y{i}": t for i, t in enumerate(seen.types)}
        clauses.append(f"{a}.type IN ({', '.join(':' + k for k in types)})")
        args.update(types)
    return " AND ".join(clauses), args
