"""config.toml and the MEMLS_* environment, read strictly: tables of good and bad cases, the
JSON Schema agreeing with the decoder, and the real CLI turning a bad file into one line."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import msgspec
import pytest

from memls import config, protocol, schemas
from memls.config import Settings, load_settings
from memls.errors import InvalidInput, StoreError
from memls.retrieval.pipeline import RetrievalConfig

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = dataclasses.asdict(Settings())


def settings_of(tmp_path: Path, text: str | None, env: dict[str, str] | None = None) -> Settings:
    if text is not None:
        (tmp_path / "config.toml").write_text(text, encoding="utf-8")
    return load_settings(tmp_path, env or {})


GOOD = [
    pytest.param(None, {}, {}, id="no file: the defaults"),
    pytest.param("", {}, {}, id="empty file"),
    pytest.param("[index]\n[models]\n", {}, {}, id="empty sections"),
    pytest.param("[index]\nvectors = false\n", {}, {"vectors": False}, id="vectors off"),
    pytest.param(
        "[ttl_days]\nnote = 90\nfact = 0.5\n",
        {},
        {"ttl_days": {"note": 90.0, "fact": 0.5}},
        id="ttl per type, whole or not",
    ),
    pytest.param(
        "[ttl_days]\nnote = inf\n", {}, {"ttl_days": {"note": float("inf")}}, id="ttl inf"
    ),
    pytest.param(
        '[index]\nchroma_url = "http://127.0.0.1:8000"\n',
        {},
        {"chroma_url": "http://127.0.0.1:8000"},
        id="chroma url",
    ),
    pytest.param(
        '[index]\nchroma_url = "http://file:1"\n',
        {"MEMLS_CHROMA_URL": "https://env"},
        {"chroma_url": "https://env"},
        id="MEMLS_CHROMA_URL wins over the file",
    ),
    pytest.param(None, {"MEMLS_CHROMA_URL": "  "}, {}, id="an empty variable is unset"),
    pytest.param(
        '[models]\nembedder_dir = "/e"\nreranker_dir = "/r"\n',
        {},
        {"embedder_dir": "/e", "reranker_dir": "/r"},
        id="model folders",
    ),
    pytest.param(
        "[models]\nrerank = false\n",
        {},
        {"rerank": False, "rerank_off_by": "[models] rerank = false"},
        id="rerank off by the file",
    ),
    pytest.param(
        None,
        {"MEMLS_RERANK": "0"},
        {"rerank": False, "rerank_off_by": "MEMLS_RERANK=0"},
        id="MEMLS_RERANK=0",
    ),
    pytest.param(
        None,
        {"MEMLS_RERANK": " Off "},
        {"rerank": False, "rerank_off_by": "MEMLS_RERANK=Off"},
        id="MEMLS_RERANK=Off",
    ),
    pytest.param(None, {"MEMLS_RERANK": "yes"}, {}, id="MEMLS_RERANK=yes: on"),
    pytest.param(
        "[models]\nrerank = false\n",
        {"MEMLS_RERANK": "1"},
        {"rerank": False, "rerank_off_by": "[models] rerank = false"},
        id="MEMLS_RERANK=1 does not override the file's false",
    ),
    pytest.param(
        "[models]\nrerank = true\n",
        {"MEMLS_RERANK": "false"},
        {"rerank": False, "rerank_off_by": "MEMLS_RERANK=false"},
        id="MEMLS_RERANK=false overrides the file's true",
    ),
    pytest.param(
        "[conflicts]\nauto_supersede = true\n", {}, {"auto_supersede": True}, id="auto supersede"
    ),
    pytest.param(
        "[retrieval]\nrerank_depth = 200\nrerank_relative = 1\n",
        {},
        {"retrieval": {"rerank_depth": 200, "rerank_relative": 1.0}},
        id="retrieval: only the keys set, at the bounds, int read as float",
    ),
    pytest.param(
        "[retrieval]\ninteractive_depth = 1\nrerank_relative = 0.0\n",
        {},
        {"retrieval": {"interactive_depth": 1, "rerank_relative": 0.0}},
        id="retrieval: lower bounds",
    ),
    pytest.param(
        None,
        {"MEMLS_E2E_ANYTHING": "x", "MEMLS_TOKEN": "t"},
        {},
        id="other MEMLS_ variables are not ours",
    ),
]


@pytest.mark.parametrize("text, env, changed", GOOD)
def test_good_settings(tmp_path, text, env, changed):
    got = dataclasses.asdict(settings_of(tmp_path, text, env))
    assert got == {**DEFAULTS, **changed}
    assert type(got["rerank"]) is bool and type(got["vectors"]) is bool


BAD = [
    pytest.param(
        '[index]\nvectors = "false"\n',
        "index.vectors",
        'must be a boolean (true or false), not "false"',
        id="quoted boolean",
    ),
    pytest.param(
        "[index]\nvectors = 0\n",
        "index.vectors",
        "must be a boolean (true or false), not 0",
        id="number for a boolean",
    ),
    pytest.param(
        "index = 1\n",
        "index",
        "must be a table ([index]), not 1",
        id="a section that is not a table",
    ),
    pytest.param(
        "[indx]\nvectors = false\n",
        "indx",
        "is not a section of config.toml (did you mean index?)",
        id="misspelt section",
    ),
    pytest.param(
        "vectors = false\n", "vectors", "put it under [index]", id="a key outside its section"
    ),
    pytest.param(
        "[index]\nvector = false\n",
        "index.vector",
        "is not a setting of [index] (did you mean vectors?); known: vectors, chroma_url",
        id="misspelt key",
    ),
    pytest.param(
        "[ttl_days]\nnotes = 30\n",
        "ttl_days.notes",
        "is not a memory type (did you mean note?)",
        id="ttl of an unknown type",
    ),
    pytest.param(
        "[ttl_days]\nnote = 0\n",
        "ttl_days.note",
        "must be a number greater than 0, not 0",
        id="ttl zero",
    ),
    pytest.param(
        "[ttl_days]\nnote = -3\n",
        "ttl_days.note",
        "must be a number greater than 0, not -3",
        id="ttl negative",
    ),
    pytest.param("[ttl_days]\nnote = nan\n", "ttl_days.note", "not nan", id="ttl nan"),
    pytest.param('[ttl_days]\nnote = "90"\n', "ttl_days.note", 'not "90"', id="ttl string"),
    pytest.param(
        "[ttl_days]\nnote = 2025-01-01\n", "ttl_days.note", "not 2025-01-01", id="ttl date"
    ),
    pytest.param(
        "ttl_days = [1]\n", "ttl_days", "must be a table ([ttl_days]), not an array", id="ttl array"
    ),
    pytest.param(
        '[index]\nchroma_url = "localhost:8000"\n',
        "index.chroma_url",
        'must be an http(s) URL, not "localhost:8000"',
        id="url without scheme",
    ),
    pytest.param('[index]\nchroma_url = ""\n', "index.chroma_url", "http(s) URL", id="empty url"),
    pytest.param(
        '[models]\nembedder_dir = ""\n',
        "models.embedder_dir",
        'must be a non-empty string, not ""',
        id="empty folder",
    ),
    pytest.param(
        "[models]\nreranker_dir = 3\n", "models.reranker_dir", "not 3", id="number for a folder"
    ),
    pytest.param(
        '[models]\nrerank = "no"\n', "models.rerank", 'not "no"', id="a word for a boolean"
    ),
    pytest.param(
        "[models]\n[models.rerank]\n", "models.rerank", "not a table", id="table for a boolean"
    ),
    pytest.param(
        '[conflicts]\nauto_supersede = "true"\n',
        "conflicts.auto_supersede",
        'must be a boolean (true or false), not "true"',
        id="quoted true",
    ),
    pytest.param(
        "[retrieval]\nrerank_depth = 0\n",
        "retrieval.rerank_depth",
        "must be an integer from 1 to 200, not 0",
        id="depth below",
    ),
    pytest.param(
        "[retrieval]\nrerank_depth = 201\n",
        "retrieval.rerank_depth",
        "must be an integer from 1 to 200, not 201",
        id="depth above",
    ),
    pytest.param(
        "[retrieval]\nrerank_depth = 2.5\n",
        "retrieval.rerank_depth",
        "not 2.5",
        id="depth fraction",
    ),
    pytest.param(
        "[retrieval]\nrerank_depth = true\n",
        "retrieval.rerank_depth",
        "not true",
        id="depth boolean",
    ),
    pytest.param(
        "[retrieval]\nrerank_relative = 1.5\n",
        "retrieval.rerank_relative",
        "must be a number from 0 to 1, not 1.5",
        id="relative above",
    ),
    pytest.param(
        '[retrieval]\ninteractive_depth = "six"\n',
        "retrieval.interactive_depth",
        'not "six"',
        id="depth string",
    ),
    pytest.param(
        "[retrieval]\nlift = 3\n",
        "retrieval.lift",
        "is not a setting of [retrieval]",
        id="retrieval key not a setting",
    ),
]


@pytest.mark.parametrize("text, field, words", BAD)
def test_bad_config_is_refused_naming_section_key_and_file(tmp_path, text, field, words):
    with pytest.raises(InvalidInput) as caught:
        settings_of(tmp_path, text)
    error = caught.value
    assert error.field == field
    assert words in error.message
    assert error.message.endswith(f"(in {tmp_path / 'config.toml'})")
    assert "\n" not in str(error)


BAD_ENV = [
    pytest.param(
        "MEMLS_RERANK",
        "maybe",
        'must be a boolean (1, true, yes, on or 0, false, no, off), not "maybe"',
        id="rerank maybe",
    ),
    pytest.param("MEMLS_RERANK", "2", 'not "2"', id="rerank 2"),
    pytest.param(
        "MEMLS_CHROMA_URL",
        "127.0.0.1:8000",
        'must be an http(s) URL, not "127.0.0.1:8000"',
        id="url without scheme",
    ),
]


@pytest.mark.parametrize("name, value, words", BAD_ENV)
def test_bad_environment_is_refused_naming_the_variable(tmp_path, name, value, words):
    with pytest.raises(InvalidInput) as caught:
        settings_of(tmp_path, "[index]\nvectors = false\n", {name: value})
    assert caught.value.field == name
    assert words in caught.value.message and "environment variable" in caught.value.message


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"[index\n", id="toml syntax"),
        pytest.param(b"[index]\nvectors = true\nvectors = false\n", id="a key twice"),
        pytest.param(b'[models]\nembedder_dir = "\xff"\n', id="not utf-8"),
    ],
)
def test_an_unreadable_file_is_a_store_error_naming_it(tmp_path, content):
    (tmp_path / "config.toml").write_bytes(content)
    with pytest.raises(StoreError, match="config.toml"):
        load_settings(tmp_path, {})


def test_ttl_days_keys_are_the_memory_types():
    assert tuple(config.TtlDays.__struct_fields__) == protocol.MEMORY_TYPES


def test_retrieval_settings_document_the_pipelines_defaults():
    fields = config.described(config.Retrieval)
    assert fields, "no [retrieval] settings"
    for row in fields:
        if row.key in config.ENGINE_RETRIEVAL_KEYS:  # the engine's query cache, not the pipeline
            continue
        assert row.default == getattr(RetrievalConfig(), row.key), row.key
    assert RetrievalConfig(**load_settings(Path("/nonexistent"), {}).retrieval) == RetrievalConfig()


def test_every_setting_is_described():
    for struct in [*config.sections().values(), config.Environment]:
        assert struct.__doc__
        for row in config.described(struct):
            assert row.description and row.expect, f"{struct.__name__}.{row.key}"
            assert (
                row.default is not msgspec.UNSET
                or row.unset
                or struct in (config.Retrieval, config.Environment)
            ), f"{struct.__name__}.{row.key}"


def test_the_environment_struct_lists_every_memls_variable_the_code_reads():
    """One place lists them: any MEMLS_X the server code names is a field of Environment."""
    import re

    named = set()
    for path in (ROOT / "server" / "memls").rglob("*.py"):
        named |= set(re.findall(r"MEMLS_[A-Z0-9_]+", path.read_text(encoding="utf-8")))
    listed = {config.env_name(name) for name in config.Environment.__struct_fields__}
    assert named - {config.ENV_PREFIX} <= listed, named - listed


def _schema_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / "schemas" / "config.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _json_able(text: str) -> bool:
    try:
        json.dumps(tomllib.loads(text), allow_nan=False)
    except (TypeError, ValueError):  # a date, nan: TOML has them, JSON does not
        return False
    return True


SCHEMA_CASES = [p for p in GOOD + BAD if p.values[0] and _json_able(p.values[0])]


@pytest.mark.parametrize(
    "text", [p.values[0] for p in SCHEMA_CASES], ids=[p.id for p in SCHEMA_CASES]
)
def test_the_json_schema_agrees_with_the_decoder(text):
    """Editors checking config.toml against schemas/config.json see what memls will say."""
    raw = tomllib.loads(text)
    try:
        config.decode(raw)
        accepted = True
    except InvalidInput:
        accepted = False
    assert _schema_validator().is_valid(raw) == accepted


def test_readme_settings_table_is_generated_from_the_structs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert schemas.settings_table() in readme, "run: python -m memls.schemas README.md"


def test_readme_example_config_is_valid_and_shows_every_section():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    settings = readme[readme.index("### Settings") :]
    example = settings[settings.index("```toml\n") + 8 : settings.index("```\n", 8)]
    raw = tomllib.loads(example)
    decoded = config.decode(raw)
    assert set(raw) == set(config.sections())
    for section, struct in config.sections().items():
        if section != "ttl_days":  # one type stands for all
            assert set(raw[section]) == set(struct.__struct_fields__), section
    assert decoded.index.vectors is True


# ---------------------------------------------------------------- the real CLI


def memls(data: Path, *args: str, env: dict[str, str] | None = None):
    exe = Path(sys.executable).with_name("memls")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMLS_")}
    environ.update({"MEMLS_DATA_DIR": str(data), **(env or {})})
    return subprocess.run(
        [str(exe), *args], check=False, capture_output=True, text=True, timeout=120, env=environ
    )


@pytest.mark.parametrize(
    "text, env, code, words",
    [
        pytest.param(
            '[index]\nvectors = "false"\n',
            {},
            2,
            'index.vectors: must be a boolean (true or false), not "false"',
            id="wrong type",
        ),
        pytest.param(
            "index = 1\n",
            {},
            2,
            "index: must be a table ([index]), not 1",
            id="section not a table (was an AttributeError)",
        ),
        pytest.param(
            "[index]\nvectors = false\n[models]\nrerank_dir = 1\n",
            {},
            2,
            "models.rerank_dir: is not a setting of [models]",
            id="misspelt key",
        ),
        pytest.param(
            "[index]\nvectors = false\n",
            {"MEMLS_RERANK": "maybe"},
            2,
            "MEMLS_RERANK: must be a boolean",
            id="bad environment",
        ),
        pytest.param("[index\n", {}, 1, "config.toml", id="not TOML"),
    ],
)
def test_the_cli_reports_a_bad_config_in_one_line(tmp_path, text, env, code, words):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text(text)
    out = memls(data, "stats", "--project", "p", env=env)
    assert out.returncode == code, out.stderr
    assert out.stdout == ""
    assert out.stderr.startswith("memls: error: ") and out.stderr.count("\n") == 1, out.stderr
    assert words in out.stderr and "Traceback" not in out.stderr
    if code == 2:
        assert str(data / "config.toml") in out.stderr or "environment" in out.stderr
    # nothing was opened or written: the lock taken to read the settings, nothing else
    assert sorted(p.name for p in data.iterdir()) == ["config.toml", "owner.lock"]


def test_the_cli_works_once_the_config_is_fixed(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text('[index]\nvectors = "false"\n')
    assert memls(data, "stats", "--project", "p").returncode == 2
    (data / "config.toml").write_text("[index]\nvectors = false\n")
    out = memls(data, "stats", "--project", "p", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["project"] == "p"


def test_the_model_cache_folder_follows_the_environment(tmp_path):
    from memls.config import model_cache_dir

    assert model_cache_dir({"MEMLS_MODEL_CACHE": str(tmp_path)}) == tmp_path / "onnx"
    assert model_cache_dir({"MEMLS_MODEL_CACHE": "off"}) is None
    assert model_cache_dir({}).name == "onnx"  # the user's cache directory
