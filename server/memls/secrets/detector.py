"""Find credentials in a memory's text with detect-secrets' plugins.

Every plugin of detect-secrets runs on every line except the public-IP detector (an address
is not a credential). Three readings follow the form of the line, not a list of words:

- quoted strings and the plugins' own token forms (AWS keys, GitHub/GitLab/Slack/Stripe/...
  tokens, private-key headers, JWTs, credentials in URLs) are looked for everywhere;
- a line that is an assignment (`NAME=value`, `export NAME=value`, `name: value`, as in .env,
  YAML or INI files) is also read as a configuration file, so a secret-named key with an
  unquoted value counts, and its value is scored by the high-entropy plugins unquoted;
- the heuristic filters of detect-secrets drop what only looks random (UUIDs, sequences,
  templates such as `${VAR}` or `<token>`, ids, indirect references).

Nothing here verifies a secret against its service: detect-secrets only does so when its
verification filter is configured, which this module never does (memls makes no network
calls).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Finding", "find", "kinds", "redact"]

# Not a credential: an address in a note is not a leak of access.
_SKIPPED_PLUGINS = frozenset({"IPPublicDetector"})
_ENTROPY_PLUGINS = frozenset({"Base64HighEntropyString", "HexHighEntropyString"})
_GENERIC_PLUGINS = _ENTROPY_PLUGINS | {"KeywordDetector"}
_GENERIC_LABELS = frozenset(
    {"Base64 High Entropy String", "Hex High Entropy String", "Secret Keyword"}
)

# An assignment line as configuration files write it: an optional `export`, a name, `=` or
# `:`, and one value with nothing after it but an optional comment.
_ASSIGNMENT = re.compile(
    r"^\s*(?:export\s+)?[\"']?(?P<name>[A-Za-z_][\w.\-]*)[\"']?\s*(?:=|:)\s*"
    r"(?P<quote>[\"']?)(?P<value>[^\s\"']{8,})(?P=quote)(?:\s+#.*)?\s*$"
)
_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY[ A-Z0-9]*-----")


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret: its kind (detect-secrets' type as a slug, e.g. `aws-access-key`), the
    plugin's own name for it, where it is (0-based line, character offsets into the whole
    text), and the span that redaction replaces."""

    kind: str
    label: str
    line: int
    start: int
    end: int


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


class _Detector:
    """The plugins, built once (they hold compiled patterns and no state per scan)."""

    def __init__(self) -> None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins import keyword

        classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
        self.plugins: list[Any] = [c() for c in classes if c.__name__ not in _SKIPPED_PLUGINS]
        self.plugins.sort(key=lambda p: (type(p).__name__ in _GENERIC_PLUGINS, p.secret_type))
        self.entropy = [p for p in self.plugins if type(p).__name__ in _ENTROPY_PLUGINS]
        self.keyword = next(p for p in self.plugins if type(p).__name__ == "KeywordDetector")
        # The keyword plugin's own list of secret-sounding names: a line that holds none
        # skips its (slowest) patterns.
        self.keyword_names = re.compile(keyword.DENYLIST_REGEX, re.IGNORECASE)
        self.heuristic = heuristic

    def _filtered(self, secret: str, line: str, plugin: Any) -> bool:
        h = self.heuristic
        return bool(
            h.is_sequential_string(secret)
            or h.is_potential_uuid(secret)
            or h.is_likely_id_string(secret, line, plugin)
            or h.is_templated_secret(secret)
            or h.is_prefixed_with_dollar_sign(secret)
            or h.is_indirect_reference(line)
            or (type(plugin).__name__ in _GENERIC_PLUGINS and h.is_not_alphanumeric_string(secret))
        )

    def line_secrets(self, line: str) -> Iterator[tuple[Any, str]]:
        """(plugin, secret value) for every secret the plugins see in one line."""
        named = self.keyword_names.search(line) is not None
        for plugin in self.plugins:
            if plugin is self.keyword and not named:
                continue
            for found in plugin.analyze_line(filename="memory", line=line, line_number=0):
                secret = found.secret_value
                if secret and not self._filtered(secret, line, plugin):
                    yield plugin, secret
        yield from self._config_reading(line, named)

    def _config_reading(self, line: str, named: bool) -> Iterator[tuple[Any, str]]:
        """The line read as a configuration file: a secret-named key with an unquoted value
        (its first word; a value that is a plain word, such as `password: required`, is
        prose), and an assignment's unquoted value scored by the high-entropy plugins."""
        keyed = self.keyword.analyze_line(filename="memory.cfg", line=line) if named else ()
        for found in keyed:
            value = (found.secret_value or "").split(maxsplit=1)
            secret = value[0].rstrip(".,;)") if value else ""
            if (
                len(secret) >= 6
                and not secret.isalpha()
                and not self._filtered(secret, line, self.keyword)
            ):
                yield self.keyword, secret
        assignment = _ASSIGNMENT.match(line)
        if assignment is None or assignment.group("quote"):
            return
        value = assignment.group("value")
        for plugin in self.entropy:
            if (
                _in_charset(value, plugin.charset)
                and plugin.calculate_shannon_entropy(value) > plugin.entropy_limit
                and not self._filtered(value, line, plugin)
            ):
                yield plugin, value


