"""detect-secrets' plugins on one line of a memory.

Every plugin runs on every line except the public-IP detector (an address is not a
credential). Three readings follow the form of the line, not a list of words:

- the plugins' own token forms (AWS keys, GitHub/GitLab/Slack/Stripe/... tokens, private-key
  headers, JWTs, credentials in URLs) are looked for everywhere;
- a quoted string is scored by the high-entropy plugins only where a secret-named key is
  assigned it (`api_token = "..."`, `"client_secret": "..."`): a random-looking string in
  any other place (a checksum, a CSRF field, a fixture) is not a credential;
- a line that is an assignment (`NAME=value`, `export NAME=value`, `name: value`, as in .env,
  YAML or INI files) is also read as a configuration file, so a secret-named key with an
  unquoted value counts, and its value is scored by the high-entropy plugins unquoted.

The heuristic filters of detect-secrets drop what only looks random (UUIDs, sequences,
templates such as `${VAR}` or `<token>`, ids, indirect references). Nothing is verified
against a service (detect-secrets only does so when its verification filter is configured,
which this module never does).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["line_secrets", "plugin_kinds", "slug"]

# Not a credential: an address in a note is not a leak of access.
_SKIPPED_PLUGINS = frozenset({"IPPublicDetector"})
_ENTROPY_PLUGINS = frozenset({"Base64HighEntropyString", "HexHighEntropyString"})
_GENERIC_PLUGINS = _ENTROPY_PLUGINS | {"KeywordDetector"}

# The name of a key that holds a credential, in a configuration or code assignment.
_SECRET_NAME = re.compile(r"key|token|secret|pass|pwd|auth|cred", re.IGNORECASE)
# ... unless a word of the name says the key or token is not a credential: one that anyone may
# read (a public key, a CSRF token a page carries), a database's key, or a name that ends in
# what is said about the credential rather than the credential (`issuerKeyHash`,
# `secret_length`, `LLM_SECRET_NAME`, `key_down_event`)
_NOT_SECRET_BEFORE = frozenset({"public", "primary", "foreign", "csrf", "xsrf"})
_NOT_SECRET_LAST = frozenset(
    {"hash", "event", "name", "length", "size", "count", "id", "type", "url", "path", "file"}
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# ... and of a password or a secret, which a person may choose and keep short; a key or a
# token a service issues has at least _KEY_LENGTH characters
_PASSWORD_NAME = re.compile(r"pass|pwd|secret|contrase", re.IGNORECASE)
_KEY_LENGTH = 16
# what stands left of a value assigned to a key: the key (quoted or not) and an operator
_ASSIGNED = re.compile(r"(?P<name>[A-Za-z_][\w.\-]*)[\"'`]?\s*(?:=|:|:=|=>|\?=|,)\s*[\"'`]?$")

# An assignment line as configuration files write it: an optional `export`, a name, `=` or
# `:`, and one value with nothing after it but an optional comment.
_ASSIGNMENT = re.compile(
    r"^\s*(?:export\s+)?[\"']?(?P<name>[A-Za-z_][\w.\-]*)[\"']?\s*(?:=|:)\s*"
    r"(?P<quote>[\"']?)(?P<value>[^\s\"']{8,})(?P=quote)(?:\s+#.*)?\s*$"
)


def slug(label: str) -> str:
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
                if not secret or self._filtered(secret, line, plugin):
                    continue
                if plugin in self.entropy and not _secret_named(line, secret):
                    continue
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
        if (
            assignment is None
            or assignment.group("quote")
            or not _credential_name(assignment.group("name"))
        ):
            return
        value = assignment.group("value")
        for plugin in self.entropy:
            if (
                _in_charset(value, plugin.charset)
                and plugin.calculate_shannon_entropy(value) > plugin.entropy_limit
                and not self._filtered(value, line, plugin)
            ):
                yield plugin, value


def _credential_name(name: str) -> bool:
    """A secret-sounding name that names a credential: `api_key`, `clientSecret`, not
    `public_key`, `primaryKey`, `csrf-token`, `issuerKeyHash`, `secret_length`."""
    if _SECRET_NAME.search(name) is None:
        return False
    words = [w.lower() for w in re.split(r"[^A-Za-z0-9]+", _CAMEL.sub(" ", name)) if w]
    if words and words[-1] in _NOT_SECRET_LAST and len(words) > 1:
        return False
    return not any(
        a in _NOT_SECRET_BEFORE and _SECRET_NAME.search(b) for a, b in zip(words, words[1:])
    )


def _assigned_to(line: str, secret: str) -> str | None:
    """The name `secret` is assigned to in `line`, if it is."""
    at = line.find(secret)
    named = _ASSIGNED.search(line[:at]) if at > 0 else None
    return named.group("name") if named else None


def _secret_named(line: str, secret: str) -> bool:
    """Whether `secret` stands in `line` as the value of a secret-named key."""
    name = _assigned_to(line, secret)
    return name is not None and _credential_name(name)


def _short_key(line: str, secret: str) -> bool:
    """A key or a token (not a password, not a secret) shorter than a service issues: a test
    value (`EXOabc123`)."""
    at = line.find(secret)
    named = _ASSIGNED.search(line[:at]) if at > 0 else None
    return (
        named is not None
        and _PASSWORD_NAME.search(named.group("name")) is None
        and len(secret) < _KEY_LENGTH
    )


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


def line_secrets(line: str) -> Iterator[tuple[str, str, str]]:
    """(kind, label, secret value) for every secret the plugins see in one line."""
    # a backtick quotes a string in Go, JavaScript and shell: read it as a quote (the
    # line keeps its length, so places do not move)
    detector = _get()
    for plugin, secret in detector.line_secrets(line.replace("`", '"')):
        if plugin is detector.keyword:
            name = _assigned_to(line, secret)
            if _short_key(line, secret) or (name is not None and not _credential_name(name)):
                continue
        yield slug(plugin.secret_type), plugin.secret_type, secret


def plugin_kinds() -> list[str]:
    return sorted({slug(p.secret_type) for p in _get().plugins})
