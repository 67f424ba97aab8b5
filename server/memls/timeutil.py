"""Time stamps: one fixed UTC text form, so that SQLite compares them as text."""

from __future__ import annotations

from datetime import datetime, timezone

from memls.errors import InvalidInput

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def now() -> str:
    return format_ts(datetime.now(timezone.utc))


def format_ts(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime(_FORMAT)


def parse_ts(text: str, *, field: str) -> str:
    """Parse ISO 8601 (a date, or a date and time; no zone means UTC) into the stored form."""
    value = text.strip() if isinstance(text, str) else text
    if not isinstance(value, str) or not value:
        raise InvalidInput("expected an ISO 8601 date or date-time", field=field)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(
            f"{text!r} is not an ISO 8601 date or date-time (e.g. 2025-03-01 or "
            "2025-03-01T12:00:00Z)",
            field=field,
        ) from None
    return format_ts(moment)


FOREVER = 2**62
"""Micro-seconds standing for 'no end' (valid_until / invalidated_at NULL) in numeric filters."""


def to_micros(stamp: str | None) -> int:
    """A stored time stamp as integer micro-seconds since the epoch (None -> FOREVER)."""
    if stamp is None:
        return FOREVER
    moment = datetime.strptime(stamp, _FORMAT).replace(tzinfo=timezone.utc)
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
