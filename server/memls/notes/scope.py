"""Which files a note's lines apply to (its path scope), and whether two scopes can meet. Pure.

A scope is a tuple of globs on project-relative POSIX paths (`memls.notes.globs` rules, with
`{a,b}` expanded); the empty tuple is the whole project. `scope_of` reads it the way the agent
whose file it is reads it (`memls.notes.conventions`): a nested file's folder
(`services/api/AGENTS.md` -> `services/api/**`), or the front matter of a rules file
(`paths`, `applyTo`, `globs`, `fileMatchPattern`; `alwaysApply: true`, a `trigger` other than
`glob` or an `inclusion` other than `fileMatch` make it apply everywhere). Front matter is read
with PyYAML's `safe_load`; the "not strictly YAML" form Cursor documents (`globs: **/*.ts,
**/*.tsx`, unquoted) is read key by key as Cursor reads it. Front matter that cannot be read,
or a glob that cannot be, gives a warning on its line and the whole project as the scope:
never a crash, never a narrower scope than the file meant.

`can_meet(a, b)` is asked before two statements are compared: it answers False only when no
path can match both scopes (different literal folders, different fixed file names or
extensions), and True whenever that cannot be shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import yaml

from memls.notes.conventions import Match
from memls.notes.globs import match as glob_match
from memls.notes.scan import split_lines

Scope = tuple[str, ...]
KEYS = ("paths", "applyTo", "globs", "fileMatchPattern")
"""The front-matter keys that name globs (Claude Code and Cline, Copilot, Cursor and
Windsurf, Kiro), first present wins."""
EVERYWHERE = frozenset({"**", "**/*", "*"})
_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_ITEM = re.compile(r"^\s+-\s*(.*)$|^-\s+(.*)$")


@dataclass(frozen=True)
class Scoped:
    """A note's scope and what could not be read of it: (0-based line, message) each."""

    globs: Scope = ()
    warnings: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class FrontMatter:
    data: dict[str, Any] | None  # None: no front matter, or it could not be read
    error: tuple[int, str] | None = None


def front_matter(text: str) -> FrontMatter:
    """The note's front matter (`---` on the first line up to `---` or `...`), read with
    `yaml.safe_load`, else key by key (see the module doc)."""
    lines = split_lines(text)
    if not lines or lines[0].strip() != "---":
        return FrontMatter(None)
    end = next((j for j in range(1, len(lines)) if lines[j].rstrip() in ("---", "...")), None)
    if end is None:
        return FrontMatter(None)  # no closing line: no front matter (the parser agrees)
    body = "\n".join(lines[1:end])
    try:
        data = yaml.safe_load(body) if body.strip() else {}
    except yaml.YAMLError as exc:
        loose = _loose(lines[1:end])
        if loose is not None:
            return FrontMatter(loose)
        mark = getattr(exc, "problem_mark", None)
        line = 1 + (mark.line if mark is not None else 0)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return FrontMatter(None, (min(line, end), f"front matter is not readable YAML: {problem}"))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return FrontMatter(None, (0, "front matter is not a mapping of keys to values"))
    return FrontMatter(data)


def _loose(lines: list[str]) -> dict[str, Any] | None:
    """`key: value` lines with values taken as written (Cursor's `globs: **/*.ts, src/**`),
    `- item` lines under a key; None when a line is neither, or a value opens a YAML flow
    collection or a quote it does not close."""
    out: dict[str, Any] = {}
    key: str | None = None
    for raw in lines:
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        item = _ITEM.match(raw)
        if item and key is not None:
            value = (item.group(1) or item.group(2) or "").strip()
            if _opens(value):
                return None
            listed = out.get(key)
            out[key] = (listed if isinstance(listed, list) else []) + [_unquote(value)]
            continue
        found = _KEY.match(raw)
        if not found:
            return None
        key, value = found.group(1), found.group(2).strip()
        if _opens(value):
            return None
        lowered = value.lower()
        out[key] = True if lowered == "true" else False if lowered == "false" else _unquote(value)
    return out


def _opens(value: str) -> bool:
    """A value that opens a YAML flow collection, or a quote it does not close."""
    return value[:1] in ("[", "{") or value.count('"') % 2 == 1 or value.count("'") % 2 == 1


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def expand(glob: str) -> list[str]:
    """`{a,b}` alternatives expanded (nested ones too): `src/**/*.{ts,tsx}` -> two globs."""
    start = glob.find("{")
    if start < 0:
        return [glob]
    depth = 0
    for i in range(start, len(glob)):
        if glob[i] == "{":
            depth += 1
        elif glob[i] == "}":
            depth -= 1
            if depth == 0:
                inner, rest = glob[start + 1 : i], glob[i + 1 :]
                out: list[str] = []
                for option in _split_top(inner):
                    out += expand(glob[:start] + option + rest)
                return out
    raise ValueError(f"an unclosed '{{' in {glob!r}")


