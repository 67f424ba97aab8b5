"""The environment settings (`MEMLS_*`), listed once in `Environment` and typed like
config.toml's keys."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any

import msgspec
import msgspec.inspect
from msgspec import UNSET, Meta, UnsetType

from memls.config.file import URL
from memls.config.introspect import expected, field_type, fields, show, unwrap, where
from memls.errors import InvalidInput

ENV_DATA_DIR = "MEMLS_DATA_DIR"
ENV_PREFIX = "MEMLS_"

_BOOL_WORDS = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}


class Environment(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """The environment settings: each field is read from MEMLS_ + its name upper-cased. An
    empty variable counts as unset; a boolean is one of 1/true/yes/on or 0/false/no/off."""

    data_dir: (
        Annotated[
            str,
            Meta(
                description="the data directory when there is no --data-dir",
            ),
        ]
        | UnsetType
    ) = UNSET
    chroma_url: (
        Annotated[
            str,
            URL,
            Meta(
                description="a Chroma server; wins over [index] chroma_url",
            ),
        ]
        | UnsetType
    ) = UNSET
    rerank: (
        Annotated[
            bool,
            Meta(
                description="0 switches re-ranking off whatever [models] rerank says; "
                "1 leaves it to the setting",
            ),
        ]
        | UnsetType
    ) = UNSET
    agent_memories: (
        Annotated[
            bool,
            Meta(
                description="0 stops reading the memories agents keep by themselves, "
                "whatever [notes] agent_memories says; 1 leaves it to the setting",
            ),
        ]
        | UnsetType
    ) = UNSET
    model_cache: (
        Annotated[
            str,
            Meta(
                description="where optimised model graphs are kept (~100 MB, derived: a "
                "start loads them in ~0.15 s a model instead of ~0.4); default the user's "
                "cache directory, `off` for none",
            ),
        ]
        | UnsetType
    ) = UNSET
    token: (
        Annotated[
            str,
            Meta(
                description="`serve --tcp`: the token clients pass (else --token-file, else "
                "a new one in <data dir>/tcp.token)",
            ),
        ]
        | UnsetType
    ) = UNSET


def env_name(name: str) -> str:
    return ENV_PREFIX + name.upper()


def environment(environ: Mapping[str, str] | None = None) -> Environment:
    """The MEMLS_* settings of `environ` (default: this process's), typed; a bad value is
    refused naming the variable. Other MEMLS_ variables (the end-to-end tests') are not
    ours."""
    environ = os.environ if environ is None else environ
    raw: dict[str, Any] = {}
    for f in fields(Environment):
        text = environ.get(env_name(f.name), "")
        if not text.strip():
            continue
        is_bool = isinstance(unwrap(f.type)[0], msgspec.inspect.BoolType)
        raw[f.name] = _BOOL_WORDS.get(text.strip().lower(), text) if is_bool else text
    try:
        return msgspec.convert(raw, Environment)
    except msgspec.ValidationError as exc:
        name = where(exc)[0][0]
        expect = expected(field_type(Environment, name), env=True)
        raise InvalidInput(
            f"must be {expect}, not {show(environ[env_name(name)])} (environment variable)",
            field=env_name(name),
        ) from None
