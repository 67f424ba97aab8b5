"""Find credentials in a memory's text: three readers, one answer.

- Betterleaks' rules (`leaks.py`): today's services' token formats, several hundred of them;
- detect-secrets' plugins (`plugins.py`): cloud keys, private keys, JWTs, secret-named keys
  and high-entropy values assigned to them, with its heuristic filters;
- the forms people write credentials in that neither covers (`forms.py`): a URL's password
  with any character, credentials on a command line, a password in prose.

What any of them reports is dropped when its value is a placeholder (`forms.is_placeholder`:
`<token>`, `$VAR`, `$$VAR`, `${VAR}`, `%s`, `#{token}#`, `PASSWORD`, `xxxxxx`, `sk-...`,
`your_key_here`), the word of the name it is given to (`password="password"`), a token whose
random part is one character over and over (`pscale_pw_0000...`), a URL whose password is
masked (`user:xxx@`), or a vendor's documented example (`examples.is_documented`:
`AKIAIOSFODNN7EXAMPLE`). Overlapping reports are
merged, the more specific kept (a token form before a keyword or an entropy score). The split and
the choice of readers were measured: docs/secrets.md.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from memls.secrets import examples, forms, leaks, plugins

__all__ = ["Finding", "find", "kinds", "redact"]

_GENERIC_KINDS = frozenset(
    {
        "base64-high-entropy-string",
        "hex-high-entropy-string",
        "secret-keyword",
        "generic-api-key",
        "generic-password",
        "prose-password",
    }
)
# kinds whose value is a password a person chose: a plain word there is a placeholder
_PASSWORD_KINDS = frozenset(
    {
        "basic-auth-credentials",
        "secret-keyword",
        "generic-password",
        "generic-credential-uri",
        "url-password",
        "command-line-password",
        "prose-password",
    }
)
_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY[ A-Z0-9]*-----")
_PEM_KINDS = frozenset({"private-key"})
_PLUGINS, _FORMS, _LEAKS = 0, 1, 2  # the readers, in the order their kinds are preferred
_PEM_BODY = 32  # characters of key material between the header and the footer, at least


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret: its kind (a slug: `aws-access-key`, `github-pat`, `url-password`), a
    readable name for it, where it is (0-based line, character offsets into the whole text),
    and the span that redaction replaces."""

    kind: str
    label: str
    line: int
    start: int
    end: int


# A reader may report part of a token (a regex group: `ghp` of `ghp_...`, a JWT without its
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


def _occurrences(line: str, secret: str) -> list[tuple[int, int]]:
    """Where the value stands in its line, as whole tokens: first those that are the value
    alone (`"password"` in `passwordArray = "password".toCharArray()`, not the name the
    value is given to), then those inside a longer token."""
    spans = []
    at = line.find(secret)
    while at >= 0 and secret:
        spans.append((at, at + len(secret)))
        at = line.find(secret, at + 1)
    whole = [_whole_token(line, a, b) for a, b in spans]
    return [w for w, s in zip(whole, spans) if w == s] + [w for w, s in zip(whole, spans) if w != s]


def _stands_for_one(kind: str, span: str, word: str) -> bool:
    """A placeholder (the span, or the word it stands in), for a password a plain word, and
    for a token form (detect-secrets gives its forms no entropy floor) one with nothing
    random in it; a digest named by its algorithm or a cloud resource's name."""
    if forms.is_placeholder(span) or forms.is_placeholder(word) or forms.is_public(span):
        return True
    if kind not in _GENERIC_KINDS and kind not in _PASSWORD_KINDS and forms.is_hollow(span):
        return True
    return kind in _PASSWORD_KINDS and (
        forms.is_plain(span) or forms.is_plain(word) or forms.names_a_secret(span)
    )


def _holds_url_password(found: list[tuple[Finding, int]], start: int, end: int) -> bool:
    """A whole connection string reported where the URL reading found its password: the
    password alone is redacted, so the rest of the URL is kept."""
    return any(f.kind == "url-password" and start <= f.start and f.end <= end for f, _ in found)