def _split_top(text: str, sep: str = ",") -> list[str]:
    """`text` split at `sep` outside braces."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if char == sep and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def _glob_error(glob: str) -> str | None:
    if glob.startswith("/") or glob.startswith("~"):
        return f"{glob!r} is not relative to the project's folder"
    if ".." in glob.split("/"):
        return f"{glob!r} leads out of its folder"
    depth = 0
    for char in glob:
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
    if depth:
        return f"{glob!r} has an unclosed '['"
    return None


def _globs_of(value: Any) -> list[str]:
    """The globs a front-matter value names (a list, or one string of comma-separated
    globs); ValueError naming what cannot be read."""
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"{item!r} is not a glob (a string)")
        for piece in _split_top(item):
            piece = piece.strip()
            if piece.startswith("./"):
                piece = piece[2:]
            if not piece:
                continue
            error = _glob_error(piece)
            if error:
                raise ValueError(error)
            out += expand(piece)
    return out


def folder_scope(base: str) -> Scope:
    return (f"{base}/**",) if base else ()


def scope_of(found: Match | None, text: str) -> Scoped:
    """The scope of a note's lines (see the module doc); the whole project for a file the
    table does not name."""
    if found is None:
        return Scoped()
    convention = found.convention
    if convention.scope == "project":
        return Scoped()
    if convention.scope == "folder":
        return Scoped(folder_scope(found.base))
    read = front_matter(text)
    if read.error is not None:
        return Scoped((), (read.error,))
    data = read.data or {}
    if data.get("alwaysApply") is True:
        return Scoped()
    trigger = data.get("trigger")
    if isinstance(trigger, str) and trigger != "glob":
        return Scoped()  # always_on, model_decision, manual: not bound to files
    inclusion = data.get("inclusion")
    if isinstance(inclusion, str) and inclusion != "fileMatch":
        return Scoped()  # always, manual, auto
    key = next((k for k in KEYS if data.get(k) not in (None, "", [])), None)
    if key is None:
        return Scoped(folder_scope(found.base))
    try:
        globs = _globs_of(data[key])
    except ValueError as exc:
        return Scoped((), ((_line_of(text, key), f"`{key}`: {exc}: read as unscoped"),))
    if not globs or any(g in EVERYWHERE for g in globs):
        return Scoped(folder_scope(found.base))
    prefix = f"{found.base}/" if found.base else ""
    return Scoped(tuple(dict.fromkeys(prefix + g for g in globs)))


def _line_of(text: str, key: str) -> int:
    for i, line in enumerate(split_lines(text)):
        if line.startswith(f"{key}:"):
            return i
    return 0


# ---------------------------------------------------------------- using a scope


def covers(scope: Iterable[str], path: str) -> bool:
    """Does a scope apply to the project-relative path? The whole project covers every file."""
    globs = tuple(scope)
    return not globs or any(glob_match(path, g) for g in globs)


def covers_any(scope: Iterable[str], paths: Iterable[str]) -> bool:
    globs = tuple(scope)
    return not globs or any(covers(globs, p) for p in paths)


def can_meet(a: Iterable[str], b: Iterable[str]) -> bool:
    """Can one file be in both scopes? False only when that is shown for every pair of their
    globs; the whole project meets every scope."""
    a, b = tuple(a), tuple(b)
    if not a or not b:
        return True
    return any(_globs_meet(x, y) for x in a for y in b)


def _split(glob: str) -> list[str]:
    return [p for p in glob.split("/") if p not in ("", ".")]


def _globs_meet(x: str, y: str) -> bool:
    """False when no path matches both globs, shown segment by segment: from the start and
    from the end, while neither glob has reached a `**`, two segments no one name can match
    (and, with no `**` in either, a different number of segments)."""
    a, b = _split(x), _split(y)
    if not a or not b:
        return True
    if "**" not in a and "**" not in b and len(a) != len(b):
        return False
    for sa, sb in zip(a, b):
        if sa == "**" or sb == "**":
            break
        if _apart(sa, sb):
            return False
    if a[-1] == "**" or b[-1] == "**":
        return True  # `dir/**` ends in any name
    for sa, sb in zip(reversed(a), reversed(b)):
        if sa == "**" or sb == "**":
            break
        if _apart(sa, sb):
            return False
    return True


_AFFIX = re.compile(r"^([^*?\[\]{}]*)\*([^*?\[\]{}]*)$")


def _apart(p: str, q: str) -> bool:
    """No one name matches both segment patterns (shown, not guessed)."""
    lp, lq = _literal(p), _literal(q)
    if lp and lq:
        return p != q
    if lp:
        return not fnmatchcase(p, q)
    if lq:
        return not fnmatchcase(q, p)
    mp, mq = _AFFIX.match(p), _AFFIX.match(q)
    if mp and mq:  # `pre*suf`: a name has both prefixes and both suffixes, or none can
        (p1, s1), (p2, s2) = mp.groups(), mq.groups()
        if not (p1.startswith(p2) or p2.startswith(p1)):
            return True
        if not (s1.endswith(s2) or s2.endswith(s1)):
            return True
    return False


def _literal(segment: str) -> bool:
    return not any(c in segment for c in "*?[")
