"""Credentials in the forms people write them in notes, which the scanners' rules leave out:
a URL's password whatever characters it holds, credentials given on a command line, and a
password given in prose. And what no reading counts as a secret: a placeholder.

Each reading yields (kind, label, start, end) of the secret's span in one line.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Iterator

__all__ = [
    "asks_to_be_replaced",
    "forms",
    "is_blank",
    "is_example",
    "is_hollow",
    "is_placeholder",
    "is_plain",
    "is_public",
    "is_reference",
    "names_itself",
    "url_password_stands_for_one",
]

# --- placeholders ---------------------------------------------------------------------------

_WRAPPED = re.compile(r"^(?:<[^<>]*>|\{[^{}]*\}|\[[^\[\]]*\]|%[^%\s]+%|\([^()]*\))$")
# `$$VAR`: a reference Docker Compose escapes so that the container's shell reads it
_VARIABLE = re.compile(r"\$\{|\$\(|\{\{|^\$\$?[A-Za-z_]")
# a slot a format or a template fills: printf's verbs (`%s`, `%d`, `%-5.2f`), Python's
# `%(name)s`, `{0}`, and a release pipeline's token (`#{azure-replacement-token}#`, Ruby's
# `#{var}`)
_SLOT = re.compile(
    r"^(?:%[-+ #0]*\d*(?:\.\d+)?[sdifgvqxXoceEGTbp]|%\([A-Za-z_]\w*\)[sdifr]|#\{[^{}]*\}#?)$"
)
# one character over and over, however short (`xxx`, `****`): a masked or elided value
_ONE_CHAR = re.compile(r"^(.)\1*$")
_CAPS_WORD = re.compile(r"^[A-Z][A-Z_\-]*$")
_RUN = re.compile(r"(.)\1{5,}")
_QUOTES = "\"'`"
# a name in words, without digits: `settings`, `GITHUB_API_SECRET`, `apiKey`, `SecretKey`
_NAME = r"(?:[a-z]+(?:_[a-z]+)*|[A-Z]+(?:_[A-Z]+)*|[a-z]+(?:[A-Z][a-z]+)+|(?:[A-Z][a-z]+)+)"
_PATH = rf"_?{_NAME}(?:(?:\.|::|->){_NAME})*"
# a call's arguments: names, quoted names and small numbers, never a literal that could be one
_ARGS = rf"\((?:\s*(?:[\"']{_NAME}[\"']|{_PATH}|\d{{1,4}})\s*,?)*\)"
_CODE_PATH = re.compile(
    rf"^(?:[+.|&]+\s*)?(?:{_PATH}{_ARGS}|_?{_NAME}(?:(?:\.|::|->){_NAME})+(?:\[[^\[\]]*\])?)"
    r"(?:\s*[+.|&,;]+)?$"
)
# a bare name joined into a string by `+` (`" --password=" + password + " --url=" + url`)
_JOINED_NAME = re.compile(rf"^(?:\+\s*{_NAME}(?:\s*\+)?|{_NAME}\s*\+)$")


_DIGEST = re.compile(r"^[\"'`]?(?:sha(?:1|224|256|384|512)|md5)[:=]", re.IGNORECASE)
_ARN = re.compile(r"^[\"'`]?arn:aws[a-z\-]*:[a-z0-9\-]+:[a-z0-9\-]*:(?:\d{12}|aws)?:\S+$")


def is_public(value: str) -> bool:
    """What anyone may read of a thing, not a secret: a digest or a fingerprint named by its
    algorithm (`sha256:35f1ea...`, an image id `SHA256:AP1Ay...`), a cloud resource's name
    (an AWS ARN, `arn:aws:iam::aws:policy/IAMUserChangePassword`), or an IP address, v4 or
    v6 (`2001:db8::8a2e:370:7334`)."""
    v = value.strip()
    return _DIGEST.match(v) is not None or _ARN.match(v) is not None or _address(v)


def _address(value: str) -> bool:
    try:
        ipaddress.ip_address(value.strip(_QUOTES))
    except ValueError:
        return False
    return True


# a query string's next pair: `&user=...` after `password=anonymous`
_NEXT_PAIR = re.compile(r"[&;](?=[A-Za-z_][\w.\-\[\]]*=)")


def before_next_pair(value: str) -> str:
    """A value read from a query string ends where the next pair begins, at `&` or `;`
    before a name and `=` (`anonymous` of `password=anonymous&user=user`)."""
    return _NEXT_PAIR.split(value, maxsplit=1)[0]


# the words of a name: an acronym before a capitalised word, a capitalised or a lower-case
# word, or capitals alone
_NAME_WORD = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_WORDS_NAME = re.compile(r"/?[A-Za-z]+(?:[/._\-][A-Za-z]+)*/?")
#: the last word of a name that names a secret rather than holding one
_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "key",
        "credential",
        "credentials",
    }
)


def names_a_secret(value: str) -> bool:
    """A name or a path in words whose last word is the kind of secret it names, not the
    secret (`trustStorePassword`, `/users/resetUserPassword`, `HTTPServerKey`): letters only,
    two words or more. A passphrase in words (`CorrectHorseBatteryStaple`, `correct horse
    battery staple`) names nothing and stays a password."""
    v = value.strip().strip(_QUOTES)
    if _WORDS_NAME.fullmatch(v) is None:
        return False
    words = [w for p in re.split(r"[/._\-]", v) if p for w in _NAME_WORD.findall(p)]
    return len(words) >= 2 and words[-1].lower() in _SECRET_WORDS


def is_reference(value: str) -> bool:
    """A variable reference, escaped for Docker Compose or not (`$$DB_PASSWORD`), a bracketed
    name (`${DB_PASSWORD:-postgres}`, `<token>`), a slot a format or a template fills (`%s`,
    `%(password)s`, `#{azure-replacement-token}#`), or code that reads the secret from
    elsewhere: a path of names in words, with no digit, perhaps indexed
    (`settings.GITHUB_API_SECRET`, `process.env.API_KEY`), or a name called with names for
    arguments (`os.environ.get("TOKEN")`, `getMasterUserPassword()`), perhaps joined to a
    string (`"Password: " + getPassword() + ","`, `" --password=" + password + " ..."`)."""
    v = value.strip().strip(_QUOTES)
    return (
        not v
        or _WRAPPED.match(v) is not None
        or _VARIABLE.search(v) is not None
        or _SLOT.match(v) is not None
        or _CODE_PATH.match(v) is not None
        or _JOINED_NAME.match(v) is not None
    )


def _sequence(value: str) -> bool:
    """Six or more characters in alphabet or digit order, whatever their case (`abcdefgh`,
    `AbCdEfGh`, `123456`)."""
    run = 1
    value = value.lower()
    for a, b in zip(value, value[1:]):
        run = run + 1 if ord(b) == ord(a) + 1 and a.isalnum() and b.isalnum() else 1
        if run >= 6:
            return True
    return False


def _interleaved(value: str) -> bool:
    """Letters and digits written in order, each class apart, as made-up examples are
    (`a1B2c3D4e5F6`, `abc123def456ghi789`, `aA1bB2cC3dD4`, `1234-1234-1234`): the value's
    letters alone, or its digits alone, step through the alphabet (or 0-9) six times or
    more, a letter or a group written twice counting once."""
    letters = [c for c in value.lower() if c.isalpha()]
    digits = [c for c in value if c.isdigit()]
    return _steps(letters) or _steps(digits, wrap=True) or _groups(value)


def _steps(chars: list[str], wrap: bool = False) -> bool:
    run = 0
    for a, b in zip(chars, chars[1:]):
        if b == a:
            continue
        if ord(b) == ord(a) + 1 or (wrap and a == "9" and b == "0"):
            run += 1
            if run >= 5:
                return True
        else:
            run = 0
    return False


_GROUP = re.compile(r"(\d{3,})(?:[-_.:]\1){2,}")


def _groups(value: str) -> bool:
    """One group of digits over and over between separators (`1234-1234-1234`)."""
    return _GROUP.search(value) is not None


_JWT = re.compile(r"eyJ[\w-]*\.([\w-]*)\.([\w-]*)")
_JWT_SIGNATURE = 43  # characters of the shortest signature (HS256, base64url)


def _fake_jwt(value: str) -> bool:
    """A JSON Web Token that cannot be one: its payload is not base64url of a JSON object
    (which starts `eyJ`), or its signature is a word or shorter than any algorithm's
    (`eyJhbGciOi....eyJzdWIi....signature`, `eyJshort.payload.signature`)."""
    m = _JWT.search(value)
    if m is None:
        return False
    payload, signature = m.groups()
    return not payload.startswith("eyJ") or (
        bool(signature) and (len(signature) < _JWT_SIGNATURE or signature.isalpha())
    )


def is_example(value: str) -> bool:
    """Made up to show a format, whoever reads it: letters and digits each in order
    (`a1B2c3D4e5F6`, `1234-1234-1234`) or a token that cannot be a JWT."""
    v = value.strip().strip(_QUOTES)
    return _interleaved(v) or _fake_jwt(v)


_REPEATED = re.compile(r"([A-Za-z0-9]{2,8})\1{2,}")


def _repeated(value: str) -> bool:
    """Most of the value one short unit over and over (`exampleexampleexample`)."""
    m = _REPEATED.search(value)
    return m is not None and 2 * (m.end() - m.start()) >= len(value)


# words that ask whoever reads the value to put their own in its place: `placeholder`,
# `replace with`/`replace me`, `your` as a word before another (`your_key_here`, `YourToken`),
# or `here` as a word after another (`my_secret_api_key_here_...`, `TokenHere`)
_ASKS = re.compile(
    r"(?i:placeholder)|(?i:replace[_\-. ]?(?:with|me))(?![a-z])"
    r"|(?:^|[^A-Za-z])(?:your|Your|YOUR)(?:[_\-.][A-Za-z]|[A-Z][a-z])"
    r"|(?:[a-z][_\-.]here|[A-Z][_\-.]HERE|[a-z]Here)(?![a-z])"
)


def asks_to_be_replaced(value: str) -> bool:
    """A value in words that tells its reader to replace it (`sk-proj-REPLACE_WITH_YOUR_KEY`,
    `your_private_key_id_placeholder_here1234`, `my_secret_api_key_here_8f8d...`): no service
    issues its secrets in words, and a random key holds `your_`, `_here` or `placeholder`
    about never (once in several billion)."""
    return _ASKS.search(value) is not None


def is_placeholder(value: str) -> bool:
    """A value that stands for a secret instead of being one: empty; wrapped in angle, curly
    or square brackets, parentheses or percent signs (`<token>`, `{password}`, `%PASS%`); a
    variable reference anywhere (`$VAR`, `${VAR}`, `$(cmd)`, `{{ var }}`); an all-capitals
    word (`PASSWORD`, `YOUR_API_KEY`); six or more of one character in a row (`xxxxxx`,
    `******`, `ghp_XXXX...`) or in alphabet order (`abcdefgh`, `123456`, and letters and digits
    each in order though interleaved: `a1B2c3D4e5F6`, `1234-1234-1234`); one short unit
    over and over for most of it (`exampleexampleexample`); an ellipsis (`sk-...`); words
    that ask to be replaced (`your_key_here`, `REPLACE_WITH_YOUR_KEY`, `placeholder`)."""
    v = value.strip().strip(_QUOTES)
    return (
        is_reference(v)
        or _CAPS_WORD.match(v) is not None
        or _RUN.search(v) is not None
        or _sequence(v)
        or is_example(v)
        or _repeated(v)
        or asks_to_be_replaced(v)
        or "..." in v
        or "\u2026" in v
    )


_RANDOM_RUN = re.compile(r"[A-Za-z0-9]+")
_WORDS = re.compile(r"[a-z]+|(?:[A-Z][a-z]+){3,}|[A-Z]{1,3}(?:[A-Z][a-z]{2,}){3,}")
_RANDOM_PART = 8  # characters of the shortest random part of a service's token


def is_hollow(token: str) -> bool:
    """A token in a service's format with nothing random in it: its random part (the longest
    run of letters and digits) shorter than any service issues, or words, an acronym before
    them or not (`xoxb-12345-abcd234`, `xoxp-1-initial`,
    `xoxp-1-SlackAppConfigurationAccessTokenHere`, `APDosLogConf`)."""
    part = max(_RANDOM_RUN.findall(token), key=len, default="")
    return len(part) < _RANDOM_PART or _WORDS.fullmatch(part) is not None or is_blank(token)


def is_blank(token: str) -> bool:
    """A token whose random part (its longest run of letters and digits) is one character
    over and over: a prefix and zeros (`pscale_pw_0000...`, `key-0000...`)."""
    part = max(_RANDOM_RUN.findall(token), key=len, default="")
    return len(part) >= _RANDOM_PART and _ONE_CHAR.match(part) is not None


_PLAIN = re.compile(r"^(?:[a-z]+(?:[-_.:/][a-z]+)*|[A-Z]+(?:[-_.:/][A-Z]+)*)$")


def is_plain(value: str) -> bool:
    """Plain words in one case, joined or not (`required`, `api-key`, `db_password`), perhaps
    closing the code around them (`config})` in `{clientSecret:config}`): a name, not a
    password."""
    return _PLAIN.match(value.strip().strip(_QUOTES).rstrip(")]};,")) is not None


def _weak(value: str) -> bool:
    """Too plain to be a password written down: a placeholder, a plain word in one case
    (`password`, `changeme`, `admin`), digits only (a port, a uid), one character over and
    over (`xxxx`, `****`), or shorter than 4."""
    v = value.strip(_QUOTES)
    return (
        is_placeholder(v)
        or len(v) < 4
        or v.isdigit()
        or is_plain(v)
        or _ONE_CHAR.match(v) is not None
    )


def url_password_stands_for_one(value: str) -> bool:
    """A connection string whose password stands for one: a placeholder, a slot a format
    fills (`mongodb://%s:%s@...`), or one character over and over, however short
    (`mongodb://user:xxx@...`, `postgres://app:****@...`)."""
    m = _URL.search(value)
    if m is None:
        return False
    secret = m.group("secret").strip(_QUOTES)
    return is_placeholder(secret) or _ONE_CHAR.match(secret) is not None


# `key = value` in code, configuration or a command line: a name, then `=` or `:`
_ASSIGNED = re.compile(r"([A-Za-z][\w.\-]*)[\"'`]?\s*[:=]\s*[\"'`]?([^\s\"'`,;]+)")
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def names_itself(line: str, value: str) -> bool:
    """The value is the last word of the name it is given to (`--password="password"`,
    `spring.datasource.password=password`, `TOKEN: token`): the key's own word written in,
    not a secret."""
    v = value.strip().strip(_QUOTES).lower()
    if not v.isalpha():
        return False
    for key, given in _ASSIGNED.findall(line):
        words = _KEY_WORDS.findall(key)
        if given.lower() == v and words and words[-1].lower() == v:
            return True
    return False


# --- the readings -----------------------------------------------------------------------------

# scheme://user:password@host — the password is everything between the first ':' after the
# user and the '@' that starts the host, so reserved characters (! $ & * # ...) are kept.
_URL = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.\-]*://(?P<user>[^\s:/@'\"`]*):(?P<secret>[^\s'\"`]+?)"
    r"@(?=[A-Za-z0-9\[][\w.\-\[\]:%]*(?:[/?#\s'\"`),;>]|$))"
)

_PORT_PATH = re.compile(r"\d{1,5}/")

# curl -u user:pass, --user user:pass, --user=user:pass, -uuser:pass
_USER_FLAG = re.compile(
    r"(?:^|\s)(?:-u\s*|--user(?:\s+|=))(?P<q>[\"']?)(?P<user>[^\s:\"']+):(?P<secret>[^\s\"']+)(?P=q)"
)
# --password X, --password=X, --passwd X, --pass X, --token X, --api-key X, --secret X
_LONG_FLAG = re.compile(
    r"(?:^|\s)--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret)"
    r"(?:\s+|=)(?P<q>[\"']?)(?P<secret>[^\s\"']+)(?P=q)"
)
# -p X / -pX: the flag also means a port, a parent directory or a publish; it is read as a
# password only on a line that names a user (-u, --user, --username, -U) or logs in
_SHORT_P = re.compile(r"(?:^|\s)-p\s*(?P<q>[\"']?)(?P<secret>[^\s\"'-][^\s\"']*)(?P=q)")
_NAMES_USER = re.compile(r"(?:^|\s)(?:-u|-U|--user)|\blogin\b|\bsshpass\b")
# Authorization: Basic <base64 of user:pass>, Bearer/Token <token>
_AUTH = re.compile(
    r"\bAuthorization\s*[:=]\s*[\"']?(?P<scheme>Basic|Bearer|Token)\s+(?P<secret>[A-Za-z0-9+/=._~\-]+)",
    re.IGNORECASE,
)
# a password in prose: the word, then the value after a space, `is`, `:` or `=`; or the word,
# up to five words naming whose (for root on the NAS), `:` or `is`, then the value
_PROSE = re.compile(
    r"(?<![\w\-.])(?:password|passwd|passphrase|passcode|pwd)\b"
    r"(?:(?:\s+[\w.@\-]+){1,5}?\s*(?::|\s(?:is|was)\s)|\s*(?:\s(?:is|was|are)\s|:|=|\s))\s*"
    r"(?P<q>[\"'`]?)(?P<secret>[^\s\"'`]+?)(?P=q)(?=[\s,;)]|$|[.,;:](?:\s|$))",
    re.IGNORECASE,
)


def _basic(value: str) -> bool:
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    user, sep, password = text.partition(":")
    return bool(sep) and text.isprintable() and not _weak(password)


def _token(value: str) -> bool:
    return (
        len(value) >= 16
        and not is_placeholder(value)
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


def _strong(value: str) -> bool:
    """A password written in prose: not plain (see `_weak`), at least 6 characters, a letter
    and a digit or symbol, and not a path, a URL or an option."""
    v = value
    return (
        len(v) >= 6
        and not _weak(v)
        and any(c.isalpha() for c in v)
        and any(not c.isalpha() for c in v)
        and not v.startswith(("/", "~", "./", "-", "http:", "https:"))
        and "://" not in v
    )


def forms(line: str) -> Iterator[tuple[str, str, int, int]]:
    """(kind, label, start, end) of each credential the readings find in `line`."""
    for m in _URL.finditer(line):
        # `host.example:4443/path@sha256:...`: a port and a path, not a password
        if not _weak(m.group("secret")) and _PORT_PATH.match(m.group("secret")) is None:
            yield "url-password", "Password in URL", m.start("secret"), m.end("secret")
    for m in _USER_FLAG.finditer(line):
        pair = f"{m.group('user')}:{m.group('secret')}"
        if not _weak(m.group("secret")) and not is_placeholder(pair):
            yield "command-line-password", "Password on a command line", *m.span("secret")
    for m in _LONG_FLAG.finditer(line):
        if not _weak(m.group("secret")):
            yield "command-line-password", "Password on a command line", *m.span("secret")
    if _NAMES_USER.search(line):
        for m in _SHORT_P.finditer(line):
            value = m.group("secret")
            if not _weak(value) and "/" not in value and not re.fullmatch(r"[\d:.]+", value):
                yield "command-line-password", "Password on a command line", *m.span("secret")
    for m in _AUTH.finditer(line):
        scheme, value = m.group("scheme").lower(), m.group("secret")
        if _basic(value) if scheme == "basic" else _token(value):
            yield "authorization-header", "Authorization header", *m.span("secret")
    for m in _PROSE.finditer(line):
        value = m.group("secret")
        if _strong(value):
            yield "prose-password", "Password in prose", *m.span("secret")