def _word(line: str, start: int, stop: int) -> str:
    """The span with the characters around it up to a space or a quote (a placeholder's
    `####` after a token's last dash belongs to it)."""
    while start > 0 and not line[start - 1].isspace() and line[start - 1] not in "\"'`=:":
        start -= 1
    while stop < len(line) and not line[stop].isspace() and line[stop] not in "\"'`,;":
        stop += 1
    return line[start:stop]


def find(text: str) -> list[Finding]:
    """Every secret in `text`, in order of place, overlapping reports merged."""
    found: list[tuple[Finding, int]] = []
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def add(kind: str, label: str, number: int, at: int, stop: int, rank: int) -> None:
        line = lines[number]
        if rank == _LEAKS:
            at, stop = _whole_token(line, at, stop)
        if examples.is_documented(line[at:stop]):
            return  # a vendor's documented example, whichever reader found it
        start, end = offsets[number] + at, offsets[number] + stop
        if kind in _PEM_KINDS or "private-key" in kind:
            close = _PEM_END.search(text, end)
            if close and len(re.sub(r"\s", "", text[end : close.start()])) < _PEM_BODY:
                return  # a header and a footer around nothing: an example, not a key
            end = close.end() if close else len(text)
        found.append((Finding(kind, label, number, start, end), rank))

    for number, line in enumerate(lines):
        for kind, label, secret in plugins.line_secrets(line):
            secret = forms.before_next_pair(secret)
            spans = _occurrences(line, secret)
            if not spans:
                continue
            start, stop = spans[0]
            if _stands_for_one(kind, line[start:stop], _word(line, start, stop)):
                continue
            if forms.names_itself(line, secret):
                continue  # `password="password"`: the key's own word written in
            add(kind, label, number, start, stop, _PLUGINS)
        for kind, label, at, stop in forms.forms(line):
            add(kind, label, number, at, stop, _FORMS)
    for kind, label, number, secret in leaks.leaks(text):
        # Betterleaks' rules carry their own entropy floors and allowlists: only a variable
        # or a bracketed name is dropped here
        first = secret.split("\n", 1)[0].strip()
        if not first or forms.is_reference(first) or not 0 <= number < len(lines):
            continue
        if kind in _PASSWORD_KINDS and (forms.is_plain(first) or forms.names_a_secret(first)):
            continue
        if (
            forms.is_blank(first)
            or forms.asks_to_be_replaced(first)
            or forms.url_password_stands_for_one(first)
            or forms.names_itself(lines[number], first)
        ):
            continue  # nothing random, words asking to be replaced, a masked URL password
        if kind in _GENERIC_KINDS and (
            forms.is_example(first) or forms.is_public(first) or forms.asks_to_be_replaced(first)
        ):
            continue  # a generic rule knows no format: a made-up example is one to it
        at = text.find(first, offsets[number])
        if at >= 0 and not _holds_url_password(found, at, at + len(first)):
            number = bisect.bisect_right(offsets, at) - 1
            at -= offsets[number]
            add(kind, label, number, at, at + len(first), _LEAKS)
    return _merge(found)


def _merge(found: list[tuple[Finding, int]]) -> list[Finding]:
    """One finding per place: where reports overlap, the first to start, then a specific kind
    before a generic one, then detect-secrets' kind before ours and Betterleaks' (the kinds
    stored before Betterleaks was added keep their names), then the longest."""
    out: list[Finding] = []
    ordered = sorted(
        found, key=lambda p: (p[0].start, p[0].kind in _GENERIC_KINDS, p[1], p[0].start - p[0].end)
    )
    for f, _ in ordered:
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
    """The kinds the detect-secrets plugins and memls' own readings report (Betterleaks'
    rule ids come on top)."""
    own = ["url-password", "command-line-password", "authorization-header", "prose-password"]
    return sorted({*plugins.plugin_kinds(), *own})
