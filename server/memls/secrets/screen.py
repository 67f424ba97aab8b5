"""The write paths' check: refuse a text that holds a secret (InvalidInput naming the kind and
where, so nothing is written), or return it redacted when redaction was asked."""

from __future__ import annotations

from memls.errors import InvalidInput
from memls.secrets.detector import Finding, find, redact


def where(text: str, finding: Finding) -> str:
    """ "line L, column C" (1-based) of a finding in `text`."""
    line_start = text.rfind("\n", 0, finding.start) + 1
    return f"line {finding.line + 1}, column {finding.start - line_start + 1}"


def refusal(text: str, findings: list[Finding], field: str, *, prefix: str = "") -> InvalidInput:
    first = findings[0]
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    return InvalidInput(
        f"{prefix}holds a secret: {first.label} ({first.kind}) at {where(text, first)}{more}; "
        f"nothing was stored. Remove it, or ask for redaction (--redact, redact: true, or "
        f'[privacy] secrets = "redact") to store it as [REDACTED:{first.kind}]',
        field=field,
    )


def screen(text: str, field: str, *, redact_it: bool, prefix: str = "") -> str:
    """`text` unchanged when it holds no secret; redacted when `redact_it`; else refused."""
    findings = find(text)
    if not findings:
        return text
    if not redact_it:
        raise refusal(text, findings, field, prefix=prefix)
    return redact(text, findings)
