"""Where the data lives and what the user configured there.

`<data dir>/config.toml` is decoded into the Structs below, one per section, and refused with
one error naming `section.key` and the file when a section or key is unknown or a value has
the wrong type or is out of range. The environment settings (`MEMLS_*`, listed once in
`Environment`) go through the same typed path. The Structs' descriptions are the
documentation: schemas/config.json and README's settings table are generated from them
(`memls.schemas`; tests compare), so the docs cannot drift from the code.
"""

from memls.config.docs import Described, described
from memls.config.env import ENV_DATA_DIR, ENV_PREFIX, Environment, env_name, environment
from memls.config.file import (
    ENGINE_RETRIEVAL_KEYS,
    ConfigFile,
    Conflicts,
    Days,
    Folder,
    Index,
    Limits,
    Models,
    Notes,
    Privacy,
    Retrieval,
    TtlDays,
    sections,
)
from memls.config.paths import data_dir, ensure_private_dir, model_cache_dir
from memls.config.settings import CONFIG_NAME, Settings, apply_limits, decode, load_settings

__all__ = [
    "CONFIG_NAME",
    "ENGINE_RETRIEVAL_KEYS",
    "ENV_DATA_DIR",
    "ENV_PREFIX",
    "ConfigFile",
    "Conflicts",
    "Days",
    "Described",
    "Environment",
    "Folder",
    "Index",
    "Limits",
    "Models",
    "Privacy",
    "Notes",
    "Retrieval",
    "Settings",
    "TtlDays",
    "apply_limits",
    "data_dir",
    "decode",
    "described",
    "ensure_private_dir",
    "env_name",
    "environment",
    "load_settings",
    "model_cache_dir",
    "sections",
]
