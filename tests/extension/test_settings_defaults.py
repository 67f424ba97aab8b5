"""The VS Code extension's settings default to exactly what the server does without them.

Reads extension/package.json (the settings users see) and compares each default with the
server's own: re-ranking, the interactive depth and its range, Chroma, the data directory,
and the memory types the extension offers; and the buffers it relays cover every file the
server's table of the agents' conventions names (which of them are notes is the server's).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import msgspec.inspect

from memls import config, protocol
from memls.lsp.settings import read
from memls.notes import DEFAULT, match
from memls.retrieval.pipeline import RetrievalConfig

MANIFEST = Path(__file__).resolve().parents[2] / "extension" / "package.json"


def props() -> dict:
    return json.loads(MANIFEST.read_text())["contributes"]["configuration"]["properties"]


def _example(glob: str) -> str:
    """A path a convention's glob names (`**` one folder, `*` a name)."""
    return glob.replace("**", "a").replace("*", "x")


def test_the_relayed_buffers_cover_every_agents_file():
    buffers = json.loads(MANIFEST.read_text())["memls"]["noteBuffers"]
    # the owner says what a note is: of `memls.notes.*`, only whether agents' own memories
    # are read at all (the server's environment) is the editor's
    assert [k for k in props() if k.startswith("memls.notes.")] == ["memls.notes.agentMemories"]
    for convention in DEFAULT.conventions:
        for path in (_example(convention.path), "pkg/" + _example(convention.path)):
            if DEFAULT.match(path) is None:
                continue  # a root-only convention below the root: no note
            assert any(match(path, b) for b in buffers), path


def test_the_servers_settings_reader_takes_the_extensions_whole_section():
    """VS Code sends every memls.* setting (initializationOptions, the `memls` section): the
    server reads what it knows and ignores what only the extension uses (an old `notes`
    section too)."""
    section = {
        "server": {"command": []},
        "notes": {"globs": ["NOTES.md"], "instructions": ["NOTES.md"], "records": []},
        "rerank": False,
        "chromaUrl": "",
        "dataDir": "",
        "interactiveDepth": 6,
    }
    assert read(section, "initializationOptions").token is None


def test_agent_memories_are_read_as_on_the_server(tmp_path, monkeypatch):
    """`memls.notes.agentMemories` and config.toml's `[notes] agent_memories` start on; off,
    the extension starts the server with `MEMLS_AGENT_MEMORIES=0`, which the server reads as
    off whatever config.toml says."""
    monkeypatch.delenv("MEMLS_AGENT_MEMORIES", raising=False)
    settings = config.load_settings(tmp_path)
    default = props()["memls.notes.agentMemories"]["default"]
    assert default is settings.agent_memories is config.Notes().agent_memories is True
    off = config.load_settings(tmp_path, {"MEMLS_AGENT_MEMORIES": "0"})
    assert off.agent_memories is False


def test_rerank_is_on_as_on_the_server(tmp_path):
    settings = config.load_settings(tmp_path)  # no config.toml: the server's defaults
    assert props()["memls.rerank"]["default"] is settings.rerank is RetrievalConfig().rerank is True


def test_interactive_depth_and_its_range_are_the_servers():
    p = props()["memls.interactiveDepth"]
    info = msgspec.inspect.type_info(config.Retrieval)
    field = next(f for f in info.fields if f.name == "interactive_depth")
    meta = field.type  # Annotated[int, Meta(...)] | UNSET: the metadata around an IntType
    assert isinstance(meta, msgspec.inspect.Metadata)
    assert isinstance(meta.type, msgspec.inspect.IntType)
    assert p["default"] == RetrievalConfig().interactive_depth == meta.extra_json_schema["default"]
    assert (p["minimum"], p["maximum"]) == (meta.type.ge, meta.type.le)


def test_empty_chroma_url_and_data_dir_mean_the_servers_own(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMLS_CHROMA_URL", raising=False)
    monkeypatch.delenv(config.ENV_DATA_DIR, raising=False)
    assert props()["memls.chromaUrl"]["default"] == ""
    assert config.load_settings(tmp_path).chroma_url is None
    # "" is not passed on: the server then picks $MEMLS_DATA_DIR, else the user's data dir
    assert props()["memls.dataDir"]["default"] == ""
    assert config.data_dir(None) == config.data_dir(props()["memls.dataDir"]["default"] or None)


def test_server_command_defaults_to_discovery():
    assert props()["memls.server.command"]["default"] == []


def test_the_remember_tool_offers_only_the_servers_types():
    tools = json.loads(MANIFEST.read_text())["contributes"]["languageModelTools"]
    remember = next(t for t in tools if t["name"] == "memls_remember")
    offered = remember["inputSchema"]["properties"]["type"]["enum"]
    assert set(offered) <= set(protocol.MEMORY_TYPES)
