"""Where agents keep their own memories, outside the project's folder, found as each agent
finds them (read from the binaries: Claude Code 2.1.197, Codex CLI 0.169.0, Gemini CLI
0.61.0); which files of each folder are memory, the table of the agents' conventions says
(its rows anchored at that agent's folder, `memls.notes.conventions`). The only I/O is
reading the agents' settings and a project's `.git`; nothing is written.

- Claude Code's auto memory of a project: `autoMemoryDirectory` from the project's
  `.claude/settings.local.json`, else its `.claude/settings.json`, else the user's
  `~/.claude/settings.json` (`~/` is the home folder; a path that is not absolute is
  ignored, as Claude Code ignores it); else `<config dir>/projects/<slug>/memory/`, where the
  config dir is `$CLAUDE_CONFIG_DIR` or `~/.claude`, and the slug is the project's git root
  (the main checkout's, for a worktree; the folder itself outside git) with every character
  that is not an ASCII letter or digit replaced by `-` (past 200 characters: cut, and a hash
  of the path added). Its files: `*.md` there and in `team/`.
- Codex's memories, when its memories feature is on (`[features] memories = true` in
  `$CODEX_HOME/config.toml`, default `~/.codex`, and `[memories] use_memories` not false):
  `$CODEX_HOME/memories/` `MEMORY.md`, `memory_summary.md` and the ad-hoc notes in
  `extensions/ad_hoc/notes/`.
- Gemini CLI's global memory: `~/.gemini/GEMINI.md` (`$GEMINI_CLI_HOME` for the home; the
  file name from `context.fileName` in `~/.gemini/settings.json`, its first when a list).
"""

from __future__ import annotations

import json
import os
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memls.notes.conventions import DEFAULT
from memls.notes.globs import matches
from memls.protocol import AgentOrigin

SLUG_MAX = 200  # Claude Code's cut of a long project slug


@dataclass(frozen=True)
class Place:
    """One agent's memory folder and which of its files are memory (globs relative to it)."""

    origin: AgentOrigin
    folder: Path
    patterns: tuple[str, ...]

    def holds(self, path: Path) -> bool:
        """Is `path` one of this place's memory files (by name; it may not exist)?"""
        try:
            relative = path.relative_to(self.folder).as_posix()
        except ValueError:
            return False
        return matches(relative, self.patterns)

    def files(self) -> list[Path]:
        """The memory files there now, in name order (regular files, links included: the
        reader refuses a link that leads out of the folder)."""
        found: set[Path] = set()
        for folder in self.subfolders():
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                path = folder / entry.name
                if self.holds(path) and not entry.is_dir():
                    found.add(path)
        return sorted(found)

    def subfolders(self) -> list[Path]:
        """The folders its globs name (the folder itself, `team/`, ...), existing or not."""
        out = []
        for pattern in self.patterns:
            parent = Path(pattern).parent
            out.append(self.folder if parent == Path(".") else self.folder / parent)
        return list(dict.fromkeys(out))

    def watch(self) -> set[Path]:
        """What to watch (not recursively) to see every change to its files, and the
        creation of a folder that is not there yet: each subfolder, else the nearest existing
        folder above it."""
        out: set[Path] = set()
        for folder in self.subfolders():
            while not folder.is_dir() and folder.parent != folder:
                folder = folder.parent
            out.add(folder)
        return out


# ---------------------------------------------------------------- Claude Code


def claude_slug(path: str) -> str:
    """Claude Code's name for a project's folder under `~/.claude/projects/`: every UTF-16
    unit that is not an ASCII letter or digit becomes `-`; a name longer than 200 is cut and
    followed by `-` and the path's string hash in base 36."""
    units = "".join(
        c if c.isascii() and c.isalnum() else ("--" if ord(c) > 0xFFFF else "-") for c in path
    )
    if len(units) <= SLUG_MAX:
        return units
    return f"{units[:SLUG_MAX]}-{_base36(abs(_string_hash(path)))}"


