"""Documented example credentials: values a vendor publishes to show a format, which anyone can
read in its documentation and which open nothing. Every reader's finding passes through
`is_documented` (detector.py), so this is the one place that says what they are:

- a value marked as an example: `example`, `sample` or `fake` in it, in any case, as AWS
  marks its documented keys (`AKIAIOSFODNN7EXAMPLE`, `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`)
  and as gitleaks' (`.+EXAMPLE$`), TruffleHog's (`example`, `sample`), detect-secrets'
  (`fake`) and Kingfisher's allowlists read them (a random 40-character key holds `fake`
  about once in twenty-five thousand, `sample` once in twenty-five million, `example` once in
  a billion);
- a JSON Web Token signed with a secret a vendor publishes (jwt.io's debugger signs its
  example tokens with `your-256-bit-secret`, and since 2025 with
  `a-string-secret-at-least-256-bits-long`): whoever reads the page can sign the same, so
  the token proves nothing. The signature is checked, so a real token that only borrows an
  example's header is still found.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re

__all__ = ["is_documented"]

_MARKER = re.compile("example|sample|fake", re.IGNORECASE)
_PUBLISHED_JWT_SECRETS = (b"your-256-bit-secret", b"a-string-secret-at-least-256-bits-long")
_HMAC = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}
_JWT = re.compile(r"(eyJ[\w-]*)\.(eyJ[\w-]*)\.([\w-]+)")


def _b64url(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _signed_with_published_secret(value: str) -> bool:
    m = _JWT.search(value)
    if m is None:
        return False
    header, payload, signature = m.groups()
    try:
        alg = json.loads(_b64url(header)).get("alg")
        given = _b64url(signature)
    except (binascii.Error, ValueError, UnicodeDecodeError, AttributeError):
        return False
    digest = _HMAC.get(alg) if isinstance(alg, str) else None
    if digest is None:
        return False
    signed = f"{header}.{payload}".encode()
    return any(
        hmac.compare_digest(hmac.new(key, signed, digest).digest(), given)
        for key in _PUBLISHED_JWT_SECRETS
    )


def is_documented(value: str) -> bool:
    """A vendor's documented example: marked `EXAMPLE`, `SAMPLE` or `FAKE`, or a JWT signed
    with a published example secret."""
    return _MARKER.search(value) is not None or _signed_with_published_secret(value)
