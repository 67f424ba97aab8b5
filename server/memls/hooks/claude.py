"""memls's entries in Claude Code's settings files: merge them in, take them out, find them.

Claude Code reads hooks from `~/.claude/settings.json`, `.claude/settings.json` and
`.claude/settings.local.json` (the project's own, not committed), shaped

    {"hooks": {"SessionStart": [{"matcher": "...", "hooks": [{"type": "command",
               "command": "...", "timeout": 10}]}], "UserPromptSubmit": [...]}}

`install` adds one matcher group per event holding memls's command, keeping every other key,
group and hook as it was; installing again changes nothing (the file is not even rewritten);
an older memls entry (another path or budget) is replaced in place. `uninstall` removes exactly
the entries whose command runs memls's hook client, and the groups and event lists that held only
them. Pure functions on the parsed JSON, plus the file I/O around them."""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memls.files import replace_text

COMMAND_NAME = "memls-hook"
EVENTS = ("SessionStart", "UserPromptSubmit")
MATCHERS = {"SessionStart": "startup|resume|clear|compact"}  # UserPromptSubmit has none
TIMEOUT_S = 30  # Claude Code's limit for the command; a warm hook answers in tens of ms, one
# that starts the daemon waits for it at most 20 s (memls.hooks.client.START_WAIT)
LOCAL = Path(".claude") / "settings.local.json"
SHARED = Path(".claude") / "settings.json"


class SettingsError(ValueError):
    """A settings file that cannot be read as a JSON object (nothing is changed)."""


SCRIPT = "memls/hooks/client.py"


def command(prefix: list[str], project: str, data_dir: str, budget: int, prompt_budget: int) -> str:
    """The hook's command line: `prefix` runs the client (`python -S .../client.py`)."""
    return " ".join(
        shlex.quote(part)
        for part in (
            *prefix,
            "--project",
            project,
            "--data-dir",
            data_dir,
            "--budget",
            str(budget),
            "--prompt-budget",
            str(prompt_budget),
        )
    )


def is_ours(hook: Any) -> bool:
    """A hook entry that runs memls's hook client (whatever its path or flags): the
    `memls-hook` command or `python -S .../memls/hooks/client.py`."""
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    try:
        words = shlex.split(str(hook.get("command", "")))[:3]
    except ValueError:
        return False
    return any(Path(w).name == COMMAND_NAME or w.endswith(SCRIPT) for w in words)


def _entry(cmd: str) -> dict[str, Any]:
    return {"type": "command", "command": cmd, "timeout": TIMEOUT_S}


def merged(settings: dict[str, Any], cmd: str) -> dict[str, Any]:
    """`settings` with memls's hook on each event (a new dict; the input is not changed)."""
    out = json.loads(json.dumps(settings))
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError("`hooks` is not an object")
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise SettingsError(f"`hooks.{event}` is not a list")
        placed = False
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                continue
            for i, hook in enumerate(entries):
                if is_ours(hook):
                    if not placed:
                        entries[i] = {**hook, **_entry(cmd)}
                        placed = True
        if not placed:
            group = {"hooks": [_entry(cmd)]}
            if event in MATCHERS:
                group = {"matcher": MATCHERS[event], **group}
            groups.append(group)
    return out


def removed(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` without memls's hook entries (and the containers only they filled)."""
    out = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(entries, list) and any(is_ours(h) for h in entries):
                rest = [h for h in entries if not is_ours(h)]
                if not rest:
                    continue
                group = {**group, "hooks": rest}
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def found(settings: dict[str, Any]) -> dict[str, list[str]]:
    """event -> the memls commands installed on it."""
    out: dict[str, list[str]] = {}
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            entries = group.get("hooks") if isinstance(group, dict) else None
            for hook in entries if isinstance(entries, list) else []:
                if is_ours(hook):
                    out.setdefault(event, []).append(str(hook["command"]))
    return out


# ---------------------------------------------------------------- files


def read(path: Path) -> dict[str, Any] | None:
    """The settings in `path` (None: no such file); SettingsError naming the file otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeError) as exc:
        raise SettingsError(f"{path}: cannot be read ({exc})") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{path}: not valid JSON ({exc}); nothing was changed") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: not a JSON object; nothing was changed")
    return data


def write(path: Path, settings: dict[str, Any]) -> None:
    """Replace the file at once (2-space JSON, as Claude Code writes it), keeping its mode; a
    new one is owner-only (it names this machine's paths)."""
    replace_text(path, json.dumps(settings, indent=2, ensure_ascii=False) + "\n", mode=0o600)


@dataclass(frozen=True)
class Outcome:
    path: Path
    changed: bool
    events: dict[str, list[str]]


def install(project: Path, cmd: str) -> Outcome:
    path = project / LOCAL
    before = read(path)
    after = merged(before or {}, cmd)
    changed = before != after
    if changed:
        write(path, after)
    if before is None:
        keep_out_of_git(project, LOCAL)
    return Outcome(path, changed, found(after))


def keep_out_of_git(project: Path, relative: Path) -> None:
    """A settings file memls creates names this machine's paths: in a git work tree where
    nothing ignores it yet, it goes into `.git/info/exclude` (this clone's own ignore list, as
    Claude Code ignores the local settings it creates), never into the shared `.gitignore`."""
    exclude = project / ".git" / "info" / "exclude"
    if not (project / ".git").is_dir():
        return
    try:
        ignored = subprocess.run(
            ["git", "-C", str(project), "check-ignore", "-q", str(relative)],
            capture_output=True,
            timeout=10,
        ).returncode
    except (OSError, subprocess.SubprocessError):
        return  # no git here: nothing to keep it out of
    if ignored != 1:
        return  # 0: already ignored; anything else: git could not tell, change nothing
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as out:
        out.write(f"/{relative.as_posix()}\n")


def uninstall(project: Path) -> Outcome:
    path = project / LOCAL
    before = read(path)
    if before is None:
        return Outcome(path, False, {})
    after = removed(before)
    changed = before != after
    if changed:
        write(path, after)
    return Outcome(path, changed, found(before))


def status(project: Path, home: Path | None = None) -> list[Outcome]:
    """Where memls's hooks are installed: the project's local and shared settings, the
    user's (each file that exists, with the memls commands found in it)."""
    files = [project / LOCAL, project / SHARED, (home or Path.home()) / SHARED]
    out = []
    for path in files:
        settings = read(path)
        if settings is not None:
            out.append(Outcome(path, False, found(settings)))
    return out