def _string_hash(text: str) -> int:
    """`h = 31 * h + unit`, over UTF-16 code units, as a signed 32-bit integer."""
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def git_root(folder: Path) -> Path | None:
    """The folder holding the nearest `.git` (a folder or a file) at or above `folder`; for a
    linked worktree, the main checkout's folder (Claude Code keeps one memory for all the
    worktrees of a repository). None outside git."""
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir() or dot_git.is_file():
            return _main_checkout(candidate)
    return None


def _main_checkout(root: Path) -> Path:
    try:
        pointer = (root / ".git").read_text(encoding="utf-8").strip()
    except (IsADirectoryError, OSError, UnicodeDecodeError):
        return root
    if not pointer.startswith("gitdir:"):
        return root
    try:
        gitdir = (root / pointer[7:].strip()).resolve()
        common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        if gitdir.parent != common / "worktrees":
            return root
        back = Path((gitdir / "gitdir").read_text(encoding="utf-8").strip()).resolve()
        if back != (root / ".git").resolve():
            return root
    except (OSError, UnicodeDecodeError):
        return root
    return common if common.name != ".git" else common.parent


def _json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _expand(raw: object, home: Path, *, tilde: bool) -> Path | None:
    """`autoMemoryDirectory` as Claude Code takes it: `~/` is the home folder, the result
    must be absolute, with no NUL; None when it is not usable."""
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        return None
    text = raw
    if tilde and text.startswith("~/"):
        rest = os.path.normpath(text[2:] or ".")
        if rest in (".", "..") or rest.startswith("../"):
            return None
        text = str(home / rest)
    text = os.path.normpath(text).rstrip("/")
    if not os.path.isabs(text) or len(text) < 3 or text.startswith("//"):
        return None
    return Path(unicodedata.normalize("NFC", text))


def claude_config_dir(home: Path, environ: Mapping[str, str]) -> Path:
    return Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")


def claude_memory(project: Path, home: Path, environ: Mapping[str, str]) -> Place:
    """Claude Code's auto memory folder of `project` (see the module doc)."""
    config = claude_config_dir(home, environ)
    chosen = _expand(environ.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"), home, tilde=False)
    for settings in (
        project / ".claude" / "settings.local.json",
        project / ".claude" / "settings.json",
        config / "settings.json",
    ):
        if chosen is not None:
            break
        chosen = _expand(_json(settings).get("autoMemoryDirectory"), home, tilde=True)
    if chosen is None:
        base = Path(environ.get("CLAUDE_CODE_REMOTE_MEMORY_DIR") or config) / "projects"
        root = git_root(project) or project
        chosen = base / claude_slug(unicodedata.normalize("NFC", str(root))) / "memory"
    return Place("claude-memory", chosen, DEFAULT.anchored("claude-memory"))


# ---------------------------------------------------------------- user-wide


def codex_memories(home: Path, environ: Mapping[str, str]) -> Place | None:
    """Codex's memories folder, when its memories feature is on (else None)."""
    codex_home = Path(environ.get("CODEX_HOME") or home / ".codex")
    try:
        config = tomllib.loads((codex_home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    features, memories = config.get("features"), config.get("memories")
    on = isinstance(features, dict) and features.get("memories") is True
    if isinstance(memories, dict) and memories.get("use_memories") is False:
        on = False
    if not on:
        return None
    return Place("codex-memories", codex_home / "memories", DEFAULT.anchored("codex-memories"))


def gemini_memory(home: Path, environ: Mapping[str, str]) -> Place:
    """Gemini CLI's global memory file (its folder, and the file's name)."""
    folder = Path(environ.get("GEMINI_CLI_HOME") or home) / ".gemini"
    context = _json(folder / "settings.json").get("context")
    name = context.get("fileName") if isinstance(context, dict) else None
    if isinstance(name, list):
        name = next((n for n in name if isinstance(n, str) and n.strip()), None)
    if not isinstance(name, str) or not name.strip() or "/" in name:
        (name,) = DEFAULT.anchored("gemini-memory")
    return Place("gemini-memory", folder, (name.strip(),))


def user_places(home: Path, environ: Mapping[str, str]) -> list[Place]:
    """The user-wide memories (project `@user`): Codex's when its feature is on, Gemini's."""
    codex = codex_memories(home, environ)
    return [*([codex] if codex is not None else []), gemini_memory(home, environ)]
