"""The memories agents keep by themselves, outside the project's folder, read as notes: which
lines of each file are memory, and of which type. Pure: text in, text out (where the files
are is `memls.notes.agent_places`).

- Claude Code's auto memory (`claude-memory`): one file a fact, with YAML front matter `name`,
  `description`, `metadata.type` (user | feedback | project | reference; the binary adds
  `metadata.node_type` and `metadata.originSessionId`). The front matter is never memory text;
  its type gives the units' type (`CLAUDE_TYPES`). `MEMORY.md` is the index Claude Code loads
  into every session: each pointer line (`- [Title](file.md) — hook`) stands for its file,
  which is read itself, so the line is not stored a second time; any other line is memory.
- Codex memories (`codex-memories`): `MEMORY.md` and `memory_summary.md`, which Codex's own
  consolidation writes: only what sits under the headings that hold what it learned
  (`CODEX_SECTIONS`: the user's preferences and profile, reusable knowledge, failures, general
  tips); task lists, rollout files, keywords and the index of topics are routing, not memory.
  An ad-hoc note (`extensions/ad_hoc/notes/*.md`, what the user asked Codex to remember) is
  read whole.
- Gemini CLI memory (`gemini-memory`): its global memory file (`~/.gemini/GEMINI.md`, which
  the model edits itself; older versions appended `save_memory` lines under
  `## Gemini Added Memories`), read whole.

`readable` blanks what is not memory, line for line, so the parser's ranges are the file's.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from memls.notes.scan import split_lines
from memls.protocol import ORIGIN_NAMES, MemoryType

INDEX = "MEMORY.md"
#: Claude Code's memory types -> memls's: who the user is and what they like; guidance on
#: how to work (corrections, confirmed approaches); the project's ongoing work, goals and
#: constraints; pointers to outside resources.
CLAUDE_TYPES: dict[str, MemoryType] = {
    "user": "preference",
    "feedback": "convention",
    "project": "fact",
    "reference": "note",
}
#: The type of a unit no heading or text rule types (`memls.notes.infer_type`), by origin.
DEFAULT_TYPES: dict[str, MemoryType] = {
    "claude-memory": "note",
    "codex-memories": "fact",
    "gemini-memory": "preference",  # cross-project personal preferences and facts
}
#: The `##` sections of Codex's MEMORY.md and memory_summary.md that hold memory (lower case).
CODEX_SECTIONS = frozenset(
    {
        "user preferences",
        "user profile",
        "reusable knowledge",
        "failures and how to do differently",
        "general tips",
    }
)
CODEX_FILES = frozenset({INDEX, "memory_summary.md"})

_POINTER = re.compile(r"^[ \t]*[-*+][ \t]+\[[^\]]*\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:)[^)\s]+\.md\)")
_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")


def origin_name(origin: str | None) -> str:
    """How an origin is named to people and models ("" for a note of the project)."""
    return ORIGIN_NAMES.get(origin or "", "")


def front_matter(text: str) -> tuple[dict[str, Any], int]:
    """(the YAML front matter as a mapping, the number of lines it takes); ({}, 0) when the
    text has none, and ({}, its lines) when it is not a mapping of valid YAML."""
    lines = split_lines(text)
    if not lines or lines[0].lstrip("\ufeff").strip() != "---":
        return {}, 0
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            try:
                found = yaml.safe_load("\n".join(lines[1:end]))
            except yaml.YAMLError:
                return {}, end + 1
            return (found if isinstance(found, dict) else {}), end + 1
    return {}, 0


def memory_type(text: str, origin: str, name: str) -> MemoryType:
    """The type a file's units default to: a Claude Code topic file's `metadata.type` (or a
    top-level `type`, which Claude Code reads as metadata too) mapped by `CLAUDE_TYPES`,
    else the origin's default."""
    if origin == "claude-memory" and name != INDEX:
        facts, _ = front_matter(text)
        metadata = facts.get("metadata")
        declared = metadata.get("type") if isinstance(metadata, dict) else None
        declared = declared if declared is not None else facts.get("type")
        if isinstance(declared, str) and declared.strip().lower() in CLAUDE_TYPES:
            return CLAUDE_TYPES[declared.strip().lower()]
    return DEFAULT_TYPES.get(origin, "note")


def readable(text: str, origin: str, name: str) -> str:
    """The file's text with every line that is not memory blank (the same lines, so ranges
    stay the file's): front matter, `MEMORY.md` pointers, Codex's routing sections."""
    lines = split_lines(text)
    if origin == "claude-memory":
        _, skip = front_matter(text)
        keep = [i >= skip for i in range(len(lines))]
        if name == INDEX:
            keep = [k and not _POINTER.match(line) for k, line in zip(keep, lines, strict=True)]
    elif origin == "codex-memories" and name in CODEX_FILES:
        keep = _codex_memory(lines)
    else:
        keep = [True] * len(lines)
    return "\n".join(line if k else "" for line, k in zip(lines, keep, strict=True))


def _codex_memory(lines: list[str]) -> list[bool]:
    """Which lines of Codex's MEMORY.md / memory_summary.md sit in a `CODEX_SECTIONS` section
    (the heading included: it types the units); a `#` heading ends the section."""
    keep: list[bool] = []
    inside = False
    fence = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        heading = None if fence else _HEADING.match(line)
        if heading is not None and len(heading.group(1)) <= 2:
            inside = len(heading.group(1)) == 2 and _section(heading.group(2)) in CODEX_SECTIONS
        keep.append(inside)
    return keep


def _section(title: str) -> str:
    return " ".join(title.strip().strip("*_").lower().split())


# ---------------------------------------------------------------- writing one (promote)

#: memls's types -> Claude Code's, for a memory promoted into its auto memory (`memls promote
#: --to claude-memory`): the inverse of `CLAUDE_TYPES`, rules and lessons as feedback.
TO_CLAUDE: dict[str, str] = {
    "preference": "user",
    "convention": "feedback",
    "constraint": "feedback",
    "lesson": "feedback",
    "decision": "project",
    "fact": "project",
    "note": "reference",
}
_WORD = re.compile(r"[A-Za-z0-9]+")


def claude_topic(content: str, memory_type: str) -> tuple[str, str]:
    """(its name, the topic file's text) for a memory written into Claude Code's auto memory
    as Claude Code writes one: front matter `name` (a kebab-case slug), `description` (the
    fact's first line, cut at a word), `metadata.type`; then the fact."""
    name = "-".join(w.lower() for w in _WORD.findall(content)[:6]) or "memory"
    meta = {
        "name": name,
        "description": _cut(content.strip().splitlines()[0] if content.strip() else name),
        "metadata": {"type": TO_CLAUDE.get(memory_type, "reference")},
    }
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return name, f"---\n{front}---\n\n{content.strip()}\n"


def claude_index(index: str | None, file_name: str, title: str, hook: str) -> str:
    """MEMORY.md with a pointer to `file_name` (`- [Title](file.md) — hook`), added at its end
    unless one points there already."""
    text = index or ""
    for line in split_lines(text):
        found = _POINTER.match(line)
        if found and f"]({file_name})" in found.group(0):
            return text
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}- [{title}]({file_name}) — {_cut(hook)}\n"


def _cut(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + "…"
