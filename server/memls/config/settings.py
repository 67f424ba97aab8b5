"""What config.toml and the environment configure, as the engine reads it: `load_settings`,
the process's limits (`apply_limits`), and config.toml decoded or refused naming
`section.key`."""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from memls import limits
from memls.config.env import env_name, environment
from memls.config.file import (
    ENGINE_RETRIEVAL_KEYS,
    ConfigFile,
    Limits,
)
from memls.config.introspect import expected, field_type, show, struct_of, where
from memls.config.paths import data_dir
from memls.errors import InvalidInput, MemlsError, StoreError

CONFIG_NAME = "config.toml"

# ---------------------------------------------------------------- what the engine reads


@dataclass(frozen=True)
class Settings:
    """What config.toml and the environment configure, as the engine reads it."""

    ttl_days: dict[str, float] = field(default_factory=dict)  # [ttl_days], the types set
    vectors: bool = True  # [index] vectors
    chroma_url: str | None = None  # $MEMLS_CHROMA_URL, else [index] chroma_url
    embedder_dir: str | None = None  # [models] embedder_dir
    reranker_dir: str | None = None  # [models] reranker_dir
    rerank: bool = True  # [models] rerank and not $MEMLS_RERANK=0
    rerank_off_by: str | None = None  # which of the two switched it off (for status)
    auto_supersede: bool = False  # [conflicts] auto_supersede
    instruction_globs: tuple[str, ...] = ()  # [notes] instructions
    record_globs: tuple[str, ...] = ()  # [notes] records
    note_globs: tuple[str, ...] = ()  # [notes] globs: notes beside the agents' files
    agent_memories: bool = True  # [notes] agent_memories and not $MEMLS_AGENT_MEMORIES=0
    retrieval: dict[str, int | float] = field(default_factory=dict)  # [retrieval], the keys set
    query_cache: bool = True  # [retrieval] cache
    query_cache_entries: int = 256  # [retrieval] cache_entries
    max_frame_bytes: int = Limits().max_frame_bytes  # [limits] max_frame_bytes
    max_content_bytes: int = Limits().max_content_bytes  # [limits] max_content_bytes
    secrets: str = "refuse"  # [privacy] secrets: refuse or redact


def load_settings(directory: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from `directory`/config.toml (absent: defaults) and the environment."""
    environ = os.environ if environ is None else environ
    path = directory / CONFIG_NAME
    config = decode(_read(path), path) if path.exists() else ConfigFile()
    env = environment(environ)
    rerank_off_by = None
    if env.rerank is False:
        rerank_off_by = f"{env_name('rerank')}={environ[env_name('rerank')].strip()}"
    elif not config.models.rerank:
        rerank_off_by = "[models] rerank = false"
    return Settings(
        ttl_days=_set_fields(config.ttl_days),
        vectors=config.index.vectors,
        chroma_url=_opt(env.chroma_url) or _opt(config.index.chroma_url),
        embedder_dir=_opt(config.models.embedder_dir),
        reranker_dir=_opt(config.models.reranker_dir),
        rerank=rerank_off_by is None,
        rerank_off_by=rerank_off_by,
        auto_supersede=config.conflicts.auto_supersede,
        instruction_globs=tuple(config.notes.instructions),
        record_globs=tuple(config.notes.records),
        note_globs=tuple(config.notes.globs),
        agent_memories=config.notes.agent_memories and env.agent_memories is not False,
        retrieval={
            k: v for k, v in _set_fields(config.retrieval).items() if k not in ENGINE_RETRIEVAL_KEYS
        },
        query_cache=config.retrieval.cache,
        query_cache_entries=config.retrieval.cache_entries,
        max_frame_bytes=config.limits.max_frame_bytes,
        max_content_bytes=config.limits.max_content_bytes,
        secrets=config.privacy.secrets,
    )


def apply_limits(directory: str | os.PathLike | None) -> limits.Limits:
    """Make `[limits]` of <directory>/config.toml the process's limits (`memls.limits`);
    the defaults when there is no file, or a bad one (the store's opening names the bad key).
    Creates nothing."""
    path = data_dir(directory)
    if not (path / CONFIG_NAME).is_file():
        return limits.configure(limits.Limits())
    try:
        settings = load_settings(path)
    except MemlsError:
        return limits.configure(limits.Limits())
    return limits.configure(
        limits.Limits(
            max_frame_bytes=settings.max_frame_bytes, max_content_bytes=settings.max_content_bytes
        )
    )


def decode(raw: dict[str, Any], path: Path | str = CONFIG_NAME) -> ConfigFile:
    """The parsed TOML of `path` as a ConfigFile, or InvalidInput naming `section.key`."""
    try:
        return msgspec.convert(raw, ConfigFile)
    except msgspec.ValidationError as exc:
        raise _refusal(exc, raw, path) from None


def _set_fields(section: msgspec.Struct) -> dict[str, Any]:
    return {
        name: value
        for name in section.__struct_fields__
        if (value := getattr(section, name)) is not UNSET
    }


def _opt(value: str | UnsetType) -> str | None:
    return None if value is UNSET else value


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise StoreError(f"{path}: {exc}") from None


def _refusal(exc: msgspec.ValidationError, raw: dict[str, Any], path: Path | str) -> InvalidInput:
    """msgspec's refusal, worded for the user: `section.key`, what it must be, what it is."""
    keys, unknown = where(exc)
    section = struct_of(field_type(ConfigFile, keys[0])) if keys else ConfigFile
    if unknown is not None:
        return _unknown_key(section, keys, unknown, path)
    item = re.fullmatch(r"(?P<key>.+)\[(?P<n>\d+)\]", keys[-1]) if keys else None
    if item is not None:  # one entry of an array setting: name the setting, show the entry
        keys[-1] = item.group("key")
    value: Any = raw
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    if item is not None and isinstance(value, list) and int(item.group("n")) < len(value):
        value = value[int(item.group("n"))]
    if len(keys) == 2:
        expect = expected(field_type(section, keys[1]))
    elif len(keys) == 1:
        expect = f"a table ([{keys[0]}])"
    else:  # not reached: tomllib gives a table, and no setting holds a table
        return InvalidInput(f"{exc} (in {path})", field=None)
    return InvalidInput(f"must be {expect}, not {show(value)} (in {path})", field=".".join(keys))


def _unknown_key(section: Any, keys: list[str], key: str, path: Path | str) -> InvalidInput:
    known = list(section.__struct_fields__)
    hint = difflib.get_close_matches(key, known, n=1)
    advice = f" (did you mean {hint[0]}?)" if hint else ""
    if section is ConfigFile:
        what = "a section of config.toml"
        homes = [s for s in known if key in struct_of(field_type(ConfigFile, s)).__struct_fields__]
        if homes:
            advice = f" (put it under [{homes[0]}])"
        listed = ", ".join(f"[{k}]" for k in known)
    else:
        what = f"a setting of [{keys[0]}]" if section.noun == "setting" else f"a {section.noun}"
        listed = ", ".join(known)
    return InvalidInput(
        f"is not {what}{advice}; known: {listed} (in {path})", field=".".join([*keys, key])
    )