# A plugin may report part of a token (a regex group: `ghp` of `ghp_...`, a JWT without its
# signature): the redacted span runs on over the token's characters. `=` only to the right
# (base64 padding), so an assignment's name is never taken in; a final `.` is prose.
_TOKEN_LEFT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/.~")
_TOKEN_RIGHT = _TOKEN_LEFT | {"="}


def _whole_token(line: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and line[start - 1] in _TOKEN_LEFT and line[start - 1] not in "./":
        start -= 1
    while end < len(line) and line[end] in _TOKEN_RIGHT:
        end += 1
    while end > start and line[end - 1] == ".":
        end -= 1
    return start, end


def _in_charset(value: str, charset: str) -> bool:
    return all(c in charset for c in value)


_detector: _Detector | None = None
_lock = threading.Lock()


def _get() -> _Detector:
    global _detector
    if _detector is None:
        with _lock:
            if _detector is None:
                _detector = _Detector()
    return _detector


def find(text: str) -> list[Finding]:
    """Every secret in `text`, in order of place, overlapping reports merged (the more specific
    plugin named: a token form before a keyword or an entropy score)."""
    detector = _get()
    found: list[Finding] = []
    offset = 0
    lines = text.split("\n")
    for number, line in enumerate(lines):
        for plugin, secret in detector.line_secrets(line):
            at = line.find(secret)
            if at < 0:
                continue
            at, stop = _whole_token(line, at, at + len(secret))
            start, end = offset + at, offset + stop
            if type(plugin).__name__ == "PrivateKeyDetector":
                close = _PEM_END.search(text, end)
                end = close.end() if close else len(text)
            found.append(Finding(_slug(plugin.secret_type), plugin.secret_type, number, start, end))
        offset += len(line) + 1
    return _merge(found)


def _merge(found: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.start, f.label in _GENERIC_LABELS, -(f.end - f.start))):
        if out and f.start < out[-1].end:
            last = out[-1]
            if f.end > last.end:
                out[-1] = Finding(last.kind, last.label, last.line, last.start, f.end)
            continue
        out.append(f)
    return out


def redact(text: str, findings: list[Finding] | None = None) -> str:
    """`text` with each secret replaced by `[REDACTED:kind]`."""
    findings = find(text) if findings is None else findings
    out: list[str] = []
    at = 0
    for f in findings:
        out.append(text[at : f.start])
        out.append(f"[REDACTED:{f.kind}]")
        at = f.end
    out.append(text[at:])
    return "".join(out)


def kinds() -> list[str]:
    """The kinds this detector can report, as slugs."""
    return sorted({_slug(p.secret_type) for p in _get().plugins})
