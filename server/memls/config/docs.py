"""The rows the docs print for config.toml's keys and the environment settings (schemas/
config.json and README's settings table are generated from them: `memls.schemas`)."""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec
from msgspec import UNSET

from memls.config.env import Environment
from memls.config.introspect import expected, fields, unwrap


class Described(NamedTuple):
    key: str
    default: Any  # the value an absent key stands for, UNSET when there is none...
    unset: str  # ...and then what an absent key means, in words ("" if nothing to say)
    expect: str  # what a value must be ("an integer from 1 to 200")
    description: str


def described(owner: type) -> list[Described]:
    """What the docs print for each field of a section or of Environment."""
    rows = []
    for f in fields(owner):
        _, extra, schema = unwrap(f.type)
        default = f.default if f.default is not msgspec.NODEFAULT else schema.get("default", UNSET)
        if f.default_factory is not msgspec.NODEFAULT:
            default = f.default_factory()
        rows.append(
            Described(
                f.name,
                default,
                str(extra.get("unset", "")),
                expected(f.type, env=owner is Environment),
                str(schema.get("description", "")),
            )
        )
    return rows
